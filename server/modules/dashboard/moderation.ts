import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { html } from '../../lib/html.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { approvePost, listHeld, moderationMode, rejectPost } from '../moderation/service.ts'
import { dashboardHtml, seeOther, type WorkspaceViewer } from './context.ts'
import { DASHBOARD, csrfField, page, postPath, wsPath } from './pages.ts'
import { formRoute, hidden, noticeOf, dashboardGuards, withNotice } from './guard.ts'
import { dashboardScript } from './script.ts'

// The held queue (docs/moderation.md): every held post with the rules that held it, and an Approve and a
// Reject button each, plain forms over the same services as POST /workspaces/{slug}/moderation/{id}/approve|reject.

const moderationPath = (slug: string) => `${wsPath(slug)}/moderation`
const MODES = { off: 'Off: nothing is held.', suspicious: 'Suspicious: posts by anonymous and unconfirmed visitors scoring 5 or more are held.', anonymous: 'All anonymous: every post by an anonymous or unconfirmed visitor is held.' }

export const dashboardModeration = (ctx: AppContext) => {
  const { inWorkspace } = dashboardGuards(ctx)

  async function queuePage(viewer: WorkspaceViewer, notice?: string) {
    const held = await listHeld(ctx.db, viewer.workspace.id, { page: 1, perPage: 100, offset: 0 })
    const slug = viewer.workspace.slug
    const shell = { title: 'Moderation', slug, csrf: viewer.csrf, script: (await dashboardScript()).path, notice }
    return dashboardHtml(page(shell, html`<h1>Moderation</h1>
<p>${MODES[moderationMode(viewer.workspace)]} Change it with <code>settings.moderation</code> (PATCH /api/v1/workspaces/${slug}).</p>
${held.items.length ? html`<p>${held.total} held, newest first.</p><ul class="entries">${held.items.map(({ post, score, reasons }) => html`<li class="card"><h2><a href="${postPath(slug, post.id)}">${post.title}</a></h2>
<p class="muted">Score ${score ?? '–'}${reasons.length ? html`: ${reasons.join(', ')}` : ''} · <time datetime="${post.created_at}">${post.created_at.slice(0, 16).replace('T', ' ')}</time></p>
${post.body ? html`<p>${post.body.slice(0, 500)}</p>` : ''}
<form method="post" action="${moderationPath(slug)}/${post.id}/approve" class="inline">${csrfField(viewer.csrf)}<button class="btn" type="submit" aria-label="Approve ${post.title}">Approve</button></form>
<form method="post" action="${moderationPath(slug)}/${post.id}/reject" class="inline">${csrfField(viewer.csrf)}<button class="btn plain" type="submit" aria-label="Reject ${post.title}">Reject</button></form></li>`)}</ul>`
      : html`<p>Nothing is waiting for review.</p>`}`))
  }

  return new Elysia({ name: 'dashboard-moderation' })
    .use(requestPlugin(ctx))
    .get(`${DASHBOARD}/:workspace_slug/moderation`, inWorkspace(async (viewer, { query }) => queuePage(viewer, noticeOf(query))), hidden)
    .post(`${DASHBOARD}/:workspace_slug/moderation/:post_id/approve`, inWorkspace(async (viewer, { params }) => {
      const post = await approvePost(ctx.db, viewer.workspace.id, params.post_id!)
      return seeOther(withNotice(moderationPath(viewer.workspace.slug), `Approved: ${post.title}`))
    }), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/moderation/:post_id/reject`, inWorkspace(async (viewer, { params }) => {
      await rejectPost(ctx.db, viewer.workspace.id, params.post_id!)
      return seeOther(withNotice(moderationPath(viewer.workspace.slug), 'Rejected: the post is deleted'))
    }), formRoute)
}
