import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { BoardCreate, BoardResponse, BoardSlugParams, BoardUpdate, toBoardResponse, WorkspaceBoardParams } from './model.ts'
import * as boards from './service.ts'
import { WorkspaceHeader, WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['Boards']

export const boardsModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/boards', async ({ workspace }) => (await boards.listBoards(ctx.db, workspace.id)).map(toBoardResponse), {
      headers: WorkspaceHeader,
      workspace: { scope: 'boards:read' },
      response: { 200: t.Array(BoardResponse) },
      detail: { operationId: 'listBoards', tags, summary: 'Boards of the workspace, private ones included, oldest first', description: 'With an API key (`boards:read`) or a dashboard session. Private boards are included: they are hidden only on the public routes.' },
    })
    // The same list where boards are created, so a client that knows the workspace's slug need not
    // name it in X-Workspace; a key for another workspace gets 404 as on every slug route.
    .get('/workspaces/:workspace_slug/boards', async ({ workspace }) => (await boards.listBoards(ctx.db, workspace.id)).map(toBoardResponse), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'boards:read' },
      response: { 200: t.Array(BoardResponse) },
      detail: { operationId: 'listWorkspaceBoards', tags, summary: 'Boards of the named workspace, private ones included, oldest first', description: 'The list of GET /boards at the address boards are created at: with an API key (`boards:read`) of this workspace or a member\'s dashboard session (no X-Workspace header needed). A workspace the caller is not in is 404 NOT_FOUND.' },
    })
    .get('/boards/:board_slug', async ({ workspace, params }) => toBoardResponse(await boards.getBoard(ctx.db, workspace.id, params.board_slug)), {
      params: BoardSlugParams,
      headers: WorkspaceHeader,
      workspace: { scope: 'boards:read' },
      response: { 200: BoardResponse },
      detail: { operationId: 'getBoard', tags, summary: 'A board by slug', description: 'With an API key (`boards:read`) or a dashboard session. An unknown slug, or a board of another workspace, is 404 NOT_FOUND.' },
    })
    .post('/workspaces/:workspace_slug/boards', async ({ workspace, body, set }) => {
      const board = await boards.createBoard(ctx.db, workspace.id, body)
      set.status = 201
      return toBoardResponse(board)
    }, {
      params: WorkspaceSlugParams,
      body: BoardCreate,
      workspace: { role: 'admin' },
      response: { 201: BoardResponse },
      detail: { operationId: 'createBoard', tags, summary: 'Create a board (admin, dashboard only)', description: 'A slug already used by a board of the workspace is 409 SLUG_TAKEN.' },
    })
    .patch('/workspaces/:workspace_slug/boards/:board_slug', async ({ workspace, params, body }) => toBoardResponse(await boards.updateBoard(ctx.db, workspace.id, params.board_slug, body)), {
      params: WorkspaceBoardParams,
      body: BoardUpdate,
      workspace: { role: 'admin' },
      response: { 200: BoardResponse },
      detail: { operationId: 'updateBoard', tags, summary: 'Rename, re-slug, describe or make a board private (admin, dashboard only)', description: '`description: null` clears it. A taken slug is 409 SLUG_TAKEN.' },
    })
    .delete('/workspaces/:workspace_slug/boards/:board_slug', async ({ workspace, params, set }) => {
      await boards.deleteBoard(ctx.db, workspace.id, params.board_slug)
      set.status = 204
    }, {
      params: WorkspaceBoardParams,
      workspace: { role: 'admin' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteBoard', tags, summary: 'Delete a board with all its posts, comments and votes (admin, dashboard only)', description: 'Dashboard session of an admin (API keys get 403 DASHBOARD_ONLY). Deletes the board\'s posts with their comments and votes.' },
    })
