import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { UserExport, WorkspaceExport } from './model.ts'
import { userSections, workspaceSections } from './sections.ts'
import { exportHeaders, exportStream } from './service.ts'

const STREAMED = 'Streamed as it is read (memory stays flat at any size) from one consistent snapshot of the database, as a JSON download (`Content-Disposition: attachment`). Times are ISO 8601, names snake_case as in the API. A failure mid-way ends the body early, so the JSON does not parse: try again.'

export const exportsModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/user/export', ({ user }) => new Response(exportStream(ctx, 'chorus-user-export', userSections(user.id)), { headers: exportHeaders('account') }), {
      user: true,
      response: { 200: UserExport },
      detail: { operationId: 'exportUser', tags: ['User'], summary: "Download everything about the signed-in user", description: `Profile, memberships, sessions (no tokens), the posts, comments and votes they wrote in every workspace, notification settings and notifications, API keys they created (no hashes). ${STREAMED}` },
    })
    .get('/workspaces/:workspace_slug/export', ({ workspace }) => new Response(exportStream(ctx, 'chorus-workspace-export', workspaceSections(workspace.id)), { headers: exportHeaders(workspace.slug) }), {
      params: WorkspaceSlugParams,
      workspace: { role: 'owner', gate: false },
      response: { 200: WorkspaceExport },
      detail: { operationId: 'exportWorkspace', tags: ['Workspaces'], summary: 'Download all workspace data (owner only, dashboard only)', description: `The workspace, members, boards, statuses, labels, end users, posts (with label ids), comments, votes, status history, webhooks, API keys and changelog entries; never secrets or hashes (no intake token, webhook secret or key hash). Admins get 403 OWNER_ONLY, API keys 403 DASHBOARD_ONLY. Works on a lapsed subscription. ${STREAMED}` },
    })
