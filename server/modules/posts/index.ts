import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { findBoard, resolveLabels, resolveStatus } from '../feedback/lookups.ts'
import { readPage } from '../feedback/paging.ts'
import { BoardPostsParams, PostCreate, PostIdParams, PostListQuery, PostListResponse, PostMerge, PostResponse, PostUpdate } from './model.ts'
import { getPost, listPosts } from './queries.ts'
import * as posts from './service.ts'

const tags = ['Posts']

export const postsModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/boards/:board_slug/posts', async ({ workspace, params, query }) => {
      const board = await findBoard(ctx.db, workspace.id, params.board_slug)
      const status = query.status !== undefined ? await resolveStatus(ctx.db, workspace.id, query.status, ['query', 'status']) : undefined
      const [label] = query.label !== undefined ? await resolveLabels(ctx.db, workspace.id, [query.label], ['query', 'label']) : []
      return listPosts(ctx.db, board.id, { status, labelId: label?.id, q: query.q, sort: query.sort }, readPage(query))
    }, {
      params: BoardPostsParams,
      query: PostListQuery,
      workspace: { scope: 'posts:read' },
      response: { 200: PostListResponse },
      detail: { operationId: 'listPosts', tags, summary: "A board's posts, paged", description: 'Merged posts are left out. `limit` is an alias of `per_page`. Filters: `status` (name or id), `label` (slug), `q` (full-text, websearch syntax).' },
    })
    .post('/boards/:board_slug/posts', async ({ workspace, caller, params, body, set }) => {
      const post = await posts.createPost(ctx.db, workspace.id, caller, params.board_slug, body)
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
      detail: { operationId: 'getPost', tags, summary: 'A post (merged posts show `merged_into`)' },
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
      detail: { operationId: 'deletePost', tags, summary: 'Delete a post with its comments and votes' },
    })
    .post('/posts/:post_id/merge', ({ workspace, params, body }) => posts.mergePost(ctx.db, workspace.id, params.post_id, body.into_post_id), {
      params: PostIdParams,
      body: PostMerge,
      workspace: { scope: 'posts:write' },
      response: { 200: t.Object({ post: PostResponse, into: PostResponse }, { description: 'PostMergeResponse' }) },
      detail: { operationId: 'mergePost', tags, summary: 'Merge this post into another', description: 'Votes move deduplicated by voter, comments move, the source keeps `merged_into` and leaves the lists. Merging into itself is 422; a merged source or target is 409; a post of another workspace is 404.' },
    })
