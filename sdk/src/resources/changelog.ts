import type { ChangelogCreateParams, ChangelogListItem, ChangelogListParams, ChangelogUpdateParams, Result } from '../api-types.js'
import type { PagePromise } from '../core/pagination.js'
import type { RequestOptions } from '../core/request.js'
import { APIResource } from './resource.js'

export class Changelog extends APIResource {
  /** Drafts and published entries; `state` keeps one kind. */
  list(query: ChangelogListParams = {}, options?: RequestOptions): PagePromise<ChangelogListItem> {
    return this.client.list('listChangelogEntries', { ...options, query })
  }

  get(entryId: string, options?: RequestOptions): Promise<Result<'getChangelogEntry'>> {
    return this.client.call('getChangelogEntry', { ...options, path: { entry_id: entryId } })
  }

  /** A draft unless `published_at` is set; publishing completes the linked posts and e-mails their voters once. */
  create(params: ChangelogCreateParams, options?: RequestOptions): Promise<Result<'createChangelogEntry'>> {
    return this.client.call('createChangelogEntry', { ...options, body: params })
  }

  update(entryId: string, params: ChangelogUpdateParams, options?: RequestOptions): Promise<Result<'updateChangelogEntry'>> {
    return this.client.call('updateChangelogEntry', { ...options, path: { entry_id: entryId }, body: params })
  }

  delete(entryId: string, options?: RequestOptions): Promise<void> {
    return this.client.call('deleteChangelogEntry', { ...options, path: { entry_id: entryId } }).then(() => undefined)
  }
}
