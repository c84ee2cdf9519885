import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { enforceRateLimit } from '../../plugins/rate-limit.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { toUserResponse, UserResponse } from '../user/model.ts'
import { clearSessionCookies, setSessionCookies } from './cookies.ts'
import { MagicLinkRequest, MagicLinkVerifyRequest, SessionCookies, StatusResponse, TokenRequest, TokenResponse } from './model.ts'
import * as auth from './service.ts'

const tags = ['Auth']
const cookieOnly = [{ cookieAuth: [] }]

export const authModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/auth' })
    .use(requestPlugin(ctx))
    .use(authPlugin(ctx))
    .post('/magic-link', async ({ body, clientIp, set }) => {
      await enforceRateLimit(ctx, set.headers, `magic-link:ip:${clientIp}`, ctx.config.rateLimitPerIp)
      await enforceRateLimit(ctx, set.headers, `magic-link:email:${auth.normalizeEmail(body.email)}`, 5, 15 * 60)
      await auth.requestMagicLink(ctx, body)
      return { status: 'sent' }
    }, {
      body: MagicLinkRequest,
      response: { 200: StatusResponse },
      detail: { operationId: 'requestMagicLink', tags, security: [], summary: 'E-mail a sign-in link', description: 'Creates the account when the address is new. The link carries a 15-minute single-use `token`. Limited per IP (RATE_LIMIT_PER_IP a minute) and per address (5 per 15 minutes).' },
    })
    .post('/magic-link/verify', async ({ body, cookie, request }) => {
      const { user, session } = await auth.verifyMagicLink(ctx, body.token, request.headers.get('user-agent'))
      setSessionCookies(cookie, session, ctx.config)
      return toUserResponse(user, ctx.config.baseUrl)
    }, {
      body: MagicLinkVerifyRequest,
      cookie: SessionCookies,
      response: { 200: UserResponse },
      detail: { operationId: 'verifyMagicLink', tags, security: [], summary: 'Exchange a sign-in link token for session cookies' },
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
      detail: { operationId: 'logout', tags, security: [{ refreshCookie: [] }], summary: 'Revoke the session and clear its cookies' },
    })
    .post('/verify-email', async ({ body }) => {
      await auth.verifyEmail(ctx, body.token)
      return { status: 'verified' }
    }, {
      body: TokenRequest,
      response: { 200: StatusResponse },
      detail: { operationId: 'verifyEmail', tags, security: [], summary: 'Confirm an e-mail address with the token from the verification e-mail' },
    })
    .post('/resend-verification', async ({ user, set }) => {
      if (user.emailVerified) return { status: 'already_verified' }
      await enforceRateLimit(ctx, set.headers, `verify-email:${user.id}`, 5, 15 * 60)
      await auth.sendVerificationEmail(ctx, user)
      return { status: 'sent' }
    }, {
      user: true,
      response: { 200: StatusResponse },
      detail: { operationId: 'resendVerification', tags, security: cookieOnly, summary: 'Send the e-mail verification link again' },
    })
    .get('/me', ({ user }) => toUserResponse(user, ctx.config.baseUrl), {
      user: true,
      response: { 200: UserResponse },
      detail: { operationId: 'getCurrentUser', tags, security: cookieOnly, summary: 'The signed-in user' },
    })
