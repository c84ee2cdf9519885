import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { DeletedResponse, toWorkspaceResponse, WorkspaceCreate, WorkspaceResponse, WorkspaceUpdate } from './model.ts'
import * as workspaces from './service.ts'
import { eraseWorkspace } from '../erasure/service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['Workspaces']

export const workspacesModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces' })
    .use(authPlugin(ctx))
    .post('', async ({ user, body, set }) => {
      const workspace = await workspaces.createWorkspace(ctx.db, user.id, body)
      set.status = 201
      return toWorkspaceResponse(workspace, 'owner', ctx.config.baseUrl)
    }, {
      user: true,
      body: WorkspaceCreate,
      response: { 201: WorkspaceResponse },
      detail: { operationId: 'createWorkspace', tags, summary: 'Create a workspace (the caller becomes its owner)', description: 'Starts on the startup plan, trialing for 14 days. A taken slug is 409 SLUG_TAKEN.' },
    })
    .get('', async ({ account }) => {
      if (account.workspace) return [toWorkspaceResponse(account.workspace, null, ctx.config.baseUrl)]
      const rows = await workspaces.workspacesOfUser(ctx.db, account.user!.id)
      return rows.map((row) => toWorkspaceResponse(row.workspace, row.role, ctx.config.baseUrl))
    }, {
      account: { scope: 'workspace:read' },
      response: { 200: t.Array(WorkspaceResponse) },
      detail: { operationId: 'listWorkspaces', tags, summary: "The caller's workspaces", description: "With an API key: exactly the key's workspace. With a session: every workspace the user is an active member of." },
    })
    .get('/:workspace_slug', ({ workspace, member }) => toWorkspaceResponse(workspace, member?.role ?? null, ctx.config.baseUrl), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'workspace:read' },
      response: { 200: WorkspaceResponse },
      detail: { operationId: 'getWorkspace', tags, summary: 'A workspace by slug', description: 'With an API key (`workspace:read`) of this workspace, or a dashboard session of a member. `role` is the member\'s role, null for keys. Another workspace\'s slug is 404 NOT_FOUND.' },
    })
    .patch('/:workspace_slug', async ({ workspace, member, body }) => toWorkspaceResponse(await workspaces.updateWorkspace(ctx.db, workspace, body), member!.role, ctx.config.baseUrl), {
      params: WorkspaceSlugParams,
      body: WorkspaceUpdate,
      workspace: { role: 'admin' },
      response: { 200: WorkspaceResponse },
      detail: { operationId: 'updateWorkspace', tags, summary: 'Update name, slug or settings (admin, dashboard only)', description: 'Dashboard session of an admin (API keys get 403 DASHBOARD_ONLY). A taken slug is 409 SLUG_TAKEN. Settings are merged field by field into the stored ones.' },
    })
    .delete('/:workspace_slug', async ({ workspace }) => {
      await eraseWorkspace(ctx, workspace.id)
      return { status: 'deleted' as const, id: workspace.id }
    }, {
      params: WorkspaceSlugParams,
      workspace: { role: 'owner', gate: false },
      response: { 200: DeletedResponse },
      detail: { operationId: 'deleteWorkspace', tags, summary: 'Delete the workspace and all its data (owner only, dashboard only)', description: 'Hard deletion, at once and for good: webhook deliveries and notifications stop, API keys are revoked, stored files are removed, then every row of the workspace goes in one transaction (members, boards, posts, comments, votes, end users, webhooks and their logs, events, outbox mail about it). No `workspace.deleted` event is sent. Works on a lapsed subscription. Admins get 403 OWNER_ONLY, API keys 403 DASHBOARD_ONLY. Export first with GET /workspaces/{slug}/export.' },
    })
