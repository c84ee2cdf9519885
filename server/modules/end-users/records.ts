import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { EndUserExport, EndUserParams, EndUserRecord, ErasureReceipt, EraseQuery } from './records-model.ts'
import { endUserRecord, eraseEndUserById, exportEndUser } from './records-service.ts'

const tags = ['End users']
const LOOKUP = 'The end user is named by its `eu_` id or by your own id for them (the `sub` of your identify token); one of another workspace, or unknown, is 404.'

/** One end user, from the customer's backend (docs/data-lifecycle.md#one-end-user): read, export, erase. */
export const endUserRecordsModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug/end-users/:end_user_id' })
    .use(authPlugin(ctx))
    .get('', ({ workspace, params }) => endUserRecord(ctx.db, workspace.id, params.end_user_id), {
      params: EndUserParams,
      workspace: { scope: 'end_users:read' },
      response: { 200: EndUserRecord },
      detail: { operationId: 'getEndUser', tags, summary: 'One end user, with their companies and what they wrote and voted for counted', description: `${LOOKUP} Needs \`end_users:read\` (a key or access token) or a member's session.` },
    })
    .get('/export', ({ workspace, params, set }) => {
      set.headers['cache-control'] = 'no-store'
      return exportEndUser(ctx.db, workspace.id, params.end_user_id)
    }, {
      params: EndUserParams,
      workspace: { scope: 'end_users:read' },
      response: { 200: EndUserExport },
      detail: {
        operationId: 'exportEndUser', tags, summary: 'Everything stored about one end user, as JSON (a data subject access request)',
        description: `${LOOKUP} Their record (address, name, verification, e-mail state), companies, posts, comments, votes, post subscriptions and stored sign-in metadata, read in one transaction. Answered with \`Cache-Control: no-store\`. Needs \`end_users:read\`.`,
      },
    })
    .delete('', ({ workspace, params, query }) => eraseEndUserById(ctx.db, workspace.id, params.end_user_id, query.content ?? 'anonymise'), {
      params: EndUserParams,
      query: EraseQuery,
      workspace: { scope: 'end_users:write', role: 'admin' },
      response: { 200: ErasureReceipt },
      detail: {
        operationId: 'eraseEndUser', tags, summary: 'Erase one end user for good (GDPR erasure)',
        description: [
          LOOKUP,
          'In one transaction: the identity and its votes go (each post\'s votes and `demand` recomputed), with its confirmations, post subscriptions, queued updates and company links; its widget sessions stop working at once.',
          '`content=anonymise` (default) keeps their posts and comments by "Deleted user" with their address and name taken out of the text, so other people\'s votes on those posts survive; `content=delete` deletes them (raising `post.deleted` and `comment.deleted`).',
          "Every outbox payload, notification, stored answer, queued e-mail and webhook or chat delivery log of the workspace that names them keeps what happened without who: the person's objects become the deleted author, their address and name inside text become `[erased]`.",
          'Raises `end_user.erased`, whose data is their id and the mode only. Needs `end_users:write`, or an admin\'s session. Erasing again is 404. Not undoable; a new identify with the same `sub` makes a new, empty end user.',
        ].join(' '),
      },
    })
