import type { InboxListParams, InboxPost, InboxReadStateParams, PostBulkParams, Result, SavedViewCreateParams, SavedViewUpdateParams } from '../api-types.js'
import { PagePromise, type Page } from '../core/pagination.js'
import type { RequestOptions, WithResponse } from '../core/request.js'
import { APIResource } from './resource.js'

/** The team's inbox: posts across every board of the workspace, and changes to many posts at once. */
export class Inbox extends APIResource {
  /** `for await (const post of chorus.inbox.list({ owner: 'unassigned', sort: 'oldest_unanswered' }))` walks every page. */
  list(query: InboxListParams = {}, options?: RequestOptions): PagePromise<InboxPost> {
    return new PagePromise(async (page) => {
      const path = { workspace_slug: await this.client.workspaceSlug() }
      return this.client.call('listInbox', { ...options, path, query: { ...query, page } }) as Promise<WithResponse<Page<InboxPost>>>
    }, query.page ?? 1)
  }

  /** Marks posts read or unread for the signed-in member (dashboard session or OAuth token; keys have no read state). */
  async setReadState(params: InboxReadStateParams, options?: RequestOptions): Promise<Result<'setInboxReadState'>> {
    return this.client.call('setInboxReadState', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, body: params })
  }

  /**
   * One change to up to 500 posts, all or nothing: `chorus.inbox.bulk({ post_ids, add_labels: ['mobile'] })`.
   * A failure throws a ValidationError whose body lists `results`; POSTs carry an automatic Idempotency-Key.
   */
  async bulk(params: PostBulkParams, options?: RequestOptions): Promise<Result<'bulkUpdatePosts'>> {
    return this.client.call('bulkUpdatePosts', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, body: params })
  }
}

/** Saved inbox views: the caller's own and the shared ones (keys: shared only). */
export class SavedViews extends APIResource {
  async list(options?: RequestOptions): Promise<Result<'listSavedViews'>> {
    return this.client.call('listSavedViews', { ...options, path: { workspace_slug: await this.client.workspaceSlug() } })
  }

  async get(viewId: string, options?: RequestOptions): Promise<Result<'getSavedView'>> {
    return this.client.call('getSavedView', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), view_id: viewId } })
  }

  async create(params: SavedViewCreateParams, options?: RequestOptions): Promise<Result<'createSavedView'>> {
    return this.client.call('createSavedView', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, body: params })
  }

  async update(viewId: string, params: SavedViewUpdateParams, options?: RequestOptions): Promise<Result<'updateSavedView'>> {
    return this.client.call('updateSavedView', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), view_id: viewId }, body: params })
  }

  async delete(viewId: string, options?: RequestOptions): Promise<void> {
    await this.client.call('deleteSavedView', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), view_id: viewId } })
  }
}
