import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { CommentResponse } from '../comments/model.ts'
import { PostResponse } from '../posts/model.ts'
import { VoteToggleResponse } from '../votes/model.ts'
import { answerAnonymousWrite } from '../visitors/service.ts'
import { commentAsEndUser, postAsEndUser, voteAsEndUser } from './write-service.ts'
import { PublicCommentCreate, PublicPostCreate, PublicVoteToggle } from './model.ts'
import { PublicBoardParams, PublicPostParams } from '../../lib/schema.ts'
import { writerLanguage } from '../../lib/language.ts'

const tags = ['Public']
const WHO = 'Identified end users send `Authorization: Bearer <session_token>` (from identify); anonymous visitors send `email` when the workspace allows it (`settings.allow_anonymous`, default true; otherwise 401). An anonymous write answers a session for the identity it wrote as (`Chorus-Session-Token`, `Chorus-Session-Expires`) and, on the first write of the day naming an address, a claim (`Chorus-Claim-Id`, `Chorus-Claim-Expires`): the address gets a one-click link, and polling GET /public/{workspace_slug}/visitors/{claim_id} then gives this browser a confirmed session. The answer is the same whether the address was confirmed before or not: a confirmed address without its session is written as an address-less unverified identity, never as its owner. Limited per end user, or per IP for anonymous visitors (RATE_LIMIT_PER_IP a minute). Honours `Idempotency-Key`. CORS: any origin.'

/** End-user writes behind the portal and the widget: the feedback services, with an end user as the caller (the `endUser` macro). */
export const publicWritesModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/public/:workspace_slug' })
    .use(authPlugin(ctx))
    .post('/boards/:board_slug/posts', async ({ endUser, params, body, set, request }) => {
      const post = await postAsEndUser(ctx, endUser, params.board_slug, { ...body, language: writerLanguage(body.locale, request) })
      await answerAnonymousWrite(ctx, endUser, set.headers as Record<string, string>)
      set.status = 201
      return post
    }, {
      endUser: true,
      params: PublicBoardParams,
      body: PublicPostCreate,
      response: { 201: PostResponse },
      detail: { operationId: 'createPublicPost', tags, summary: 'Post feedback as an end user (raises `post.created`)', description: `${WHO} A private board is 404.` },
    })
    .post('/posts/:post_id/votes', async ({ endUser, params, body, set }) => {
      const result = await voteAsEndUser(ctx.db, endUser, params.post_id, body?.locale)
      await answerAnonymousWrite(ctx, endUser, set.headers as Record<string, string>)
      return result
    }, {
      endUser: true,
      params: PublicPostParams,
      body: PublicVoteToggle,
      response: { 200: VoteToggleResponse },
      detail: { operationId: 'togglePublicVote', tags, summary: 'Toggle the end user\'s vote', description: `Answers \`{voted, votes}\`. ${WHO} A write without a session may add a vote for an address but never remove one (the answer then says \`voted: true\` and nothing changes); a session minted for an unconfirmed address removes only the votes it cast; a confirmed identity removes any of its votes. A post on a private board is 404; a merged post is 409.` },
    })
    .post('/posts/:post_id/comments', async ({ endUser, params, body, set }) => {
      const comment = await commentAsEndUser(ctx, endUser, params.post_id, body)
      await answerAnonymousWrite(ctx, endUser, set.headers as Record<string, string>)
      set.status = 201
      return comment
    }, {
      endUser: true,
      params: PublicPostParams,
      body: PublicCommentCreate,
      response: { 201: CommentResponse },
      detail: { operationId: 'createPublicComment', tags, summary: 'Comment as an end user (never internal; raises `comment.created`)', description: `${WHO} There is no \`internal\` field: sending one is 422. A post on a private board is 404.` },
    })
