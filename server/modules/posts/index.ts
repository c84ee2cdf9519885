import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin, confirmedRead } from '../../plugins/auth.ts'
import { readPage } from '../../lib/paging.ts'
import { forbidden } from '../../errors.ts'
import { canSeeRevenue, revenueView } from '../companies/demand.ts'
import { BoardPostsParams, PostCreate, PostIdParams, PostListResponse, PostMerge, PostMergeResult, PostResponse, PostUpdate, TeamPostListQuery, verifiedFilter } from './model.ts'
import { getPostJson, listPostsJson } from './queries.ts'
import { jsonText } from '../../lib/json.ts'
import { writerLanguage } from '../../lib/language.ts'
import * as posts from './service.ts'

const tags = ['Posts']
const DEMAND = ' Team reads carry `demand` (verified votes only, docs/demand.md), `score` and `factors`; `demand.mrr` is null for a member when the workspace shows revenue to admins only, and for keys without `companies:read`.'

export const postsModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/boards/:board_slug/posts', async (context) => {
      const { params, query } = context
      const { min_mrr: minMrr, ...filters } = query
      // The body as PostgreSQL writes it, revenue hidden there for a caller who may not see it.
      return jsonText(await confirmedRead(context, ({ workspace, caller, member }) => {
        const revenue = canSeeRevenue(workspace, caller, member)
        // An order or a threshold by revenue would disclose it as surely as the figures.
        if (!revenue && (query.sort === 'mrr' || minMrr !== undefined)) throw forbidden('Revenue is hidden from you in this workspace: sort=mrr and min_mrr need it')
        return listPostsJson(ctx.db, { workspace, board: params.board_slug }, { ...filters, minMrr, verified: verifiedFilter(query.verified) }, readPage(query), revenue)
      }))
    }, {
      params: BoardPostsParams,
      query: TeamPostListQuery,
      workspace: { scope: 'posts:read', changesInStatement: true },
      response: { 200: PostListResponse },
      detail: { operationId: 'listPosts', tags, summary: "A board's posts, paged", description: 'Merged posts are left out. `limit` is an alias of `per_page`. Filters: `status` (name or id), `label` (slug), `q` (full-text, websearch syntax), `verified` (`false`: only posts by anonymous visitors who have not confirmed their e-mail address; `true`: the others). Demand: `sort=mrr|companies|score`, `company` (external or `co_` id), `min_mrr`; a caller who may not read revenue gets 403 FORBIDDEN for `sort=mrr` and `min_mrr`.${DEMAND} `total` is exact without `label`, `q`, `verified`, `company` and `min_mrr`; with any of them it counts at most 200 matches past the start of the page (exact when fewer match, otherwise a lower bound that grows as you page on).' },
    })
    // The post as PostgreSQL rendered it in the create's statement, sent as it comes.
    .post('/boards/:board_slug/posts', async ({ workspace, caller, params, body, request }) =>
      jsonText(await posts.createPostJson(ctx.db, workspace.id, caller, params.board_slug, { ...body, language: writerLanguage(body.locale, request) }), 201), {
      params: BoardPostsParams,
      body: PostCreate,
      workspace: { scope: 'posts:write' },
      response: { 201: PostResponse },
      detail: { operationId: 'createPost', tags, summary: 'Create a post', description: 'With `email` or `end_user_id` the post is made on behalf of that end user (an unknown e-mail creates one); otherwise a key authors it under its name and a session under the member. Raises `post.created`.' },
    })
    .get('/posts/:post_id', async (context) => jsonText(await confirmedRead(context, ({ workspace, caller, member }) =>
      getPostJson(ctx.db, workspace.id, context.params.post_id, canSeeRevenue(workspace, caller, member)))), {
      params: PostIdParams,
      workspace: { scope: 'posts:read', changesInStatement: true },
      response: { 200: PostResponse },
      detail: { operationId: 'getPost', tags, summary: 'A post (merged posts show `merged_into`)', description: `With an API key (\`posts:read\`) or a dashboard session. A post merged into another is still returned, with \`merged_into\` set. A post of another workspace is 404 NOT_FOUND.${DEMAND}` },
    })
    .patch('/posts/:post_id', async ({ workspace, caller, member, params, body }) => revenueView(workspace, caller, member)(await posts.updatePost(ctx.db, workspace.id, caller, params.post_id, body)), {
      params: PostIdParams,
      body: PostUpdate,
      workspace: { scope: 'posts:write' },
      response: { 200: PostResponse },
      detail: { operationId: 'updatePost', tags, summary: 'Update title, body, status, labels, board or owner', description: 'A status change is recorded in the history and raises `status.changed`; every update raises `post.updated`.' },
    })
    .delete('/posts/:post_id', async ({ workspace, params, set }) => {
      await posts.deletePost(ctx.db, workspace.id, params.post_id)
      set.status = 204
    }, {
      params: PostIdParams,
      workspace: { scope: 'posts:write' },
      response: { 204: t.Void() },
      detail: { operationId: 'deletePost', tags, summary: 'Delete a post with its comments and votes', description: 'With an API key (`posts:write`) or a dashboard session. Removes the post with its comments and votes and records `post.deleted` in the same transaction.' },
    })
    .post('/posts/:post_id/merge', async ({ workspace, caller, member, params, body }) => {
      const merged = await posts.mergePost(ctx.db, workspace.id, params.post_id, body.into_post_id)
      const view = revenueView(workspace, caller, member)
      return { post: view(merged.post), into: view(merged.into) }
    }, {
      params: PostIdParams,
      body: PostMerge,
      workspace: { scope: 'posts:write' },
      response: { 200: PostMergeResult },
      detail: { operationId: 'mergePost', tags, summary: 'Merge this post into another', description: 'Votes move deduplicated by voter (so a company counts once in the target\'s `demand`), comments move, the source keeps `merged_into` and leaves the lists. Merging into itself is 422; a merged source or target is 409; a post of another workspace is 404.' },
    })
