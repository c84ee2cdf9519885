// One end user of the workspace, from your backend (docs/data-lifecycle.md#one-end-user): needs the
// end_users:read (get, export) and end_users:write (erase) scopes.
import type { EndUserErasure, EndUserExport, EndUserRecord, QueryOf } from '../api-types.js'
import type { RequestOptions } from '../core/request.js'
import { APIResource } from './resource.js'

export class EndUsers extends APIResource {
  /** By the `eu_` id or your own id for them (the `sub` of your identify token): `chorus.endUsers.get('user-1234')`. */
  async get(endUserId: string, options?: RequestOptions): Promise<EndUserRecord> {
    return this.client.call('getEndUser', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), end_user_id: endUserId } })
  }

  /** Everything stored about them, as JSON: what a data subject access request asks for. */
  async export(endUserId: string, options?: RequestOptions): Promise<EndUserExport> {
    return this.client.call('exportEndUser', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), end_user_id: endUserId } })
  }

  /**
   * Erases them for good: `chorus.endUsers.erase('user-1234')` keeps their posts and comments without
   * their name (`{ content: 'delete' }` deletes them). Raises `end_user.erased`.
   */
  async erase(endUserId: string, query: QueryOf<'eraseEndUser'> = {}, options?: RequestOptions): Promise<EndUserErasure> {
    return this.client.call('eraseEndUser', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), end_user_id: endUserId }, query })
  }
}
