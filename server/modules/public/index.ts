import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { readPage } from '../feedback/paging.ts'
import { PostListQuery, PostListResponse } from '../posts/model.ts'
import { conditionalJson } from './cache.ts'
import { NotModified, PublicBoardParams, PublicPostParams, PublicPostResponse, PublicWorkspaceParams, PublicWorkspaceResponse, RoadmapResponse } from './model.ts'
import * as portal from './service.ts'

const tags = ['Public']
// No credential: the portal and the widget read these from any origin (CORS is set in plugins/cors.ts).
const security: [] = []
const caching = 'Cached publicly for 30 s (`Cache-Control: public, max-age=30, stale-while-revalidate=60`) with a weak `ETag`; send it back in `If-None-Match` for an empty 304. Private boards and their posts are 404, e-mail addresses are null, internal comments never appear. A workspace whose subscription has lapsed still serves these reads.'

export const publicModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/public' })
    .mapResponse(conditionalJson)
    // The CORS preflight of every public route, including the widget's end-user writes.
    .options('/*', ({ set }) => {
      set.status = 204
    }, { detail: { hide: true } })
    .get('/:workspace_slug', ({ params }) => portal.publicWorkspace(ctx.db, params.workspace_slug, ctx.config.baseUrl), {
      params: PublicWorkspaceParams,
      response: { 200: PublicWorkspaceResponse, 304: NotModified },
      detail: { operationId: 'getPublicWorkspace', tags, security, summary: "A workspace's public portal: branding, public boards, statuses", description: caching },
    })
    .get('/:workspace_slug/boards/:board_slug/posts', ({ params, query }) => portal.publicBoardPosts(ctx.db, params.workspace_slug, params.board_slug, query, readPage(query)), {
      params: PublicBoardParams,
      query: PostListQuery,
      response: { 200: PostListResponse, 304: NotModified },
      detail: { operationId: 'listPublicPosts', tags, security, summary: "A public board's posts, paged", description: `The query and envelope of listPosts; merged posts are left out. ${caching}` },
    })
    .get('/:workspace_slug/posts/:post_id', ({ params }) => portal.publicPost(ctx.db, params.workspace_slug, params.post_id), {
      params: PublicPostParams,
      response: { 200: PublicPostResponse, 304: NotModified },
      detail: { operationId: 'getPublicPost', tags, security, summary: 'A post of a public board with its public comments', description: `\`comments\` holds the first 100 public comments, oldest first (\`comment_count\` counts them all). A merged post answers with \`merged_into\` to follow. ${caching}` },
    })
    .get('/:workspace_slug/roadmap', ({ params }) => portal.publicRoadmap(ctx.db, params.workspace_slug), {
      params: PublicWorkspaceParams,
      response: { 200: RoadmapResponse, 304: NotModified },
      detail: { operationId: 'getPublicRoadmap', tags, security, summary: 'The public roadmap: planned, in-progress and complete posts', description: `Three groups by status kind, each with its status names, its total and its top 50 posts by votes. ${caching}` },
    })
