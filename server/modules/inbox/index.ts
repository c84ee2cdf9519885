import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { forbidden } from '../../errors.ts'
import { readPage } from '../../lib/paging.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { authPlugin, type WorkspaceContext } from '../../plugins/auth.ts'
import { revenueView } from '../companies/demand.ts'
import { verifiedFilter } from '../posts/model.ts'
import { bulkChange } from './bulk.ts'
import { BulkRequest, BulkResult, InboxPage, InboxQuery, ReadStateResult, ReadStateUpdate, SavedView, SavedViewCreate, SavedViewList, SavedViewUpdate, ViewParams } from './model.ts'
import { listInbox } from './queries.ts'
import { setReadState } from './read-state.ts'
import * as views from './saved-views.ts'

const tags = ['Inbox']

/** The member behind the credential: a session's user or an OAuth token's; a key has none. */
export const readerId = ({ caller }: Pick<WorkspaceContext, 'caller'>) => (caller.kind === 'api_key' ? null : caller.user.id)
const viewActor = (context: Pick<WorkspaceContext, 'caller' | 'workspace' | 'member'>): views.ViewActor => ({ workspaceId: context.workspace.id, userId: readerId(context), role: context.member?.role ?? null })

/** Query strings as the inbox service takes them. */
export const inboxFilters = (query: typeof InboxQuery.static) => ({ ...query, unanswered: verifiedFilter(query.unanswered), verified: verifiedFilter(query.verified) })

export const inboxModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug' })
    .use(authPlugin(ctx))
    .get('/inbox', async (context) => {
      const page = await listInbox(ctx.db, { workspaceId: context.workspace.id, userId: readerId(context) }, inboxFilters(context.query), readPage(context.query))
      // The same revenue rule as the board lists (docs/demand.md): figures a caller may not read are null.
      return { ...page, items: page.items.map(revenueView(context.workspace, context.caller, context.member)) }
    }, {
      params: WorkspaceSlugParams,
      query: InboxQuery,
      workspace: { scope: 'posts:read' },
      response: { 200: InboxPage },
      detail: {
        operationId: 'listInbox', tags, summary: "The team's inbox: posts across every board, paged",
        description: "Every unmerged post of the workspace, private boards included. Filters: `board` (slug), `status` (name or id), `label` (slug), `owner` (`me`, `unassigned` or a member's user id), `unanswered` (no public reply from a member or key yet), `stale_days` (no change and no comment for that many days), `verified` (as on board lists), `q` (full-text). Sorts: `new`, `top`, `trending`, `oldest_unanswered` (unanswered posts, oldest first). An unknown board, status, label or owner is 422. Each post carries `unread` for a member (null for keys). `total` is exact with no filter but `board` and `status`; with others it counts at most 200 matches past the start of the page (docs/api.md#lists-and-paging).",
      },
    })
    .post('/inbox/read', (context) => {
      const userId = readerId(context)
      if (!userId) throw forbidden('Read state belongs to a member: an API key has none')
      return setReadState(ctx.db, context.workspace.id, userId, context.body.post_ids, context.body.read)
    }, {
      params: WorkspaceSlugParams,
      body: ReadStateUpdate,
      workspace: { scope: 'posts:write' },
      response: { 200: ReadStateResult },
      detail: { operationId: 'setInboxReadState', tags, summary: 'Mark posts read or unread for yourself', description: "The caller's own read state (a dashboard session, or an OAuth token for its user; API keys get 403 FORBIDDEN). `read: true` marks the posts read now; a post turns unread again when it changes or gets a comment. Every id must be a post of the workspace (404 otherwise, nothing changed). Opening a post in the dashboard marks it read." },
    })
    .get('/views', (context) => views.listViews(ctx.db, viewActor(context)), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'posts:read' },
      response: { 200: SavedViewList },
      detail: { operationId: 'listSavedViews', tags, summary: 'Saved inbox views', description: "The caller's own views and the shared ones, oldest first (API keys see the shared ones)." },
    })
    .post('/views', async (context) => {
      const view = await views.createView(ctx.db, viewActor(context), context.body)
      context.set.status = 201
      return view
    }, {
      params: WorkspaceSlugParams,
      body: SavedViewCreate,
      workspace: { scope: 'posts:write' },
      response: { 201: SavedView },
      detail: { operationId: 'createSavedView', tags, summary: 'Save an inbox view', description: 'Filters are the query parameters of the inbox and are checked like them (an unknown board, status, label or owner is 422 at `body.filters`). A member\'s view is private unless `shared`; a view made with an API key is always shared.' },
    })
    .get('/views/:view_id', (context) => views.getView(ctx.db, viewActor(context), context.params.view_id), {
      params: ViewParams,
      workspace: { scope: 'posts:read' },
      response: { 200: SavedView },
      detail: { operationId: 'getSavedView', tags, summary: 'A saved view', description: "Another member's private view, or one of another workspace, is 404." },
    })
    .patch('/views/:view_id', (context) => views.updateView(ctx.db, viewActor(context), context.params.view_id, context.body), {
      params: ViewParams,
      body: SavedViewUpdate,
      workspace: { scope: 'posts:write' },
      response: { 200: SavedView },
      detail: { operationId: 'updateSavedView', tags, summary: 'Rename, refilter or (un)share a view', description: 'By the member who made it; a shared view also by an admin or the owner (403 FORBIDDEN otherwise). Views made with an API key stay shared.' },
    })
    .delete('/views/:view_id', async (context) => {
      await views.deleteView(ctx.db, viewActor(context), context.params.view_id)
      context.set.status = 204
    }, {
      params: ViewParams,
      workspace: { scope: 'posts:write' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteSavedView', tags, summary: 'Delete a saved view', description: 'The same rule as changing it.' },
    })
    .post('/posts/bulk', (context) => bulkChange(ctx.db, context.workspace.id, context.caller, context.body), {
      params: WorkspaceSlugParams,
      body: BulkRequest,
      workspace: { scope: 'posts:write' },
      response: { 200: BulkResult },
      detail: {
        operationId: 'bulkUpdatePosts', tags, summary: 'Change up to 500 posts at once, all or nothing',
        description: "One action for every listed post: a status (with an optional `status_message` for the voters), labels added or removed, an owner, a board, a merge into another post, or delete (merge and delete alone). Each post goes through the same service as its single route and raises the same events. All or nothing: when any post fails (not found, already merged...), nothing is applied and the answer is 422 VALIDATION_ERROR with `results` listing every post's outcome. With `Idempotency-Key`, a repeat answers the first response and changes nothing (no second event or webhook).",
      },
    })
