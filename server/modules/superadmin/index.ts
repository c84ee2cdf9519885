import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { setSessionCookies } from '../auth/cookies.ts'
import { SessionCookies } from '../auth/model.ts'
import { toUserResponse, UserResponse } from '../user/model.ts'
import { toWorkspaceResponse, WorkspaceResponse } from '../workspaces/model.ts'
import { ImpersonateApplyRequest, ImpersonationTokenResponse, SubscriptionUpdate } from './model.ts'
import * as superadmin from './service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['Superadmin']

export const superadminModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .patch('/superadmin/workspaces/:workspace_slug/subscription', async ({ user, params, body }) => {
      superadmin.assertSuperadmin(ctx, user)
      return toWorkspaceResponse(await superadmin.setSubscription(ctx.db, params.workspace_slug, body), null, ctx.config.baseUrl)
    }, {
      user: true,
      params: WorkspaceSlugParams,
      body: SubscriptionUpdate,
      response: { 200: WorkspaceResponse },
      detail: { operationId: 'setWorkspaceSubscription', tags, summary: 'Set plan, status, comped and billing dates (superadmins listed in SUPERADMIN_EMAILS)', description: 'Superadmins only (verified addresses listed in SUPERADMIN_EMAILS; anyone else gets 403 FORBIDDEN). Overrides what the billing provider set, e.g. to comp a workspace; at least one field is required.' },
    })
    .post('/superadmin/users/:id/impersonate', async ({ user, params }) => {
      superadmin.assertSuperadmin(ctx, user)
      return superadmin.mintImpersonationToken(ctx, user, params.id)
    }, {
      user: true,
      params: t.Object({ id: t.String({ maxLength: 64 }) }),
      response: { 200: ImpersonationTokenResponse },
      detail: { operationId: 'mintImpersonationToken', tags, summary: 'Mint a single-use, 5-minute impersonation token for a user', description: 'Superadmins only (verified addresses listed in SUPERADMIN_EMAILS; anyone else gets 403 FORBIDDEN). The token is applied with POST /auth/impersonate/apply.' },
    })
    .post('/auth/impersonate/apply', async ({ body, cookie, request }) => {
      const { user, session } = await superadmin.applyImpersonation(ctx, body.token, request.headers.get('user-agent'))
      setSessionCookies(cookie, session, ctx.config)
      return toUserResponse(user, ctx.config.baseUrl)
    }, {
      body: ImpersonateApplyRequest,
      cookie: SessionCookies,
      response: { 200: UserResponse },
      detail: { operationId: 'applyImpersonation', tags: ['Auth'], security: [], summary: 'Exchange an impersonation token for an access_token cookie (≤ 1 h, no refresh)', description: 'Exchanges a token minted by a superadmin (single use, 5 minutes) for an `access_token` cookie of the impersonated user, valid at most one hour and without a refresh token. A used or expired token is 401 UNAUTHENTICATED.' },
    })
