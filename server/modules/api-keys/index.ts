import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { APIKeyCreate, APIKeyCreatedResponse, APIKeyResponse, APIKeyScopesUpdate, KeyParams, toApiKeyResponse } from './model.ts'
import * as keys from './service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['API keys']

export const apiKeysModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug/api-keys' })
    .use(authPlugin(ctx))
    .post('', async ({ workspace, member, body, set }) => {
      const { key, secret } = await keys.createApiKey(ctx.db, workspace.id, member!.userId, body)
      set.status = 201
      return { ...toApiKeyResponse(key), key: secret }
    }, {
      params: WorkspaceSlugParams,
      body: APIKeyCreate,
      workspace: { role: 'admin' },
      response: { 201: APIKeyCreatedResponse },
      detail: { operationId: 'createApiKey', tags, summary: 'Create a key (admin, dashboard only); the full key is returned once', description: 'Dashboard session of an admin (API keys get 403 DASHBOARD_ONLY). The full `key` is in this response only; the server keeps its SHA-256 and the first characters (`start`) to recognise it.' },
    })
    .get('', async ({ workspace }) => (await keys.listApiKeys(ctx.db, workspace.id)).map(toApiKeyResponse), {
      params: WorkspaceSlugParams,
      workspace: { role: 'admin' },
      response: { 200: t.Array(APIKeyResponse) },
      detail: { operationId: 'listApiKeys', tags, summary: 'Active keys (admin, dashboard only)', description: 'Dashboard session of an admin. Revoked keys are left out; the full key is never shown again.' },
    })
    .patch('/:key_id', async ({ workspace, params, body }) => toApiKeyResponse(await keys.updateScopes(ctx.db, workspace.id, params.key_id, body.scopes)), {
      params: KeyParams,
      body: APIKeyScopesUpdate,
      workspace: { role: 'admin' },
      response: { 200: APIKeyResponse },
      detail: { operationId: 'updateApiKeyScopes', tags, summary: 'Replace the scopes of a key', description: 'Dashboard session of an admin. The new list replaces the old one and applies to the key\'s next request.' },
    })
    .delete('/:key_id', async ({ workspace, params, set }) => {
      await keys.revokeApiKey(ctx.db, workspace.id, params.key_id)
      set.status = 204
    }, {
      params: KeyParams,
      workspace: { role: 'admin' },
      response: { 204: t.Void() },
      detail: { operationId: 'revokeApiKey', tags, summary: 'Revoke a key; the next request with it is 401', description: 'Dashboard session of an admin. Immediate: the key\'s next request is 401 INVALID_API_KEY. An unknown id is 404 NOT_FOUND.' },
    })
