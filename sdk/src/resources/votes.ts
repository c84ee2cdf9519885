import type { Vote, VoteListParams, VoteToggleParams, VoteToggleResult } from '../api-types.js'
import type { PagePromise } from '../core/pagination.js'
import type { RequestOptions, WithResponse } from '../core/request.js'
import { APIResource } from './resource.js'

export class Votes extends APIResource {
  list(postId: string, query: VoteListParams = {}, options?: RequestOptions): PagePromise<Vote> {
    return this.client.list('listVotes', { ...options, path: { post_id: postId }, query })
  }

  /** Casts the end user's vote, or takes it back if they had voted: `{ voted, votes }` says which. */
  toggle(postId: string, params: VoteToggleParams, options?: RequestOptions): Promise<WithResponse<VoteToggleResult>> {
    return this.client.call('toggleVote', { ...options, path: { post_id: postId }, body: params })
  }
}
