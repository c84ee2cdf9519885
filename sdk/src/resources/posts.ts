import type { PostCreateParams, PostListItem, PostListParams, PostMergeParams, PostUpdateParams, Result, TrackerIssueCreateParams } from '../api-types.js'
import type { PagePromise } from '../core/pagination.js'
import type { RequestOptions } from '../core/request.js'
import { APIResource } from './resource.js'

export class Posts extends APIResource {
  /** `for await (const post of chorus.posts.list({ board: 'ideas', per_page: 50 }))` walks every page. */
  list({ board, ...query }: PostListParams, options?: RequestOptions): PagePromise<PostListItem> {
    return this.client.list('listPosts', { ...options, path: { board_slug: board }, query })
  }

  get(postId: string, options?: RequestOptions): Promise<Result<'getPost'>> {
    return this.client.call('getPost', { ...options, path: { post_id: postId } })
  }

  /** `chorus.posts.create({ board: 'ideas', title: 'Dark mode', email: 'ada@example.com' })` */
  create({ board, ...body }: PostCreateParams, options?: RequestOptions): Promise<Result<'createPost'>> {
    return this.client.call('createPost', { ...options, path: { board_slug: board }, body })
  }

  update(postId: string, params: PostUpdateParams, options?: RequestOptions): Promise<Result<'updatePost'>> {
    return this.client.call('updatePost', { ...options, path: { post_id: postId }, body: params })
  }

  delete(postId: string, options?: RequestOptions): Promise<void> {
    return this.client.call('deletePost', { ...options, path: { post_id: postId } }).then(() => undefined)
  }

  /** Moves the post's votes (deduplicated) and comments into `into_post_id`; the post keeps `merged_into`. */
  merge(postId: string, params: PostMergeParams, options?: RequestOptions): Promise<Result<'mergePost'>> {
    return this.client.call('mergePost', { ...options, path: { post_id: postId }, body: params })
  }

  /**
   * Makes an issue in the workspace's connected tracker from the post and links it: the returned post
   * carries `tracker_issue: {id, identifier, url}`. Needs `posts:write`.
   * `chorus.posts.createTrackerIssue('post_…', { team_id: '…' })`
   */
  createTrackerIssue(postId: string, params: TrackerIssueCreateParams, options?: RequestOptions): Promise<Result<'createTrackerIssue'>> {
    return this.client.call('createTrackerIssue', { ...options, path: { post_id: postId }, body: params })
  }
}
