import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { notFound } from '../../errors.ts'
import { requestPlugin } from '../../plugins/request.ts'
import * as comments from '../comments/service.ts'
import { CommentResponse } from '../comments/model.ts'
import { findBoard } from '../feedback/lookups.ts'
import { PostResponse } from '../posts/model.ts'
import { getPost } from '../posts/queries.ts'
import * as posts from '../posts/service.ts'
import { VoteToggleResponse } from '../votes/model.ts'
import * as votes from '../votes/service.ts'
import { PublicBoardParams, PublicCommentCreate, PublicPostCreate, PublicPostParams, PublicVoteToggle } from './model.ts'
import { idempotent, publicWriter } from './writer.ts'

const tags = ['Public']
const security: Record<string, string[]>[] = [{ widgetSession: [] }, {}]
const WHO = 'Identified end users send `Authorization: Bearer <session_token>` (from identify); anonymous visitors send `email` when the workspace allows it (`settings.allow_anonymous`, default true; otherwise 401). Limited per end user, or per IP for anonymous visitors (RATE_LIMIT_PER_IP a minute). Honours `Idempotency-Key`. CORS: any origin.'

/** End-user writes behind the portal and the widget (CONTRACT §7): the feedback services, with an end user as the caller. */
export const publicWritesModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/public/:workspace_slug' })
    .use(requestPlugin(ctx))
    .post('/boards/:board_slug/posts', async ({ request, params, body, clientIp, set }) => {
      const { title, body: text, email } = body
      const write = await publicWriter(ctx, { request, slug: params.workspace_slug, email, clientIp, headers: set.headers })
      return idempotent(ctx, request, write, body, set, async () => {
        const board = await findBoard(ctx.db, write.workspace.id, params.board_slug)
        // A private board does not exist for the public.
        if (board.isPrivate) throw notFound('Board')
        const created = await posts.createPost(ctx.db, write.workspace.id, write.caller, board.slug, { title, body: text })
        return { status: 201, body: await getPost(ctx.db, write.workspace.id, created.id, { publicView: true }) }
      })
    }, {
      params: PublicBoardParams,
      body: PublicPostCreate,
      response: { 201: PostResponse },
      detail: { operationId: 'createPublicPost', tags, security, summary: 'Post feedback as an end user (raises `post.created`)', description: `${WHO} A private board is 404.` },
    })
    .post('/posts/:post_id/votes', async ({ request, params, body, clientIp, set }) => {
      const write = await publicWriter(ctx, { request, slug: params.workspace_slug, email: body?.email, clientIp, headers: set.headers })
      return idempotent(ctx, request, write, body, set, async () => {
        await getPost(ctx.db, write.workspace.id, params.post_id, { publicView: true })
        return { status: 200, body: await votes.toggleVote(ctx.db, write.workspace.id, write.caller, params.post_id, {}) }
      })
    }, {
      params: PublicPostParams,
      body: PublicVoteToggle,
      response: { 200: VoteToggleResponse },
      detail: { operationId: 'togglePublicVote', tags, security, summary: 'Toggle the end user\'s vote', description: `Answers \`{voted, votes}\`. ${WHO} A post on a private board is 404; a merged post is 409.` },
    })
    .post('/posts/:post_id/comments', async ({ request, params, body, clientIp, set }) => {
      const { body: text, parent_id, email } = body
      const write = await publicWriter(ctx, { request, slug: params.workspace_slug, email, clientIp, headers: set.headers })
      return idempotent(ctx, request, write, body, set, async () => {
        await getPost(ctx.db, write.workspace.id, params.post_id, { publicView: true })
        const comment = await comments.createComment(ctx.db, write.workspace.id, write.caller, params.post_id, { body: text, parent_id, internal: false }, true)
        return { status: 201, body: comment }
      })
    }, {
      params: PublicPostParams,
      body: PublicCommentCreate,
      response: { 201: CommentResponse },
      detail: { operationId: 'createPublicComment', tags, security, summary: 'Comment as an end user (never internal; raises `comment.created`)', description: `${WHO} There is no \`internal\` field: sending one is 422. A post on a private board is 404.` },
    })
