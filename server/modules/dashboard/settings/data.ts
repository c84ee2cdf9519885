import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { invalid } from '../../../errors.ts'
import { html } from '../../../lib/html.ts'
import { roleAllows } from '../../../plugins/auth.ts'
import { eraseWorkspace } from '../../erasure/service.ts'
import { workspaceSections } from '../../exports/sections.ts'
import { exportHeaders, exportStream } from '../../exports/service.ts'
import type { WorkspaceViewer } from '../context.ts'
import { DASHBOARD } from '../pages.ts'
import { csrfField, formText, hidden, settingsPage, settingsPath, settingsRoutes, type Refusal } from './common.ts'

// Settings: workspace data (issue 35, page 8). The owner downloads the same stream as GET
// /workspaces/{slug}/export and deletes through eraseWorkspace (DELETE /workspaces/{slug}), after typing
// the workspace's address; both work on a lapsed subscription, as the API's routes do.

export const dataSettingsModule = (ctx: AppContext) => {
  const routes = settingsRoutes(ctx)
  const path = `${DASHBOARD}/:workspace_slug/settings/data`

  async function render(viewer: WorkspaceViewer, refusal: Refusal) {
    const ws = viewer.workspace
    const base = settingsPath(ws.slug, 'data')
    const owner = roleAllows(viewer.member.role, 'owner')
    return settingsPage(viewer, 'Workspace data', refusal, html`<h1>Workspace data</h1>
${ctx.config.billing && html`<section aria-labelledby="plan-h"><h2 id="plan-h">Subscription</h2>
<p>Plan: ${ws.plan}${ws.comped ? ' (complimentary)' : ''}. State: ${ws.subscriptionStatus.replace('_', ' ')}${ws.currentPeriodEnd ? html`, current period ends <time datetime="${ws.currentPeriodEnd.toISOString()}">${ws.currentPeriodEnd.toISOString().slice(0, 10)}</time>` : ''}.</p></section>`}
${owner ? html`<section aria-labelledby="export-h"><h2 id="export-h">Export</h2>
<p>Everything in the workspace as one JSON file: members, boards, statuses, labels, end users, posts, comments, votes, status history, webhooks, API keys and changelog (no secrets or key hashes).</p>
<p><a class="btn" href="${base}/export" download>Download export</a></p></section>
<section aria-labelledby="delete-h"><h2 id="delete-h">Delete the workspace</h2>
<p>Deletes “${ws.name}” at once and for good: every board, post, comment, vote, end user, webhook, API key and uploaded file, and every member's access. Download the export first.</p>
<form method="post" action="${base}/delete">${csrfField(viewer.csrf)}
<p><label for="confirm-slug">Type the workspace address, ${ws.slug}, to confirm</label><input id="confirm-slug" name="confirm" required autocomplete="off"${refusal.field === 'confirm' ? html` aria-invalid="true" aria-describedby="form-error"` : ''}></p>
<p><button class="btn" type="submit">Delete workspace ${ws.slug}</button></p></form></section>`
  : html`<p>Only the workspace owner can export or delete the workspace.</p>`}`)
  }

  return new Elysia({ name: 'dashboard-settings-data' })
    .get(path, routes.view('member', render), hidden)
    .get(`${path}/export`, routes.view('owner', async (viewer) =>
      new Response(exportStream(ctx, 'chorus-workspace-export', workspaceSections(viewer.workspace.id)), { headers: exportHeaders(viewer.workspace.slug) })), hidden)
    .post(`${path}/delete`, routes.action({ role: 'owner', section: 'data', render, gate: false }, async (viewer, { body }) => {
      if (formText(body.confirm).trim() !== viewer.workspace.slug) throw invalid(['body', 'confirm'], `Type ${viewer.workspace.slug} exactly to delete the workspace.`)
      await eraseWorkspace(ctx, viewer.workspace.id)
      return new Response(null, { status: 303, headers: { location: `${DASHBOARD}?${new URLSearchParams({ done: `Workspace ${viewer.workspace.slug} deleted` })}`, 'cache-control': 'no-store' } })
    }), { parse: 'urlencoded', ...hidden })
}
