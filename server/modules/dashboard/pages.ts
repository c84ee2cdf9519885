import { html, type HtmlValue, type SafeHtml } from '../../lib/html.ts'
import { ASSETS } from '../portal/assets.ts'
import type { PostResponseBody } from '../posts/queries.ts'
import type { InboxItem } from '../inbox/queries.ts'
import { DASHBOARD, postPath, wsPath } from './links.ts'

// The dashboard's server-rendered pages: every action is a plain form (POST, then a redirect), so each
// works without script. Every value goes through `html` (escaped); the only stylesheet is the portal's.

export interface Shell {
  title: string
  /** The keyboard script's hashed URL (script.ts). */
  script?: string
  slug?: string
  csrf: string
  notice?: string
  error?: string
}

/** The settings pages of issue 35 (settings/*.ts), one nav entry each. */
const SETTINGS_NAV = [['members', 'Members'], ['api-keys', 'API keys'], ['webhooks', 'Webhooks'], ['widget', 'Widget'], ['boards', 'Boards'], ['integrations', 'Integrations'], ['branding', 'Branding'], ['data', 'Workspace data'], ['account', 'Account']] as const
export { DASHBOARD, postPath, wsPath }

export function page(shell: Shell, content: HtmlValue): SafeHtml {
  const nav = shell.slug
    ? html`<nav aria-label="Dashboard"><ul><li><a href="${wsPath(shell.slug)}">Inbox</a></li><li><a href="${wsPath(shell.slug)}/changelog">Changelog</a></li><li><a href="${wsPath(shell.slug)}/moderation">Moderation</a></li><li><a href="/portal/${shell.slug}">Public portal</a></li>${SETTINGS_NAV.map(([section, label]) => html`<li><a href="${wsPath(shell.slug!)}/settings/${section}">${label}</a></li>`)}<li><a href="${DASHBOARD}">Workspaces</a></li></ul></nav>`
    : ''
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${shell.title} · Chorus</title>
<link rel="stylesheet" href="${ASSETS['portal.css'].path}">
${shell.script && html`<script src="${shell.script}" defer></script>`}
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="wrap"><a class="brand" href="${DASHBOARD}"><span>Chorus</span></a>${nav}</div></header>
<main id="main" class="wrap">
${shell.notice && html`<p class="notice" role="status">${shell.notice}</p>`}
${shell.error && html`<div class="alert" role="alert" id="form-error">${shell.error}</div>`}
${content}
</main></body></html>`
}

export const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`

export function pickerPage(shell: Shell, workspaces: { slug: string; name: string; role: string }[], typed: { name?: string; slug?: string } = {}, invitations: { slug: string; name: string; role: string }[] = []) {
  return page(shell, html`<h1>Your workspaces</h1>
${invitations.length ? html`<h2>Invitations</h2><ul>${invitations.map((w) => html`<li>${w.name} invites you as ${w.role}. <form method="post" action="${DASHBOARD}/invitations/${w.slug}/accept" class="inline">${csrfField(shell.csrf)}<button class="btn" type="submit" aria-label="Accept the invitation to ${w.name}">Accept</button></form></li>`)}</ul>` : ''}
${workspaces.length ? html`<ul>${workspaces.map((w) => html`<li><a href="${wsPath(w.slug)}">${w.name}</a> (${w.role})</li>`)}</ul>` : html`<p>You are not in a workspace yet. Create one to start.</p>`}
<h2>Create a workspace</h2>
<form method="post" action="${DASHBOARD}/workspaces">${csrfField(shell.csrf)}
<p><label for="ws-name">Name</label><input id="ws-name" name="name" required maxlength="80" value="${typed.name ?? ''}"></p>
<p><label for="ws-slug">Address (slug)</label><input id="ws-slug" name="slug" required pattern="[a-z0-9]+(-[a-z0-9]+)*" maxlength="48" value="${typed.slug ?? ''}"${shell.error ? html` aria-describedby="form-error"` : ''}></p>
<p><button class="btn" type="submit">Create workspace</button></p></form>`)
}

export interface InboxPageData {
  items: InboxItem[]
  total: number
  page: number
  totalPages: number
  query: Record<string, string>
  statuses: string[]
  labels: string[]
  boards: string[]
  members: { id: string; name: string }[]
  /** The onboarding checklist (settings/checklist.ts), empty once every step is done. */
  checklist?: SafeHtml
  views: { id: string; name: string; filters: Record<string, string | number | boolean>; shared: boolean; mine: boolean; mayDelete: boolean }[]
}

export const option = (value: string, label: string, selected: string | undefined) => html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`

export function inboxPage(shell: Shell & { slug: string }, data: InboxPageData) {
  const q = data.query
  const pageLink = (n: number) => `${wsPath(shell.slug)}?${new URLSearchParams({ ...q, page: String(n) })}`
  const rows = data.items.map((post) => html`<tr${post.unread ? html` class="unread"` : ''} data-post-id="${post.id}">
<td><input type="checkbox" name="post_ids" value="${post.id}" form="bulk" aria-label="Select ${post.title}"></td>
<td>${post.unread ? html`<span class="badge" title="Unread">New</span> ` : ''}<a href="${postPath(shell.slug, post.id)}">${post.title}</a></td>
<td>${post.status}</td><td>${post.board}</td><td>${post.votes}</td><td>${post.labels.join(', ')}</td></tr>`)
  return page(shell, html`<h1>Inbox</h1>
${data.checklist}
<form method="get" action="${wsPath(shell.slug)}" role="search" class="filters">
<p><label for="q">Search</label><input id="q" name="q" type="search" value="${q.q ?? ''}" maxlength="200"></p>
<p><label for="f-status">Status</label><select id="f-status" name="status">${option('', 'Any', q.status)}${data.statuses.map((s) => option(s, s, q.status))}</select></p>
<p><label for="f-board">Board</label><select id="f-board" name="board">${option('', 'Any', q.board)}${data.boards.map((b) => option(b, b, q.board))}</select></p>
<p><label for="f-label">Label</label><select id="f-label" name="label">${option('', 'Any', q.label)}${data.labels.map((l) => option(l, l, q.label))}</select></p>
<p><label for="f-owner">Owner</label><select id="f-owner" name="owner">${option('', 'Anyone', q.owner)}${option('me', 'Me', q.owner)}${option('unassigned', 'Unassigned', q.owner)}${data.members.map((m) => option(m.id, m.name, q.owner))}</select></p>
<p><label for="f-sort">Sort</label><select id="f-sort" name="sort">${option('new', 'Newest', q.sort)}${option('top', 'Top', q.sort)}${option('trending', 'Trending', q.sort)}${option('oldest_unanswered', 'Oldest unanswered', q.sort)}</select></p>
<p><label for="f-days">No activity for (days)</label><input id="f-days" name="stale_days" type="number" min="1" max="3650" inputmode="numeric" value="${q.stale_days ?? ''}"></p>
<p><label><input type="checkbox" name="unanswered" value="true"${q.unanswered === 'true' ? html` checked` : ''}> Unanswered by the team</label></p>
<p><label><input type="checkbox" name="verified" value="true"${q.verified === 'true' ? html` checked` : ''}> Verified authors only</label></p>
<p><button class="btn" type="submit">Filter</button></p></form>
${savedViews(shell, data)}
<p id="inbox-count">${data.total} post${data.total === 1 ? '' : 's'}.</p>
<table class="inbox"><thead><tr><th scope="col"><span class="sr">Select</span></th><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Board</th><th scope="col">Votes</th><th scope="col">Labels</th></tr></thead>
<tbody>${rows}</tbody></table>
${data.items.length === 0 ? html`<p>No posts match.</p>` : ''}
<nav aria-label="Pages">${data.page > 1 ? html`<a href="${pageLink(data.page - 1)}" rel="prev">Previous</a> ` : ''}Page ${data.page} of ${Math.max(1, data.totalPages)}${data.page < data.totalPages ? html` <a href="${pageLink(data.page + 1)}" rel="next">Next</a>` : ''}</nav>
<h2>Change the selected posts</h2>
<form method="post" action="${wsPath(shell.slug)}/bulk" id="bulk">${csrfField(shell.csrf)}
<p><label for="b-status">New status</label><select id="b-status" name="status">${option('', 'Keep', undefined)}${data.statuses.map((s) => option(s, s, undefined))}</select></p>
<p><label for="b-message">Message to voters</label><textarea id="b-message" name="status_message" maxlength="5000"></textarea></p>
<p><label for="b-label">Add label</label><select id="b-label" name="add_label">${option('', 'None', undefined)}${data.labels.map((l) => option(l, l, undefined))}</select></p>
<p><label for="b-owner">Owner</label><select id="b-owner" name="owner_user_id">${option('', 'Keep', undefined)}${option('none', 'Unassigned', undefined)}${data.members.map((m) => option(m.id, m.name, undefined))}</select></p>
<p><button class="btn" type="submit">Apply to selected</button></p></form>`)
}

function savedViews(shell: Shell & { slug: string }, data: InboxPageData) {
  const link = (filters: Record<string, unknown>) => `${wsPath(shell.slug)}${Object.keys(filters).length ? `?${new URLSearchParams(Object.entries(filters).map(([k, v]) => [k, String(v)]))}` : ''}`
  return html`<section aria-labelledby="views-h" class="views"><h2 id="views-h">Saved views</h2>
${data.views.length ? html`<ul>${data.views.map((view) => html`<li><a href="${link(view.filters)}">${view.name}</a>${view.shared ? html` <span class="badge">Shared</span>` : ''}${view.mayDelete ? html` <form method="post" action="${wsPath(shell.slug)}/views/${view.id}/delete" class="inline">${csrfField(shell.csrf)}<button class="btn plain" type="submit" aria-label="Delete view ${view.name}">Delete</button></form>` : ''}</li>`)}</ul>` : html`<p>No saved views yet.</p>`}
<details><summary>Save these filters as a view</summary>
<form method="post" action="${wsPath(shell.slug)}/views">${csrfField(shell.csrf)}${Object.entries(data.query).map(([key, value]) => html`<input type="hidden" name="${key}" value="${value}">`)}
<p><label for="v-name">View name</label><input id="v-name" name="name" maxlength="80" required></p>
<p><label><input type="checkbox" name="shared" value="yes"> Share with the team</label></p>
<p><button class="btn" type="submit">Save view</button></p></form></details></section>`
}

export interface PostPageData {
  post: PostResponseBody
  statuses: string[]
  labels: string[]
  boards: string[]
  members: { id: string; name: string }[]
  history: { from: string | null; to: string; at: string }[]
  comments: { author: string; body: string; internal: boolean; at: string }[]
  voters: { name: string; verified: boolean }[]
  typed?: Record<string, string>
  field?: string
}

export function postPage(shell: Shell & { slug: string }, data: PostPageData) {
  const { post } = data
  const action = (name: string) => `${postPath(shell.slug, post.id)}/${name}`
  const typed = data.typed ?? {}
  const invalid = (name: string) => (data.field === name ? html` aria-invalid="true" aria-describedby="form-error"` : '')
  return page(shell, html`<p><a href="${wsPath(shell.slug)}">Back to the inbox</a></p>
<h1>${post.title}</h1>
<p>By ${post.author.name}${post.verified ? html` <span class="badge">Verified</span>` : html` <span class="badge">Unverified</span>`} · ${post.board} · ${post.votes} votes${post.merged_into ? html` · merged into <a href="${postPath(shell.slug, post.merged_into)}">${post.merged_into}</a>` : ''}</p>
<section aria-labelledby="edit-h"><h2 id="edit-h">Edit</h2>
<form method="post" action="${action('edit')}">${csrfField(shell.csrf)}<input type="hidden" name="updated_at" value="${typed.updated_at ?? post.updated_at}">
<p><label for="p-title">Title</label><input id="p-title" name="title" maxlength="200" value="${typed.title ?? post.title}"${invalid('title')}></p>
<p><label for="p-body">Details</label><textarea id="p-body" name="body" rows="6"${invalid('body')}>${typed.body ?? post.body}</textarea></p>
<p><button class="btn" type="submit">Save</button></p></form></section>
<section aria-labelledby="status-h"><h2 id="status-h">Status</h2>
<form method="post" action="${action('status')}">${csrfField(shell.csrf)}
<p><label for="p-status">Status</label><select id="p-status" name="status">${data.statuses.map((s) => option(s, s, post.status))}</select></p>
<p><label for="p-message">Message to voters (optional)</label><textarea id="p-message" name="status_message" maxlength="5000">${typed.status_message ?? ''}</textarea></p>
<p><button class="btn" type="submit">Change status</button></p></form>
<ol class="history">${data.history.map((h) => html`<li>${h.from ? html`${h.from} → ` : ''}${h.to} <time datetime="${h.at}">${h.at.slice(0, 10)}</time></li>`)}</ol></section>
<section aria-labelledby="triage-h"><h2 id="triage-h">Triage</h2>
<form method="post" action="${action('assign')}">${csrfField(shell.csrf)}
<p><label for="p-owner">Owner</label><select id="p-owner" name="owner_user_id">${option('none', 'Unassigned', post.owner_user_id ?? 'none')}${data.members.map((m) => option(m.id, m.name, post.owner_user_id ?? 'none'))}</select> <button class="btn" type="submit">Assign</button></p></form>
<form method="post" action="${action('labels')}">${csrfField(shell.csrf)}<fieldset><legend>Labels</legend>
${data.labels.map((l) => html`<label><input type="checkbox" name="labels" value="${l}"${post.labels.includes(l) ? html` checked` : ''}> ${l}</label> `)}
<button class="btn" type="submit">Save labels</button></fieldset></form>
<form method="post" action="${action('move')}">${csrfField(shell.csrf)}
<p><label for="p-board">Board</label><select id="p-board" name="board">${data.boards.map((b) => option(b, b, post.board))}</select> <button class="btn" type="submit">Move</button></p></form>
<form method="post" action="${action('merge')}">${csrfField(shell.csrf)}
<p><label for="p-merge">Merge into (post id or search)</label><input id="p-merge" name="into" value="${typed.into ?? ''}"${invalid('into')}> <button class="btn" type="submit">Merge</button></p></form></section>
<section aria-labelledby="talk-h"><h2 id="talk-h">Conversation</h2>
<ol class="comments">${data.comments.map((c) => html`<li class="${c.internal ? 'internal' : 'public'}"><p><strong>${c.author}</strong> ${c.internal ? html`<span class="badge">Internal note</span>` : html`<span class="badge">Public reply</span>`} <time datetime="${c.at}">${c.at.slice(0, 10)}</time></p><p>${c.body}</p></li>`)}</ol>
<form method="post" action="${action('reply')}">${csrfField(shell.csrf)}
<p><label for="p-reply">Public reply (voters and the author see it)</label><textarea id="p-reply" name="body" maxlength="10000"${invalid('reply')}>${typed.reply ?? ''}</textarea></p>
<p><button class="btn" type="submit">Reply</button></p></form>
<form method="post" action="${action('note')}">${csrfField(shell.csrf)}
<p><label for="p-note">Internal note (only the team sees it)</label><textarea id="p-note" name="body" maxlength="10000"${invalid('note')}>${typed.note ?? ''}</textarea></p>
<p><button class="btn plain" type="submit">Add internal note</button></p></form></section>
<section aria-labelledby="voters-h"><h2 id="voters-h">Voters</h2>
<ul>${data.voters.map((v) => html`<li>${v.name}${v.verified ? '' : ' (unverified)'}</li>`)}</ul></section>
<section aria-labelledby="delete-h"><h2 id="delete-h">Delete</h2>
<form method="post" action="${action('delete')}">${csrfField(shell.csrf)}
<p><label><input type="checkbox" name="confirm" value="yes" required> Yes, delete this post with its comments and votes</label></p>
<p><button class="btn" type="submit">Delete post</button></p></form></section>`)
}
