import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { readPage } from '../../lib/paging.ts'
import { PostIdParams } from '../posts/model.ts'
import { CommentCreate, CommentIdParams, CommentListQuery, CommentListResponse, CommentResponse, CommentUpdate } from './model.ts'
import * as comments from './service.ts'

const tags = ['Comments']

export const commentsModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/posts/:post_id/comments', ({ workspace, caller, params, query }) =>
      comments.listComments(ctx.db, workspace.id, params.post_id, readPage(query), { internal: comments.seesInternal(caller) }), {
      params: PostIdParams,
      query: CommentListQuery,
      workspace: { scope: 'comments:read' },
      response: { 200: CommentListResponse },
      detail: { operationId: 'listComments', tags, summary: "A post's comments, oldest first", description: 'Internal notes are included for members and for keys with comments:internal.' },
    })
    .post('/posts/:post_id/comments', async ({ workspace, caller, params, body, set }) => {
      const comment = await comments.createComment(ctx.db, workspace.id, caller, params.post_id, body)
      set.status = 201
      return comment
    }, {
      params: PostIdParams,
      body: CommentCreate,
      workspace: { scope: 'comments:write' },
      response: { 201: CommentResponse },
      detail: { operationId: 'createComment', tags, summary: 'Comment on a post (raises `comment.created`)', description: 'Internal notes need comments:internal with a key (403 INSUFFICIENT_SCOPE otherwise). Commenting on a merged post is 409.' },
    })
    .get('/comments/:comment_id', async ({ workspace, caller, params }) => comments.toCommentResponse(await comments.getComment(ctx.db, workspace.id, params.comment_id, caller)), {
      params: CommentIdParams,
      workspace: { scope: 'comments:read' },
      response: { 200: CommentResponse },
      detail: { operationId: 'getComment', tags, summary: 'A comment', description: 'With an API key (`comments:read`) or a dashboard session. Internal notes are returned only to members and to keys with `comments:internal`; otherwise they are 404 NOT_FOUND.' },
    })
    .patch('/comments/:comment_id', ({ workspace, caller, member, params, body }) => comments.updateComment(ctx.db, workspace.id, caller, member, params.comment_id, body.body), {
      params: CommentIdParams,
      body: CommentUpdate,
      workspace: { scope: 'comments:write' },
      response: { 200: CommentResponse },
      detail: { operationId: 'updateComment', tags, summary: 'Edit a comment (its author, an admin, or a key)', description: 'With an API key (`comments:write`) or a dashboard session. A member may edit their own comments; editing another author\'s needs the admin role (403 FORBIDDEN).' },
    })
    .delete('/comments/:comment_id', async ({ workspace, caller, member, params, set }) => {
      await comments.deleteComment(ctx.db, workspace.id, caller, member, params.comment_id)
      set.status = 204
    }, {
      params: CommentIdParams,
      workspace: { scope: 'comments:write' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteComment', tags, summary: 'Delete a comment (raises `comment.deleted`); its replies move up a level', description: 'With an API key (`comments:write`) or a dashboard session (own comments, or admin). Records `comment.deleted` in the same transaction; replies are kept and re-attached to the deleted comment\'s parent.' },
    })
