import { html, trustedHtml, type HtmlValue } from '../../lib/html.ts'
import type { publicChangelog } from '../changelog/public.ts'
import type { PostResponseBody } from '../posts/queries.ts'
import type { publicPost, publicRoadmap } from '../public/service.ts'
import { layout, truncate, type PageContext } from './layout.ts'
import { portalBoardPath, portalChangelogPath, portalPath, portalPostPath } from './links.ts'

type Post = PostResponseBody
type FullPost = Awaited<ReturnType<typeof publicPost>>
type Roadmap = Awaited<ReturnType<typeof publicRoadmap>>

/** What a refused form sent, to fill it in again, and which field was wrong. */
export interface FormState { form: 'post' | 'comment' | 'vote'; values: Record<string, string>; field?: string }

export interface ListState {
  voted: Set<string>
  /** Where a vote form brings the visitor back to (this page, its query included). */
  returnTo: string
}

const KIND_LABEL: Record<string, string> = { planned: 'Planned', in_progress: 'In progress', complete: 'Complete' }

const date = (iso: string) => html`<time datetime="${iso}">${new Date(iso).toLocaleDateString('en', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' })}</time>`
/** A date with its time (UTC, said so): the status history, where several changes can fall on one day. */
const dateTime = (iso: string) => html`<time datetime="${iso}">${new Date(iso).toLocaleString('en', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' })} UTC</time>`
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`
const badge = (post: { status: string; status_kind: string }) => html`<span class="badge k-${post.status_kind}">${post.status}</span>`
const postHref = (ctx: PageContext, id: string) => portalPostPath(ctx.portal.workspace.slug, id)
const canWrite = (ctx: PageContext) => ctx.visitor !== null || ctx.portal.workspace.settings.allow_anonymous

/** The visible count leads the accessible name ("3 votes. Vote for …"), so what is seen is what is announced. */
const voteLabel = (post: Post) => html`<span aria-hidden="true">▲</span><span class="n">${post.votes}</span><span class="sr"> ${post.votes === 1 ? 'vote' : 'votes'}. Vote for ${post.title}</span>`

/** An identified visitor votes in place (a form); anyone else goes to the post page, where the form asks for an e-mail. */
function voteControl(ctx: PageContext, post: Post, list: ListState) {
  if (ctx.visitor) {
    return html`<form class="vote" method="post" action="${postHref(ctx, post.id)}/vote"><input type="hidden" name="csrf" value="${ctx.visitor.csrf}"><input type="hidden" name="return_to" value="${list.returnTo}"><button type="submit" aria-pressed="${list.voted.has(post.id) ? 'true' : 'false'}" data-title="${post.title}">${voteLabel(post)}</button></form>`
  }
  if (!canWrite(ctx)) return html`<p class="votes"><span class="n">${post.votes}</span><span class="sr"> ${post.votes === 1 ? 'vote' : 'votes'}</span></p>`
  return html`<a class="votes" href="${postHref(ctx, post.id)}#vote">${voteLabel(post)}</a>`
}

function postItem(ctx: PageContext, post: Post, list: ListState, headingLevel: 'h2' | 'h3' = 'h3') {
  const heading = headingLevel === 'h2' ? html`<h2><a href="${postHref(ctx, post.id)}">${post.title}</a></h2>` : html`<h3><a href="${postHref(ctx, post.id)}">${post.title}</a></h3>`
  return html`<li class="card post">${voteControl(ctx, post, list)}<div class="body">${heading}
<p class="muted">${badge(post)} · ${plural(post.comment_count, 'comment')} · ${post.author.name}</p>
${post.body && html`<p>${truncate(post.body, 200)}</p>`}</div></li>`
}

const postList = (ctx: PageContext, posts: Post[], list: ListState, empty: string, headingLevel: 'h2' | 'h3' = 'h3') =>
  posts.length ? html`<ul class="list">${posts.map((post) => postItem(ctx, post, list, headingLevel))}</ul>` : html`<p class="muted">${empty}</p>`

/** A labelled field; the one a refused form names gets aria-invalid and points at the message. */
function field(state: FormState | undefined, form: FormState['form'], name: string, label: string, control: (attrs: HtmlValue) => HtmlValue) {
  const invalid = state?.form === form && state.field === name
  const id = `${form}-${name}`
  return html`<div><label for="${id}">${label}</label>${control(html`id="${id}" name="${name}"${invalid ? html` aria-invalid="true" aria-describedby="form-error"` : ''}`)}</div>`
}

const valueOf = (state: FormState | undefined, form: FormState['form'], name: string) => (state?.form === form ? state.values[name] ?? '' : '')

function emailField(ctx: PageContext, state: FormState | undefined, form: FormState['form']) {
  if (ctx.visitor) return html`<p class="muted">Writing as ${ctx.visitor.name ?? 'your signed-in account'}.</p>`
  return html`${field(state, form, 'email', 'Your e-mail address', (attrs) => html`<input ${attrs} type="email" autocomplete="email" required maxlength="254" value="${valueOf(state, form, 'email')}">`)}
<p class="muted">Only the team sees it; we use it to tell you when this changes.</p>`
}

const csrfField = (ctx: PageContext) => ctx.visitor && html`<input type="hidden" name="csrf" value="${ctx.visitor.csrf}">`

const closedNote = (ctx: PageContext) => html`<p class="muted">${ctx.portal.workspace.name} takes feedback from signed-in customers only: open this portal from their product to take part.</p>`

export function homePage(ctx: PageContext, top: Post[], list: ListState) {
  const { workspace, boards } = ctx.portal
  return layout(ctx, { title: `${workspace.name} feedback`, description: `Share ideas with ${workspace.name}, vote on what matters to you, and follow the roadmap.`, path: portalPath(workspace.slug), section: 'home' }, html`
<h1>${workspace.name} feedback</h1>
<p class="muted">Share ideas, vote on what matters to you, and follow what we are building.</p>
<section aria-labelledby="boards-heading"><h2 id="boards-heading">Boards</h2>
${boards.length ? html`<ul class="list">${boards.map((board) => html`<li class="card"><h3><a href="${portalBoardPath(workspace.slug, board.slug)}">${board.name}</a></h3>${board.description && html`<p>${board.description}</p>`}<p class="muted">${plural(board.post_count, 'post')}</p></li>`)}</ul>` : html`<p class="muted">No public boards yet.</p>`}
</section>
<section aria-labelledby="top-heading"><h2 id="top-heading">Top posts</h2>${postList(ctx, top, list, boards.length && canWrite(ctx) ? 'No ideas yet: open a board above and be the first.' : 'No ideas yet.')}</section>`)
}

export interface BoardView {
  board: { slug: string; name: string; description: string | null }
  list: { items: Post[]; page: number; total: number; total_pages: number }
  query: { q: string; status: string; sort: string }
  state?: FormState
}

export function boardPage(ctx: PageContext, view: BoardView, list: ListState) {
  const { workspace, statuses } = ctx.portal
  const { board, query } = view
  const base = portalBoardPath(workspace.slug, board.slug)
  const pageLink = (page: number) => `${base}?${new URLSearchParams({ ...(query.q && { q: query.q }), ...(query.status && { status: query.status }), ...(query.sort && { sort: query.sort }), page: String(page) })}`
  const option = (value: string, label: string, current: string) => html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`
  const { page, total_pages: pages } = view.list
  const state = view.state
  return layout(ctx, { title: board.name, description: board.description ?? `Ideas and requests for ${workspace.name}: vote and comment.`, path: page > 1 ? `${base}?page=${page}` : base, section: 'board' }, html`
<h1>${board.name}</h1>
${board.description && html`<p>${board.description}</p>`}
<form class="filters card" method="get" action="${base}" role="search" aria-label="Filter posts">
<div><label for="q">Search</label><input id="q" name="q" type="search" maxlength="200" value="${query.q}"></div>
<div><label for="status">Status</label><select id="status" name="status">${option('', 'Any status', query.status)}${statuses.map((status) => option(status.name, status.name, query.status))}</select></div>
<div><label for="sort">Sort by</label><select id="sort" name="sort">${option('top', 'Most votes', query.sort || 'top')}${option('new', 'Newest', query.sort || 'top')}${option('trending', 'Trending', query.sort || 'top')}</select></div>
<div><button class="btn" type="submit">Show posts</button></div>
</form>
<h2 id="posts-heading">${plural(view.list.total, 'post')}${query.q && html` matching “${query.q}”`}</h2>
${view.list.items.length || !canWrite(ctx) ? postList(ctx, view.list.items, list, query.q || query.status ? 'No posts match these filters.' : 'No ideas yet.', 'h3') : html`<p class="empty card">${query.q || query.status ? html`No posts match these filters. Try other words, or <a href="#new-post-heading">suggest it</a>.` : html`No ideas yet: be the first. <a href="#new-post-heading">Suggest an idea</a>.`}</p>`}
${pages > 1 && html`<nav class="pages" aria-label="Pages">${page > 1 && html`<a href="${pageLink(page - 1)}" rel="prev">Previous page</a>`}<span>Page ${page} of ${pages}</span>${page < pages && html`<a href="${pageLink(page + 1)}" rel="next">Next page</a>`}</nav>`}
<section aria-labelledby="new-post-heading" class="card"><h2 id="new-post-heading">Suggest an idea</h2>
${canWrite(ctx) ? html`<form class="stack" method="post" action="${base}/posts">${csrfField(ctx)}
${field(state, 'post', 'title', 'Title', (attrs) => html`<input ${attrs} required maxlength="200" value="${valueOf(state, 'post', 'title')}">`)}
${field(state, 'post', 'body', 'Details (optional)', (attrs) => html`<textarea ${attrs} maxlength="20000">${valueOf(state, 'post', 'body')}</textarea>`)}
${emailField(ctx, state, 'post')}
<div><button class="btn" type="submit">Post idea</button></div></form>` : closedNote(ctx)}
</section>`)
}

export function postPage(ctx: PageContext, post: FullPost, list: ListState, state?: FormState) {
  const { workspace, boards } = ctx.portal
  const board = boards.find((candidate) => candidate.slug === post.board)
  const here = postHref(ctx, post.id)
  const anonymousVote = !ctx.visitor && canWrite(ctx) && html`<form class="stack card" id="vote" method="post" action="${here}/vote"><input type="hidden" name="return_to" value="${here}">
${field(state, 'vote', 'email', 'Your e-mail address', (attrs) => html`<input ${attrs} type="email" autocomplete="email" required maxlength="254" value="${valueOf(state, 'vote', 'email')}">`)}
<p class="muted">Voting again with the same address takes the vote back.</p>
<div><button class="btn" type="submit">Vote for this idea</button></div></form>`
  return layout(ctx, { title: post.title, description: truncate(post.body || `${post.title}: an idea for ${workspace.name} with ${plural(post.votes, 'vote')}.`, 160), path: here, section: 'post', type: 'article' }, html`
<nav aria-label="Breadcrumb" class="crumb"><p><a href="${portalBoardPath(workspace.slug, post.board)}"><span aria-hidden="true">← </span>${board?.name ?? post.board}</a></p></nav>
<article class="card">
<div class="post">${voteControl(ctx, post, list)}<div class="body"><h1>${post.title}</h1>
<p class="muted">${badge(post)} · ${post.author.name} · ${date(post.created_at)}</p></div></div>
${post.body && html`<div class="text">${post.body}</div>`}
<p><strong>${plural(post.votes, 'person', 'people')}</strong> voted for this.</p>
</article>
${anonymousVote}
<section aria-labelledby="history-heading"><h2 id="history-heading">Status history</h2>
<ol class="history">${post.status_history.map((change) => html`<li><span class="badge k-${change.status_kind}">${change.status}</span> ${dateTime(change.changed_at)}</li>`)}</ol></section>
<section aria-labelledby="comments-heading" id="comments"><h2 id="comments-heading">${plural(post.comment_count, 'comment')}</h2>
${post.comments.length ? html`<ol class="list">${post.comments.map((comment) => html`<li class="card"><p class="muted"><strong>${comment.author.name}</strong>${comment.author.type === 'team' ? html` <span class="badge team">Team</span>` : ''} · ${date(comment.created_at)}</p><div class="text">${comment.body}</div></li>`)}</ol>` : html`<p class="muted">${canWrite(ctx) ? 'No comments yet: start the conversation below.' : 'No comments yet.'}</p>`}
${canWrite(ctx) ? html`<form class="stack card" method="post" action="${here}/comments">${csrfField(ctx)}
${field(state, 'comment', 'body', 'Add a comment', (attrs) => html`<textarea ${attrs} required maxlength="10000">${valueOf(state, 'comment', 'body')}</textarea>`)}
${emailField(ctx, state, 'comment')}
<div><button class="btn" type="submit">Comment</button></div></form>` : closedNote(ctx)}
</section>`)
}

const EMPTY_COLUMN: Record<string, string> = { planned: 'Nothing planned yet.', in_progress: 'Nothing in progress right now.', complete: 'Nothing shipped yet.' }

/** One card per post: its title as the link, its status in the kind's colour, votes and comments. */
const roadmapCard = (ctx: PageContext, post: Post) => html`<li class="card rm-card"><h3><a href="${postHref(ctx, post.id)}">${post.title}</a></h3>
<p class="muted meta">${badge(post)} <span><span aria-hidden="true">▲ </span>${plural(post.votes, 'vote')}</span> <span>${plural(post.comment_count, 'comment')}</span></p></li>`

export function roadmapPage(ctx: PageContext, roadmap: Roadmap) {
  const { workspace } = ctx.portal
  return layout(ctx, { title: 'Roadmap', description: `What ${workspace.name} has planned, is building and has shipped.`, path: `${portalPath(workspace.slug)}/roadmap`, section: 'roadmap' }, html`
<h1>Roadmap</h1>
<div class="columns">${roadmap.groups.map((group) => html`<section aria-labelledby="col-${group.status_kind}" class="column col-${group.status_kind}"><h2 id="col-${group.status_kind}">${KIND_LABEL[group.status_kind]} <span class="muted">(${group.total})</span></h2>
${group.items.length ? html`<ul class="list">${group.items.map((post) => roadmapCard(ctx, post))}</ul>` : html`<p class="empty card">${EMPTY_COLUMN[group.status_kind]}</p>`}
</section>`)}</div>`)
}

type Changelog = Awaited<ReturnType<typeof publicChangelog>>

/** `body_html` is the changelog service's Markdown rendering (raw HTML escaped, only safe links): the one trusted markup. */
export function changelogPage(ctx: PageContext, changelog: Changelog) {
  const { workspace } = ctx.portal
  const base = portalChangelogPath(workspace.slug)
  const { page, total_pages: pages } = changelog
  return layout(ctx, { title: 'Changelog', description: `What ${workspace.name} has shipped, newest first.`, path: page > 1 ? `${base}?page=${page}` : base, section: 'changelog' }, html`
<h1>Changelog</h1>
${changelog.items.length ? html`<ol class="list">${changelog.items.map((entry) => html`<li class="card entry" id="${entry.id}"><article aria-labelledby="title-${entry.id}">
<h2 id="title-${entry.id}">${entry.title}</h2><p class="muted">${date(entry.published_at)}</p>
<div class="content">${trustedHtml(entry.body_html)}</div>
${entry.posts.length > 0 && html`<p><strong>Shipped:</strong></p><ul>${entry.posts.map((post) => html`<li><a href="${postHref(ctx, post.id)}">${post.title}</a></li>`)}</ul>`}
</article></li>`)}</ol>` : html`<p class="empty card">Nothing shipped yet: what the team ships appears here, newest first.</p>`}
${pages > 1 && html`<nav class="pages" aria-label="Pages">${page > 1 && html`<a href="${base}?page=${page - 1}" rel="prev">Newer entries</a>`}<span>Page ${page} of ${pages}</span>${page < pages && html`<a href="${base}?page=${page + 1}" rel="next">Older entries</a>`}</nav>`}`)
}

export function notFoundPage(ctx: PageContext, message: string) {
  const { workspace } = ctx.portal
  return layout(ctx, { title: 'Not found', description: message, path: portalPath(workspace.slug), section: 'none', noindex: true }, html`
<h1>Page not found</h1><p>${message}</p><p><a href="${portalPath(workspace.slug)}">Back to ${workspace.name} feedback</a></p>`)
}
