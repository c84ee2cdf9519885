import type { ResponseOf, Workspace } from '../api-types.js'
import type { RequestOptions } from '../core/request.js'
import { APIResource } from './resource.js'

export class Workspaces extends APIResource {
  /** With an API key: the key's own workspace, as a one-item list. */
  list(options?: RequestOptions): Promise<ResponseOf<'listWorkspaces'>> {
    return this.client.call('listWorkspaces', options)
  }

  get(slug: string, options?: RequestOptions): Promise<Workspace> {
    return this.client.call('getWorkspace', { ...options, path: { workspace_slug: slug } })
  }
}
