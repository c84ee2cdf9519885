import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { LabelCreate, LabelParams, LabelResponse, LabelUpdate, toLabelResponse } from './model.ts'
import * as labels from './service.ts'
import { WorkspaceHeader } from '../../lib/schema.ts'

const tags = ['Labels']

export const labelsModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/labels' })
    .use(authPlugin(ctx))
    .get('', async ({ workspace }) => (await labels.listLabels(ctx.db, workspace.id)).map(toLabelResponse), {
      headers: WorkspaceHeader,
      workspace: { scope: 'labels:read' },
      response: { 200: t.Array(LabelResponse) },
      detail: { operationId: 'listLabels', tags, summary: 'Labels of the workspace, by name', description: 'With an API key (`labels:read`) or a dashboard session; sorted by name. Not paged: a workspace has few labels.' },
    })
    .post('', async ({ workspace, body, set }) => {
      const label = await labels.createLabel(ctx.db, workspace.id, body)
      set.status = 201
      return toLabelResponse(label)
    }, {
      headers: WorkspaceHeader,
      body: LabelCreate,
      workspace: { scope: 'labels:write' },
      response: { 201: LabelResponse },
      detail: { operationId: 'createLabel', tags, summary: 'Create a label', description: 'A slug already used by a label of the workspace is 409 SLUG_TAKEN.' },
    })
    .patch('/:label_id', async ({ workspace, params, body }) => toLabelResponse(await labels.updateLabel(ctx.db, workspace.id, params.label_id, body)), {
      params: LabelParams,
      headers: WorkspaceHeader,
      body: LabelUpdate,
      workspace: { scope: 'labels:write' },
      response: { 200: LabelResponse },
      detail: { operationId: 'updateLabel', tags, summary: 'Rename, re-slug or recolor a label', description: 'Renaming keeps the slug unless a new one is sent. `color: null` clears the color. A taken slug is 409 SLUG_TAKEN.' },
    })
    .delete('/:label_id', async ({ workspace, params, set }) => {
      await labels.deleteLabel(ctx.db, workspace.id, params.label_id)
      set.status = 204
    }, {
      params: LabelParams,
      headers: WorkspaceHeader,
      workspace: { scope: 'labels:write' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteLabel', tags, summary: 'Delete a label; posts lose it and stay', description: 'With an API key (`labels:write`) or a dashboard session. The posts that carried the label lose it and stay. An unknown id is 404 NOT_FOUND.' },
    })
