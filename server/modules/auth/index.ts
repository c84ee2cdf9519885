import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { enforceRateRules, type RateRule } from '../../plugins/rate-limit.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { toUserResponse, UserResponse } from '../user/model.ts'
import { clearSessionCookies, setSessionCookies } from './cookies.ts'
import { MagicLinkRequest, MagicLinkVerifyRequest, SessionCookies, StatusResponse, TokenRequest, TokenResponse } from './model.ts'
import * as auth from './service.ts'

const tags = ['Auth']
const cookieOnly = [{ cookieAuth: [] }]
const MAGIC_LINK_LIMITS: RateRule[] = [
  { name: 'magic-link:ip', by: ({ clientIp }) => clientIp },
  { name: 'magic-link:email', by: ({ body }) => auth.normalizeEmail(body.email), limit: 5, windowSeconds: 15 * 60 },
]
export const RESEND_LIMITS: RateRule[] = [{ name: 'verify-email', by: ({ user }) => user!.id, limit: 5, windowSeconds: 15 * 60 }]

/** Every way to ask for a sign-in link (this API, the built-in sign-in page) shares these limits. */
export async function sendMagicLink(ctx: AppContext, headers: Record<string, string | number>, clientIp: string, input: { email: string; redirect_to?: string }) {
  await enforceRateRules(ctx, headers, MAGIC_LINK_LIMITS, { clientIp, body: input })
  await auth.requestMagicLink(ctx, input)
}

export const authModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/auth' })
    .use(requestPlugin(ctx))
    .use(authPlugin(ctx))
    .post('/magic-link', async ({ body }) => {
      await auth.requestMagicLink(ctx, body)
      return { status: 'sent' }
    }, {
      rateLimit: MAGIC_LINK_LIMITS,
      body: MagicLinkRequest,
      response: { 200: StatusResponse },
      detail: { operationId: 'requestMagicLink', tags, security: [], summary: 'E-mail a sign-in link', description: 'Creates the account when the address is new. The link carries a 15-minute single-use `token`. Limited per IP (RATE_LIMIT_PER_IP a minute) and per address (5 per 15 minutes). When the e-mail does not go out no link stays live, nor the account made for a new address: an address the mail server refuses is 422 `value_error.email_refused` on `body.email`, a message it refuses 502 UPSTREAM_ERROR, a server that does not answer 503 with Retry-After.' },
    })
    .post('/magic-link/verify', async ({ body, cookie, request }) => {
      const { user, session } = await auth.verifyMagicLink(ctx, body.token, request.headers.get('user-agent'))
      setSessionCookies(cookie, session, ctx.config)
      return toUserResponse(user, ctx.config.baseUrl)
    }, {
      body: MagicLinkVerifyRequest,
      cookie: SessionCookies,
      response: { 200: UserResponse },
      detail: { operationId: 'verifyMagicLink', tags, security: [], summary: 'Exchange a sign-in link token for session cookies', description: 'Exchanges the single-use token from the sign-in e-mail for the `access_token` (15 minutes) and rotating `refresh_token` (30 days) cookies, and marks the address verified. An invalid, expired or used token is 401 UNAUTHENTICATED.' },
    })
    .post('/refresh', async ({ cookie }) => {
      const token = cookie.refresh_token?.value
      if (!token) throw new ApiError('UNAUTHENTICATED', 'The refresh_token cookie is missing')
      const session = await auth.rotateRefreshToken(ctx, token)
      setSessionCookies(cookie, session, ctx.config)
      return {
        token_type: 'cookie' as const,
        expires_in: auth.ACCESS_TOKEN_SECONDS,
        access_token_expires_at: session.accessExpiresAt.toISOString(),
        refresh_token_expires_at: session.refreshExpiresAt!.toISOString(),
      }
    }, {
      cookie: SessionCookies,
      response: { 200: TokenResponse },
      detail: { operationId: 'refreshSession', tags, security: [{ refreshCookie: [] }], summary: 'Rotate the refresh token', description: 'Every refresh issues a new refresh token. Presenting an already-rotated token revokes the whole session (reuse detection).' },
    })
    .post('/logout', async ({ cookie }) => {
      const token = cookie.refresh_token?.value
      if (!token) throw new ApiError('UNAUTHENTICATED', 'The refresh_token cookie is missing')
      await auth.revokeByRefreshToken(ctx.db, token)
      clearSessionCookies(cookie, ctx.config)
      return { status: 'logged_out' }
    }, {
      cookie: SessionCookies,
      response: { 200: StatusResponse },
      detail: { operationId: 'logout', tags, security: [{ refreshCookie: [] }], summary: 'Revoke the session and clear its cookies', description: 'Revokes the refresh token\'s session and clears both cookies. Succeeds without a session too, so it can always be called.' },
    })
    .post('/verify-email', async ({ body }) => {
      await auth.verifyEmail(ctx, body.token)
      return { status: 'verified' }
    }, {
      body: TokenRequest,
      response: { 200: StatusResponse },
      detail: { operationId: 'verifyEmail', tags, security: [], summary: 'Confirm an e-mail address with the token from the verification e-mail', description: 'Marks the address of the token\'s user verified. An invalid, expired or used token is 401 UNAUTHENTICATED.' },
    })
    .post('/resend-verification', async ({ user }) => {
      if (user.emailVerified) return { status: 'already_verified' }
      await auth.sendVerificationEmail(ctx, user)
      return { status: 'sent' }
    }, {
      user: true,
      rateLimit: RESEND_LIMITS,
      response: { 200: StatusResponse },
      detail: { operationId: 'resendVerification', tags, security: cookieOnly, summary: 'Send the e-mail verification link again', description: 'E-mails a new verification link to the signed-in user\'s address. An address the mail server refuses is 422 `value_error.email_refused` on `user.email`; a refused message is 502 UPSTREAM_ERROR, a server that does not answer 503.' },
    })
    .get('/me', ({ user }) => toUserResponse(user, ctx.config.baseUrl), {
      user: true,
      response: { 200: UserResponse },
      detail: { operationId: 'getCurrentUser', tags, security: cookieOnly, summary: 'The signed-in user', description: 'The dashboard user behind the session cookie. Dashboard session only: API keys get 403 DASHBOARD_ONLY.' },
    })
