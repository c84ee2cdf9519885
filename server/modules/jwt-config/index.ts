import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { JWTConfigCreate, JWTConfigResponse, JWTConfigUpdate, SecretRotation, TokenCheckRequest, TokenCheckResponse, toJwtConfigResponse } from './model.ts'
import * as config from './service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['JWT configuration']

/** How a workspace's backend identifies its end users (docs/api.md#credentials): admin, dashboard only. */
export const jwtConfigModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug/jwt-config' })
    .use(authPlugin(ctx))
    .post('', async ({ workspace, body, set }) => {
      const { row, secret } = await config.createJwtConfig(ctx, workspace.id, body)
      set.status = 201
      return toJwtConfigResponse(row, secret)
    }, {
      params: WorkspaceSlugParams,
      body: JWTConfigCreate,
      workspace: { role: 'admin' },
      response: { 201: JWTConfigResponse },
      detail: { operationId: 'createJwtConfig', tags, summary: 'Configure identify (admin, dashboard only)', description: 'HS256: the service generates the secret and returns it in `secret`, only in this response; store it on your backend. RS256, ES256, EdDSA: give `public_key` (PEM) or `jwks_url`. A second configuration is 409; change it with PATCH.' },
    })
    .get('', async ({ workspace }) => toJwtConfigResponse(await config.getJwtConfig(ctx, workspace.id)), {
      params: WorkspaceSlugParams,
      workspace: { role: 'admin' },
      response: { 200: JWTConfigResponse },
      detail: { operationId: 'getJwtConfig', tags, summary: 'The JWT configuration (the secret is never shown again)', description: '404 when the workspace has none.' },
    })
    .patch('', async ({ workspace, body }) => {
      const { row, secret } = await config.updateJwtConfig(ctx, workspace.id, body)
      return toJwtConfigResponse(row, secret)
    }, {
      params: WorkspaceSlugParams,
      body: JWTConfigUpdate,
      workspace: { role: 'admin' },
      response: { 200: JWTConfigResponse },
      detail: { operationId: 'updateJwtConfig', tags, summary: 'Change the algorithm, key source, issuer or audience', description: '`null` clears issuer, audience or a key source. A `public_key` replaces a `jwks_url` and the other way round. Switching to HS256 generates a secret (in `secret`, only in this response); switching away drops it.' },
    })
    .post('/rotate-secret', async ({ workspace, body }) => {
      const { row, secret } = await config.rotateSecret(ctx, workspace.id, body?.overlap_seconds)
      return toJwtConfigResponse(row, secret)
    }, {
      params: WorkspaceSlugParams,
      body: SecretRotation,
      workspace: { role: 'admin' },
      response: { 200: JWTConfigResponse },
      detail: { operationId: 'rotateJwtSecret', tags, summary: 'Rotate the HS256 secret', description: 'Returns the new secret once. The previous secret keeps verifying for `overlap_seconds` (default 24 h; 0 revokes it at once) so backends can switch without downtime; `previous_secret_expires_at` tells until when. 409 for other algorithms.' },
    })
    .post('/check', ({ workspace, body }) => config.checkToken(ctx, workspace.id, body.token), {
      params: WorkspaceSlugParams,
      body: TokenCheckRequest,
      workspace: { role: 'admin' },
      response: { 200: TokenCheckResponse },
      detail: { operationId: 'checkJwtToken', tags, summary: 'Check an identify token: accepted, or exactly why not', description: 'Verifies the token as identify would (algorithm, signature, exp, sub, issuer, audience, 24 h lifetime) and answers 200 either way: `accepted` with the claims, or `reason` in words. Signs no one in. 404 when the workspace has no JWT configuration.' },
    })
