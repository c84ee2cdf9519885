import { and, eq, sql } from 'drizzle-orm'
import { decodeJwt, type JWTPayload } from 'jose'
import type { AppContext } from '../../context.ts'
import { endUsers, workspaces } from '../../db/schema/index.ts'
import { ApiError, conflict, invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { signJwt, verifyJwt } from '../../lib/jwt.ts'
import { findJwtConfig } from '../jwt-config/service.ts'
import { verifyCustomerToken } from '../jwt-config/verify.ts'
import { companyClaims } from '../companies/claims.ts'
import { setEndUserCompanies } from '../companies/service.ts'

/** Widget session tokens: their own `typ`, audience and derived key, so no other token kind passes for one (nor the reverse). */
export const WIDGET_SESSION_TYP = 'chorus-widget+jwt'
export const WIDGET_SESSION_AUDIENCE = 'chorus:widget'
export const WIDGET_SESSION_SECONDS = 24 * 3600

export async function workspaceBySlug(ctx: AppContext, slug: string) {
  const [workspace] = await ctx.db.select().from(workspaces).where(eq(workspaces.slug, slug))
  if (!workspace) throw notFound('Workspace')
  return workspace
}

type Profile = { email?: string | null; name?: string | null; avatarUrl?: string | null; company?: string | null }

/** The optional profile claims; present ones must be strings of sane length (a malformed one is the integrator's bug: 422). */
function profileOf(payload: JWTPayload): Profile {
  const claim = (name: string, max: number, check?: (value: string) => boolean) => {
    const value = payload[name]
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'string' || value.length > max || (check && !check(value))) {
      throw invalid(['body', 'token', name], `The token's ${name} claim must be ${check ? 'a valid ' + (name === 'email' ? 'e-mail address' : 'http(s) URL') : 'a string'} of at most ${max} characters`)
    }
    return value.trim() || null
  }
  const email = claim('email', 254, (value) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value))
  return {
    email: email === undefined ? undefined : email?.toLowerCase() ?? null,
    name: claim('name', 200),
    avatarUrl: claim('avatar_url', 2048, (value) => /^https?:\/\//i.test(value)),
  }
}

/**
 * Verifies the customer's token with the workspace's JWT configuration, upserts the end user by
 * (workspace, sub) with the claims it carries (absent claims keep what was stored), and mints a widget session.
 */
export async function identify(ctx: AppContext, workspaceSlug: string, token: string) {
  const workspace = await workspaceBySlug(ctx, workspaceSlug)
  const config = await findJwtConfig(ctx, workspace.id)
  if (!config) throw conflict('This workspace has no JWT configuration, so identify is off; an admin sets it up under /workspaces/{slug}/jwt-config')
  const payload = await verifyCustomerToken(ctx, config, token)
  // `company`/`companies` never fail identify: see companyClaims for the rule.
  const claims = companyClaims(payload)
  const profile: Profile = { ...profileOf(payload), ...(claims.label !== undefined && { company: claims.label }) }
  // The end user and their companies in one transaction: nothing half-written.
  const row = await ctx.db.transaction(async (tx) => {
    const [row] = await tx.insert(endUsers).values({ id: newId('endUser'), workspaceId: workspace.id, externalId: payload.sub, ...profile, verifiedAt: sql`now()` })
      .onConflictDoUpdate({ target: [endUsers.workspaceId, endUsers.externalId], set: { ...profile, verifiedAt: sql`coalesce(${endUsers.verifiedAt}, now())`, updatedAt: sql`now()` } })
      .returning()
    if (claims.companies) await setEndUserCompanies(tx, workspace.id, row!.id, claims.companies)
    return row
  })
  return { endUser: row!, ...(await mintWidgetSession(ctx, workspace.id, row!)) }
}

/**
 * A 24-hour widget session for an end user. One minted while the identity is unverified carries `uv`:
 * it stops working once the address is confirmed, so a session handed to whoever first typed the
 * address never turns into a session of the confirmed customer.
 */
export async function mintWidgetSession(ctx: AppContext, workspaceId: string, endUser: { id: string; verifiedAt: Date | null }) {
  const sessionToken = await signJwt({
    key: ctx.keys.widgetSession,
    issuer: ctx.config.baseUrl,
    audience: WIDGET_SESSION_AUDIENCE,
    typ: WIDGET_SESSION_TYP,
    subject: endUser.id,
    expiresInSeconds: WIDGET_SESSION_SECONDS,
    claims: endUser.verifiedAt ? { ws: workspaceId } : { ws: workspaceId, uv: true },
  })
  return { sessionToken, expiresAt: new Date(decodeJwt(sessionToken).exp! * 1000) }
}

/** The end user behind a widget session token of this workspace; 401 for any other token. */
export async function endUserFromSession(ctx: AppContext, workspaceId: string, token: string) {
  const claims = await verifyJwt(token, ctx.keys.widgetSession, ctx.config.baseUrl, WIDGET_SESSION_AUDIENCE, WIDGET_SESSION_TYP)
  if (!claims) throw new ApiError('UNAUTHENTICATED', 'The session token is invalid or expired: call identify again (API keys and dashboard tokens do not work here)')
  if (claims.ws !== workspaceId) throw new ApiError('UNAUTHENTICATED', 'This session token belongs to another workspace')
  const [row] = await ctx.db.select().from(endUsers).where(and(eq(endUsers.id, claims.sub!), eq(endUsers.workspaceId, workspaceId)))
  if (!row) throw new ApiError('UNAUTHENTICATED', 'The end user of this session no longer exists: call identify again')
  if (claims.uv === true && row.verifiedAt) throw new ApiError('UNAUTHENTICATED', 'This e-mail address was confirmed since this session began: confirm it by e-mail (POST /public/{workspace_slug}/visitors) for a new session')
  return row
}

/**
 * The end user of an optional `Authorization: Bearer <session token>` on a public read (to personalise
 * it). Reads never fail on a credential: a missing, malformed, expired or foreign token (or an API key)
 * reads the anonymous view, whose missing `voted` tells the widget to drop its token.
 */
export async function sessionViewer(ctx: AppContext, workspaceSlug: string, authorization: string | null) {
  const token = authorization === null ? undefined : /^bearer\s+(\S+)$/i.exec(authorization.trim())?.[1]
  if (!token) return null
  const workspace = await workspaceBySlug(ctx, workspaceSlug)
  try {
    return (await endUserFromSession(ctx, workspace.id, token)).id
  } catch (error) {
    if (error instanceof ApiError) return null
    throw error
  }
}
