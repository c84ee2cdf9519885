import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { DeleteStatusQuery, StatusCreate, StatusParams, StatusResponse, StatusUpdate, toStatusResponse } from './model.ts'
import * as statuses from './service.ts'
import { WorkspaceHeader, WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['Statuses']

export const statusesModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/statuses', async ({ workspace }) => (await statuses.listStatuses(ctx.db, workspace.id)).map(toStatusResponse), {
      headers: WorkspaceHeader,
      workspace: { scope: 'statuses:read' },
      response: { 200: t.Array(StatusResponse) },
      detail: { operationId: 'listStatuses', tags, summary: 'The workflow statuses, in order', description: 'Exactly one status has `is_default: true`: the one new posts get.' },
    })
    .post('/workspaces/:workspace_slug/statuses', async ({ workspace, body, set }) => {
      const status = await statuses.createStatus(ctx.db, workspace.id, body)
      set.status = 201
      return toStatusResponse(status)
    }, {
      params: WorkspaceSlugParams,
      body: StatusCreate,
      workspace: { role: 'admin' },
      response: { 201: StatusResponse },
      detail: { operationId: 'createStatus', tags, summary: 'Add a status (admin, dashboard only)', description: 'Without `position` it goes last. A name already used in the workspace is 409 CONFLICT.' },
    })
    .patch('/workspaces/:workspace_slug/statuses/:status_id', async ({ workspace, params, body }) => toStatusResponse(await statuses.updateStatus(ctx.db, workspace.id, params.status_id, body)), {
      params: StatusParams,
      body: StatusUpdate,
      workspace: { role: 'admin' },
      response: { 200: StatusResponse },
      detail: { operationId: 'updateStatus', tags, summary: 'Rename, recolor, reorder or make default (admin, dashboard only)', description: 'Moving a status renumbers the others so positions stay 0..n-1. `is_default: true` switches the default in one transaction.' },
    })
    .delete('/workspaces/:workspace_slug/statuses/:status_id', async ({ workspace, member, params, query, set }) => {
      await statuses.deleteStatus(ctx.db, workspace.id, params.status_id, query.move_to, member!.userId)
      set.status = 204
    }, {
      params: StatusParams,
      query: DeleteStatusQuery,
      workspace: { role: 'admin' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteStatus', tags, summary: 'Delete a status (admin, dashboard only)', description: 'The default status cannot be deleted (409 CONFLICT). A status that still has posts needs `move_to`, another status of the workspace; the posts move in the same transaction.' },
    })
