import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import type { RateRule } from '../../plugins/rate-limit.ts'
import { IdentifyRequest, IdentifyResponse, toEndUserResponse } from './model.ts'
import { identify } from './service.ts'
import { PublicWorkspaceParams } from '../../lib/schema.ts'

const tags = ['End users']
/** Per IP: the route and the portal's `?sso_token=` share this budget. */
export const IDENTIFY_LIMITS: RateRule[] = [{ name: 'identify:ip', by: ({ clientIp }) => clientIp }]

/** `POST /workspaces/{slug}/identify`: no credential; the customer's signed token is the proof. */
export const identifyModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    // The CORS preflight (headers from plugins/cors.ts): the widget identifies from the customer's origin.
    .options('/workspaces/:workspace_slug/identify', ({ set }) => {
      set.status = 204
    }, { detail: { hide: true } })
    .post('/workspaces/:workspace_slug/identify', async ({ params, body }) => {
      const { endUser, sessionToken, expiresAt } = await identify(ctx, params.workspace_slug, body.token)
      return { ...toEndUserResponse(endUser), company: endUser.company, session_token: sessionToken, session_expires_at: expiresAt.toISOString() }
    }, {
      rateLimit: IDENTIFY_LIMITS,
      params: PublicWorkspaceParams,
      body: IdentifyRequest,
      response: { 200: IdentifyResponse },
      detail: {
        operationId: 'identifyEndUser',
        tags,
        security: [],
        summary: 'Identify an end user with a token signed by your backend',
        description: [
          "Verifies `token` with the workspace's JWT configuration: the algorithm is pinned to the configured one, `sub` and `exp` are required, `exp` may be at most 24 h ahead, and `iss`/`aud` must match when configured.",
          'Upserts the end user by (workspace, `sub`) with the optional `email`, `name`, `avatar_url` and `company` claims, and returns it with a 24-hour `session_token` for the public write routes.',
          'A forged, expired, exp-less, unsigned (`alg: none`) or too long-lived token is 401 UNAUTHENTICATED with the reason; a workspace without a JWT configuration is 409 CONFLICT. Limited per IP (RATE_LIMIT_PER_IP a minute). CORS: any origin.',
        ].join(' '),
      },
    })
