import { html, trustedHtml } from '../../lib/html.ts'
import { portalChangelogPath } from '../portal/links.ts'
import { csrfField, page, postPath, wsPath, type Shell } from './pages.ts'

// The changelog pages: the list with a new-draft form, and one entry's page (edit, preview, publish,
// unpublish). The preview is the service's own Markdown rendering (lib/markdown.ts: raw HTML escaped,
// only safe links), the one trusted markup on these pages, as on the portal's changelog.

export interface EntryRow { id: string; title: string; body: string; published_at: string | null; post_ids: string[] }
export interface EntryForm { title: string; body: string; post_ids: string }
export interface LinkedPost { id: string; title: string }

export const changelogPath = (slug: string, entryId?: string) => `${wsPath(slug)}/changelog${entryId ? `/${entryId}` : ''}`

function entryForm(shell: Shell & { slug: string }, action: string, typed: EntryForm, submit: string, preview?: string, field?: string) {
  const invalid = (name: string) => (field === name ? html` aria-invalid="true" aria-describedby="form-error"` : '')
  return html`<form method="post" action="${action}" class="entry-form">${csrfField(shell.csrf)}
<p><label for="c-title">Title</label><input id="c-title" name="title" maxlength="200" value="${typed.title}"${invalid('title')}></p>
<p><label for="c-body">Text (Markdown)</label><textarea id="c-body" name="body" rows="8"${invalid('body')}>${typed.body}</textarea></p>
<p><label for="c-posts">Linked post ids (space-separated)</label><input id="c-posts" name="post_ids" value="${typed.post_ids}"${invalid('post_ids')}></p>
<p><button class="btn" type="submit">${submit}</button> <button class="btn plain" type="submit" name="intent" value="preview">Preview</button></p></form>
<section aria-labelledby="preview-h" id="preview"${preview === undefined ? html` hidden` : ''}><h2 id="preview-h">Preview</h2><div class="content">${trustedHtml(preview ?? '')}</div></section>`
}

export function changelogPage(shell: Shell & { slug: string }, entries: EntryRow[], typed: EntryForm = { title: '', body: '', post_ids: '' }, preview?: string, field?: string) {
  return page(shell, html`<h1>Changelog</h1>
<p><a href="${portalChangelogPath(shell.slug)}">The public changelog</a></p>
${entries.length ? html`<ul class="entries">${entries.map((e) => html`<li><a href="${changelogPath(shell.slug, e.id)}">${e.title}</a> ${e.published_at ? html`<span class="badge">Published <time datetime="${e.published_at}">${e.published_at.slice(0, 10)}</time></span>` : html`<span class="badge">Draft</span>`}
${e.published_at ? '' : html`<form method="post" action="${changelogPath(shell.slug, e.id)}/publish" class="inline">${csrfField(shell.csrf)}<button class="btn" type="submit" aria-label="Publish ${e.title}">Publish</button></form>`}</li>`)}</ul>` : html`<p>No entries yet.</p>`}
<h2>New draft</h2>
${entryForm(shell, changelogPath(shell.slug), typed, 'Save draft', preview, field)}`)
}

export function entryPage(shell: Shell & { slug: string }, entry: EntryRow, linked: LinkedPost[], typed?: EntryForm, preview?: string, field?: string) {
  const form = typed ?? { title: entry.title, body: entry.body, post_ids: entry.post_ids.join(' ') }
  const action = changelogPath(shell.slug, entry.id)
  return page(shell, html`<p><a href="${changelogPath(shell.slug)}">Back to the changelog</a></p>
<h1>${entry.title}</h1>
<p>${entry.published_at ? html`Published <time datetime="${entry.published_at}">${entry.published_at.slice(0, 10)}</time> · <a href="${portalChangelogPath(shell.slug)}">see it on the public changelog</a>` : 'Draft: only the team sees it.'}</p>
${linked.length ? html`<h2>Linked posts</h2><ul>${linked.map((post) => html`<li><a href="${postPath(shell.slug, post.id)}">${post.title}</a></li>`)}</ul>` : ''}
<h2>Edit</h2>
${entryForm(shell, action, form, 'Save', preview, field)}
<h2>${entry.published_at ? 'Unpublish' : 'Publish'}</h2>
${entry.published_at
    ? html`<form method="post" action="${action}/unpublish">${csrfField(shell.csrf)}<p>It leaves the public changelog and becomes a draft again. Publishing it later e-mails no one twice.</p><p><button class="btn plain" type="submit">Unpublish</button></p></form>`
    : html`<form method="post" action="${action}/publish">${csrfField(shell.csrf)}<p>Publishing moves the linked posts to the completed status and e-mails their voters once.</p><p><button class="btn" type="submit">Publish</button></p></form>`}`)
}
