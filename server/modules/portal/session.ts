import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { toBase64Url, timingSafeEqual } from '../../lib/secrets.ts'
import { cookieValue } from '../../lib/http-headers.ts'
import { enforceRateRules } from '../../plugins/rate-limit.ts'
import { requestOrigin } from '../../plugins/request.ts'
import { IDENTIFY_LIMITS } from '../end-users/index.ts'
import { endUserFromSession, workspaceBySlug, WIDGET_SESSION_SECONDS } from '../../identity/end-users.ts'
import { identify } from '../end-users/service.ts'
import { portalPath } from './links.ts'

// A portal visitor is anonymous, or identified by the customer's token (`?sso_token=`) through the same
// identify service as the widget. The resulting widget session token lives in an HttpOnly cookie scoped to
// the workspace's portal, and is the bearer the end-user write path checks, like the widget's header.

export const SESSION_COOKIE = 'chorus_portal'

export interface Visitor {
  endUserId: string
  name: string | null
  /** The widget session token from the cookie: what the write path verifies. */
  token: string
  /** The per-session form token (hidden field `csrf`). */
  csrf: string
}

const encoder = new TextEncoder()

export function sessionCookie(ctx: AppContext, slug: string, token: string | null) {
  const attributes = [`Path=${portalPath(slug)}`, 'HttpOnly', 'SameSite=Lax', token ? `Max-Age=${WIDGET_SESSION_SECONDS}` : 'Max-Age=0', ...(ctx.config.secureCookies ? ['Secure'] : [])]
  return `${SESSION_COOKIE}=${token ?? ''}; ${attributes.join('; ')}`
}

/** A form token bound to the session: an HMAC of the session token, so it needs no storage and dies with the session. */
async function csrfFor(ctx: AppContext, token: string) {
  const key = await crypto.subtle.importKey('raw', new Uint8Array(await ctx.secrets.deriveKey('portal-csrf')), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return toBase64Url(new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(token))))
}

/** The identified visitor behind the cookie; null when there is none or it no longer verifies (expired, other workspace). */
export async function visitorOf(ctx: AppContext, slug: string, request: Request): Promise<Visitor | null> {
  const token = cookieValue(request.headers, SESSION_COOKIE)
  if (!token) return null
  try {
    const workspace = await workspaceBySlug(ctx, slug)
    const endUser = await endUserFromSession(ctx, workspace.id, token)
    return { endUserId: endUser.id, name: endUser.name, token, csrf: await csrfFor(ctx, token) }
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'UNAUTHENTICATED' || error.code === 'NOT_FOUND')) return null
    throw error
  }
}

/** `?sso_token=`: the customer's JWT, verified with the workspace's JWT configuration; rate-limited like identify. */
export async function signInWithToken(ctx: AppContext, slug: string, token: string, clientIp: string, headers: Record<string, string | number>) {
  await enforceRateRules(ctx, headers, IDENTIFY_LIMITS, { clientIp, body: null })
  const { sessionToken } = await identify(ctx, slug, token)
  return sessionToken
}

/**
 * CSRF defence of the portal's forms: a cross-site Origin (or Sec-Fetch-Site) is refused for everyone; an
 * identified visitor's form must also carry the session's token. Anonymous forms carry no ambient
 * authority (the visitor types their e-mail), so the origin check is all they need.
 */
export function formAllowed(ctx: AppContext, request: Request, visitor: Visitor | null, field: unknown) {
  const allowed = new Set([new URL(ctx.config.baseUrl).origin, new URL(request.url).origin, ...ctx.config.allowedOrigins])
  if (requestOrigin(request, allowed) === 'foreign') return false
  if (!visitor) return true
  return typeof field === 'string' && timingSafeEqual(field, visitor.csrf)
}
