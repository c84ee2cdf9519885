import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { readPage } from '../../lib/paging.ts'
import { BoardPostsParams, PostCreate, PostIdParams, PostListQuery, PostListResponse, PostMerge, PostMergeResult, PostResponse, PostUpdate, verifiedFilter } from './model.ts'
import { getPost, listPosts } from './queries.ts'
import { writerLanguage } from '../../lib/language.ts'
import * as posts from './service.ts'

const tags = ['Posts']

export const postsModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/boards/:board_slug/posts', ({ workspace, params, query }) => listPosts(ctx.db, { workspace, board: params.board_slug }, { ...query, verified: verifiedFilter(query.verified) }, readPage(query)), {
      params: BoardPostsParams,
      query: PostListQuery,
      workspace: { scope: 'posts:read' },
      response: { 200: PostListResponse },
      detail: { operationId: 'listPosts', tags, summary: "A board's posts, paged", description: 'Merged posts are left out. `limit` is an alias of `per_page`. Filters: `status` (name or id), `label` (slug), `q` (full-text, websearch syntax), `verified` (`false`: only posts by anonymous visitors who have not confirmed their e-mail address; `true`: the others). `total` is exact without `label`, `q` and `verified`; with any of them it counts at most 200 matches past the start of the page (exact when fewer match, otherwise a lower bound that grows as you page on).' },
    })
    .post('/boards/:board_slug/posts', async ({ workspace, caller, params, body, set, request }) => {
      const post = await posts.createPost(ctx.db, workspace.id, caller, params.board_slug, { ...body, language: writerLanguage(body.locale, request) })
      set.status = 201
      return post
    }, {
      params: BoardPostsParams,
      body: PostCreate,
      workspace: { scope: 'posts:write' },
      response: { 201: PostResponse },
      detail: { operationId: 'createPost', tags, summary: 'Create a post', description: 'With `email` or `end_user_id` the post is made on behalf of that end user (an unknown e-mail creates one); otherwise a key authors it under its name and a session under the member. Raises `post.created`.' },
    })
    .get('/posts/:post_id', ({ workspace, params }) => getPost(ctx.db, workspace.id, params.post_id), {
      params: PostIdParams,
      workspace: { scope: 'posts:read' },
      response: { 200: PostResponse },
      detail: { operationId: 'getPost', tags, summary: 'A post (merged posts show `merged_into`)', description: 'With an API key (`posts:read`) or a dashboard session. A post merged into another is still returned, with `merged_into` set. A post of another workspace is 404 NOT_FOUND.' },
    })
    .patch('/posts/:post_id', ({ workspace, caller, params, body }) => posts.updatePost(ctx.db, workspace.id, caller, params.post_id, body), {
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
    .post('/posts/:post_id/merge', ({ workspace, params, body }) => posts.mergePost(ctx.db, workspace.id, params.post_id, body.into_post_id), {
      params: PostIdParams,
      body: PostMerge,
      workspace: { scope: 'posts:write' },
      response: { 200: PostMergeResult },
      detail: { operationId: 'mergePost', tags, summary: 'Merge this post into another', description: 'Votes move deduplicated by voter, comments move, the source keeps `merged_into` and leaves the lists. Merging into itself is 422; a merged source or target is 409; a post of another workspace is 404.' },
    })
