import type { CommentCreateParams, CommentListItem, CommentListParams, CommentUpdateParams, Result } from '../api-types.js'
import type { PagePromise } from '../core/pagination.js'
import type { RequestOptions } from '../core/request.js'
import { APIResource } from './resource.js'

export class Comments extends APIResource {
  list(postId: string, query: CommentListParams = {}, options?: RequestOptions): PagePromise<CommentListItem> {
    return this.client.list('listComments', { ...options, path: { post_id: postId }, query })
  }

  get(commentId: string, options?: RequestOptions): Promise<Result<'getComment'>> {
    return this.client.call('getComment', { ...options, path: { comment_id: commentId } })
  }

  /** `internal: true` needs the `comments:internal` scope; internal comments never reach public routes. */
  create(postId: string, params: CommentCreateParams, options?: RequestOptions): Promise<Result<'createComment'>> {
    return this.client.call('createComment', { ...options, path: { post_id: postId }, body: params })
  }

  update(commentId: string, params: CommentUpdateParams, options?: RequestOptions): Promise<Result<'updateComment'>> {
    return this.client.call('updateComment', { ...options, path: { comment_id: commentId }, body: params })
  }

  delete(commentId: string, options?: RequestOptions): Promise<void> {
    return this.client.call('deleteComment', { ...options, path: { comment_id: commentId } }).then(() => undefined)
  }
}
