import { Elysia, t } from 'elysia'
import { authPlugin } from '../../plugins/auth.ts'
import type { RateRule } from '../../plugins/rate-limit.ts'
import { sessionViewer } from '../../identity/end-users.ts'
import { PagingQuery } from '../../lib/paging-schema.ts'
import type { AppContext } from '../../context.ts'
import { readPage } from '../../lib/paging.ts'
import { PostListQuery, PostListResponse } from '../posts/model.ts'
import { cachedBoardPosts, cachedWorkspace, conditionalJson, jsonAnswer, publicRead, sendJson } from './cache.ts'
import { votedBy } from '../votes/service.ts'
import { NotModified, PublicPostResponse, PublicWorkspaceResponse, RoadmapResponse } from './model.ts'
import * as portal from './service.ts'
import { PublicBoardParams, PublicPostParams, PublicWorkspaceParams } from '../../lib/schema.ts'

const tags = ['Public']
// No credential: the portal and the widget read these from any origin (CORS is set in plugins/cors.ts).
const security: [] = []
const withSession: Record<string, string[]>[] = [{ widgetSession: [] }, {}]
const SEARCH_LIMITS: RateRule[] = [{ name: 'public-search:ip', by: ({ clientIp }) => clientIp }]
const PublicSearchQuery = t.Object({
  ...PagingQuery,
  q: PostListQuery.properties.q,
  verified: PostListQuery.properties.verified,
}, { additionalProperties: false })
const personal = 'Optional `Authorization: Bearer <session_token>` (an end-user session from identify, a claim or an anonymous write\'s `Chorus-Session-Token`): each post then carries `voted` for that end user and the answer is `Cache-Control: private, no-cache`; without it `voted` is absent. Any other credential (an invalid, expired or foreign-workspace token, an API key) is ignored: the answer is the anonymous one, without `voted`, which tells the widget to drop its token. `verified=true|false` filters by whether the author confirmed their identity.'
const caching = 'Without a session: cached publicly for 30 s (`Cache-Control: public, max-age=30, stale-while-revalidate=60`) with a weak `ETag`; send it back in `If-None-Match` for an empty 304. Private boards and their posts are 404, e-mail addresses are null, internal comments never appear. A workspace whose subscription has lapsed still serves these reads.'

export const publicModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/public' })
    .use(authPlugin(ctx))
    .mapResponse(conditionalJson)
    // The CORS preflight of every public route, including the widget's end-user writes.
    .options('/*', ({ set }) => {
      set.status = 204
    }, { detail: { hide: true } })
    .get('/:workspace_slug', async ({ params, request, set }) => sendJson(request, set, (await cachedWorkspace(ctx, params.workspace_slug)).json), {
      params: PublicWorkspaceParams,
      response: { 200: PublicWorkspaceResponse, 304: NotModified },
      detail: { operationId: 'getPublicWorkspace', tags, security, summary: "A workspace's public portal: branding, public boards, statuses", description: caching },
    })
    .get('/:workspace_slug/boards/:board_slug/posts', async ({ params, query, request, set }) => {
      // Everyone's page from the public cache; a session's `voted` is added to a copy, never kept.
      const answer = await cachedBoardPosts(ctx, params.workspace_slug, params.board_slug, query)
      const viewer = request.headers.has('authorization') ? await sessionViewer(ctx, params.workspace_slug, request.headers.get('authorization')) : null
      if (!viewer) return sendJson(request, set, answer)
      const list = JSON.parse(await answer.body.text()) as Awaited<ReturnType<typeof portal.publicBoardPosts>>
      return sendJson(request, set, jsonAnswer({ ...list, items: await portal.withVoted(ctx.db, viewer, list.items) }))
    }, {
      params: PublicBoardParams,
      query: PostListQuery,
      response: { 200: PostListResponse, 304: NotModified },
      detail: { operationId: 'listPublicPosts', tags, security: withSession, summary: "A public board's posts, paged", description: `The query and envelope of listPosts (with \`label\`, \`q\` or \`verified\`, \`total\` counts at most 200 matches past the page's start); merged posts are left out. ${personal} ${caching}` },
    })
    .get('/:workspace_slug/posts', async ({ params, query, request }) => {
      const viewer = await sessionViewer(ctx, params.workspace_slug, request.headers.get('authorization'))
      const found = await publicRead(ctx, (db) => portal.searchPublicPosts(db, params.workspace_slug, query, readPage(query)))
      return { ...found, items: await portal.withVoted(ctx.db, viewer, found.items) }
    }, {
      rateLimit: SEARCH_LIMITS,
      params: PublicWorkspaceParams,
      query: PublicSearchQuery,
      response: { 200: PostListResponse, 304: NotModified },
      detail: { operationId: 'searchPublicPosts', tags, security: withSession, summary: 'Posts of every public board, e.g. duplicate suggestions', description: `For "vote instead" suggestions while a visitor types a title: \`q\` (full-text over title and body, websearch syntax, best match first), \`per_page\` (e.g. 5). Without \`q\` the newest posts of all public boards. Merged posts are left out. Limited per IP (RATE_LIMIT_PER_IP a minute); debounce keystrokes. ${personal} ${caching}` },
    })
    .get('/:workspace_slug/posts/:post_id', async ({ params, request }) => {
      const viewer = await sessionViewer(ctx, params.workspace_slug, request.headers.get('authorization'))
      const found = await publicRead(ctx, (db) => portal.publicPost(db, params.workspace_slug, params.post_id))
      return viewer ? { ...found, voted: (await votedBy(ctx.db, viewer, [found.id])).has(found.id) } : found
    }, {
      params: PublicPostParams,
      response: { 200: PublicPostResponse, 304: NotModified },
      detail: { operationId: 'getPublicPost', tags, security: withSession, summary: 'A post of a public board with its public comments', description: `\`comments\` holds the first 100 public comments, oldest first (\`comment_count\` counts them all). \`status_history\` lists every status the post has had, oldest first, without who changed it. A merged post answers with \`merged_into\` to follow. ${personal} ${caching}` },
    })
    .get('/:workspace_slug/roadmap', ({ params }) => publicRead(ctx, (db) => portal.publicRoadmap(db, params.workspace_slug)), {
      params: PublicWorkspaceParams,
      response: { 200: RoadmapResponse, 304: NotModified },
      detail: { operationId: 'getPublicRoadmap', tags, security, summary: 'The public roadmap: planned, in-progress and complete posts', description: `Three groups by status kind, each with its status names, its total and its top 50 posts by votes. ${caching}` },
    })
