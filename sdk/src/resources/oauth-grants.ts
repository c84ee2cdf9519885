import type { OAuthGrant } from '../api-types.js'
import type { RequestOptions, WithResponse } from '../core/request.js'
import { APIResource } from './resource.js'

/**
 * Apps connected to a workspace through OAuth (each grant is one refresh-token family). These routes
 * belong to the dashboard: they need a signed-in session (`new Chorus({ credentials: 'include', ... })`
 * in the browser), and API keys get 403 DASHBOARD_ONLY.
 */
export class OAuthGrants extends APIResource {
  /** Admins and the owner see every grant of the workspace; members see their own. */
  list(workspaceId: string, options?: RequestOptions): Promise<WithResponse<OAuthGrant[]>> {
    return this.client.call('listOAuthGrants', { ...options, query: { workspace_id: workspaceId } })
  }

  /** Disconnects the app: its access and refresh tokens stop at once. Idempotent. */
  async delete(familyId: string, options?: RequestOptions): Promise<void> {
    await this.client.call('deleteOAuthGrant', { ...options, path: { family_id: familyId } })
  }
}
