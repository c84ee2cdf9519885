import type { Result, Workspace } from '../api-types.js'
import type { RequestOptions, WithResponse } from '../core/request.js'
import { APIResource } from './resource.js'

export class Workspaces extends APIResource {
  /** With an API key: the key's own workspace, as a one-item list. */
  list(options?: RequestOptions): Promise<Result<'listWorkspaces'>> {
    return this.client.call('listWorkspaces', options)
  }

  get(slug: string, options?: RequestOptions): Promise<WithResponse<Workspace>> {
    return this.client.call('getWorkspace', { ...options, path: { workspace_slug: slug } })
  }
}
