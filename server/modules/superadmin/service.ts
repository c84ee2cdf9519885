import { eq, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import type { Db } from '../../db/client.ts'
import { users, workspaces, type Plan, type SubscriptionStatus } from '../../db/schema/index.ts'
import { ApiError, notFound } from '../../errors.ts'
import { deriveKey } from '../../lib/secrets.ts'
import { signJwt, verifyJwt } from '../../lib/jwt.ts'
import type { SessionUser } from '../../plugins/credentials.ts'
import { consumeAuthToken, createAuthToken, issueSession, TOKEN_LIFETIMES } from '../auth/service.ts'

const AUDIENCE = 'chorus:impersonation'

export function assertSuperadmin(ctx: AppContext, user: SessionUser) {
  if (!user.emailVerified || !ctx.config.superadminEmails.includes(user.email)) throw new ApiError('FORBIDDEN', 'Superadmins only')
}

export interface SubscriptionChange {
  plan?: Plan
  subscription_status?: SubscriptionStatus
  comped?: boolean
  past_due_since?: string | null
  current_period_end?: string | null
}

const date = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : new Date(value))

export async function setSubscription(db: Db, slug: string, change: SubscriptionChange) {
  const [workspace] = await db.update(workspaces).set({
    ...(change.plan !== undefined && { plan: change.plan }),
    ...(change.subscription_status !== undefined && { subscriptionStatus: change.subscription_status }),
    ...(change.comped !== undefined && { comped: change.comped }),
    ...(change.past_due_since !== undefined && { pastDueSince: date(change.past_due_since) }),
    ...(change.current_period_end !== undefined && { currentPeriodEnd: date(change.current_period_end) }),
    updatedAt: sql`now()`,
  }).where(eq(workspaces.slug, slug)).returning()
  if (!workspace) throw notFound('Workspace')
  return workspace
}

const impersonationKey = (ctx: AppContext) => deriveKey(ctx.config.secretKey, 'impersonation-token')

/** A 5-minute JWT naming the target (`act_as`) and the superadmin (`actor`); its jti is stored so it works once. */
export async function mintImpersonationToken(ctx: AppContext, actor: SessionUser, targetUserId: string) {
  const [target] = await ctx.db.select().from(users).where(eq(users.id, targetUserId))
  if (!target) throw notFound('User')
  if (ctx.config.superadminEmails.includes(target.email)) throw new ApiError('FORBIDDEN', 'Superadmins cannot be impersonated')
  const jti = await createAuthToken(ctx.db, { purpose: 'impersonation', email: target.email, userId: target.id, data: { actor: actor.id } })
  const token = await signJwt({
    key: await impersonationKey(ctx),
    issuer: ctx.config.baseUrl,
    audience: AUDIENCE,
    subject: target.id,
    expiresInSeconds: TOKEN_LIFETIMES.impersonation,
    claims: { act_as: target.id, actor: actor.id, jti },
  })
  ctx.log.warn('impersonation token minted', { actor: actor.id, act_as: target.id })
  return { token, expires_at: new Date(Date.now() + TOKEN_LIFETIMES.impersonation * 1000).toISOString() }
}

/** Exchanges the token for a session as the target that lasts at most 1 h, records the actor, and cannot refresh. */
export async function applyImpersonation(ctx: AppContext, token: string, userAgent: string | null) {
  const refused = () => new ApiError('UNAUTHENTICATED', 'The impersonation token is invalid, expired or already used')
  const claims = await verifyJwt(token, await impersonationKey(ctx), ctx.config.baseUrl, AUDIENCE)
  if (!claims || typeof claims.jti !== 'string' || typeof claims.act_as !== 'string' || typeof claims.actor !== 'string') throw refused()
  const row = await consumeAuthToken(ctx.db, 'impersonation', claims.jti)
  if (!row || row.userId !== claims.act_as || row.data.actor !== claims.actor) throw refused()
  const [user] = await ctx.db.select().from(users).where(eq(users.id, claims.act_as))
  if (!user) throw refused()
  const session = await issueSession(ctx, user.id, { impersonatorId: claims.actor, userAgent })
  ctx.log.warn('impersonation session started', { actor: claims.actor, act_as: user.id, session_id: session.sessionId })
  return { user, session }
}
