import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import type { Db } from '../../db/client.ts'
import { authTokens, refreshTokens, sessions, users } from '../../db/schema/index.ts'
import { ApiError } from '../../errors.ts'
import { sendToGivenAddress, type MailMessage } from '../../lib/mail.ts'
import { randomToken, sha256Hex } from '../../lib/secrets.ts'
import { newId } from '../../lib/ids.ts'
import { signJwt } from '../../lib/jwt.ts'
import { ACCESS_AUDIENCE } from '../../identity/audiences.ts'

export const ACCESS_TOKEN_SECONDS = 15 * 60
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600
export const IMPERSONATED_SESSION_SECONDS = 3600
export const TOKEN_LIFETIMES = {
  magic_link: 15 * 60,
  verify_email: 24 * 3600,
  invitation: 7 * 24 * 3600,
  impersonation: 5 * 60,
} as const

export type AuthTokenPurpose = keyof typeof TOKEN_LIFETIMES

export interface IssuedSession {
  sessionId: string
  accessToken: string
  accessExpiresAt: Date
  /** Absent for impersonated sessions, which cannot refresh. */
  refreshToken?: string
  refreshExpiresAt?: Date
}

const secondsFromNow = (seconds: number) => new Date(Date.now() + seconds * 1000)

export const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** Stores the hash of a new single-use token and returns the token itself (to e-mail or hand over once). */
export async function createAuthToken(db: Db, input: { purpose: AuthTokenPurpose; email: string; userId?: string; data?: Record<string, unknown> }) {
  const token = randomToken()
  await db.insert(authTokens).values({
    tokenHash: await sha256Hex(token),
    purpose: input.purpose,
    email: input.email,
    userId: input.userId ?? null,
    data: input.data ?? {},
    expiresAt: secondsFromNow(TOKEN_LIFETIMES[input.purpose]),
  })
  return token
}

/** Marks the token used in the same statement that checks it, so two concurrent uses cannot both win. */
export async function consumeAuthToken(db: Db, purpose: AuthTokenPurpose, token: string) {
  const [row] = await db
    .update(authTokens)
    .set({ usedAt: sql`now()` })
    .where(and(eq(authTokens.tokenHash, await sha256Hex(token)), eq(authTokens.purpose, purpose), isNull(authTokens.usedAt), gt(authTokens.expiresAt, sql`now()`)))
    .returning()
  return row ?? null
}

/**
 * Sends a link's e-mail; when it does not go out, its token is deleted, and so is the account when this request
 * made it (`createdUserId`) and it still holds nothing: a refused request leaves nothing behind.
 */
const mailToken = (ctx: AppContext, token: string, message: MailMessage, loc: (string | number)[], createdUserId?: string) =>
  sendToGivenAddress(ctx.mail, message, loc, async () => {
    await deleteAuthToken(ctx.db, token)
    if (createdUserId) await deleteEmptyAccount(ctx.db, createdUserId)
  })

export async function deleteAuthToken(db: Db, token: string) {
  await db.delete(authTokens).where(eq(authTokens.tokenHash, await sha256Hex(token)))
}

/** The account of an address, made when it is new (`created`: by this call). */
export async function findOrCreateAccount(db: Db, email: string) {
  const [created] = await db.insert(users).values({ id: newId('user'), email }).onConflictDoNothing().returning()
  if (created) return { user: created, created: true }
  const [existing] = await db.select().from(users).where(eq(users.email, email))
  if (!existing) throw new Error('user vanished between insert and select')
  return { user: existing, created: false }
}

export const findOrCreateUser = async (db: Db, email: string) => (await findOrCreateAccount(db, email)).user

/**
 * Deletes an account a request made for an address its e-mail never reached, unless it already holds something:
 * a verified address, a session, a membership, or a link on its way (a request for the same address beside this
 * one found the account and sent its own). Without a session nobody has acted as it, so nothing else refers to it.
 */
export async function deleteEmptyAccount(db: Db, userId: string) {
  await db.execute(sql`delete from users u where u.id = ${userId} and not u.email_verified
    and not exists (select 1 from auth_tokens t where t.user_id = u.id)
    and not exists (select 1 from sessions s where s.user_id = u.id)
    and not exists (select 1 from members m where m.user_id = u.id)`)
}

export async function issueSession(ctx: AppContext, userId: string, options: { impersonatorId?: string; userAgent?: string | null } = {}): Promise<IssuedSession> {
  const sessionId = newId('session')
  const impersonated = options.impersonatorId !== undefined
  const refreshExpiresAt = secondsFromNow(impersonated ? IMPERSONATED_SESSION_SECONDS : REFRESH_TOKEN_SECONDS)
  await ctx.db.insert(sessions).values({
    id: sessionId,
    userId,
    impersonatorId: options.impersonatorId ?? null,
    userAgent: options.userAgent?.slice(0, 256) ?? null,
    expiresAt: refreshExpiresAt,
  })
  const access = await signAccess(ctx, userId, sessionId, impersonated ? Math.min(ACCESS_TOKEN_SECONDS * 4, IMPERSONATED_SESSION_SECONDS) : ACCESS_TOKEN_SECONDS, options.impersonatorId)
  if (impersonated) return { sessionId, ...access }
  const refreshToken = await storeRefreshToken(ctx.db, sessionId, refreshExpiresAt)
  return { sessionId, ...access, refreshToken, refreshExpiresAt }
}

async function signAccess(ctx: AppContext, userId: string, sessionId: string, seconds: number, impersonatorId?: string) {
  const accessToken = await signJwt({
    key: ctx.keys.accessToken,
    issuer: ctx.config.baseUrl,
    audience: ACCESS_AUDIENCE,
    subject: userId,
    expiresInSeconds: seconds,
    claims: impersonatorId ? { sid: sessionId, act: { sub: impersonatorId } } : { sid: sessionId },
  })
  return { accessToken, accessExpiresAt: secondsFromNow(seconds) }
}

async function storeRefreshToken(db: Db, sessionId: string, expiresAt: Date) {
  const token = randomToken()
  await db.insert(refreshTokens).values({ tokenHash: await sha256Hex(token), sessionId, expiresAt })
  return token
}

const invalidRefresh = () => new ApiError('UNAUTHENTICATED', 'The refresh token is invalid, expired or already used')

/**
 * Exchanges a refresh token for a new pair. A token that was already rotated means it leaked (or was
 * replayed): the whole session is revoked so that neither holder keeps access.
 */
export async function rotateRefreshToken(ctx: AppContext, token: string): Promise<IssuedSession> {
  const tokenHash = await sha256Hex(token)
  const [row] = await ctx.db
    .select({ rotatedAt: refreshTokens.rotatedAt, expiresAt: refreshTokens.expiresAt, session: sessions })
    .from(refreshTokens)
    .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
    .where(eq(refreshTokens.tokenHash, tokenHash))
  if (!row || row.session.revokedAt || row.expiresAt <= new Date() || row.session.impersonatorId) throw invalidRefresh()

  const [claimed] = await ctx.db
    .update(refreshTokens)
    .set({ rotatedAt: sql`now()` })
    .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.rotatedAt)))
    .returning({ sessionId: refreshTokens.sessionId })
  if (!claimed) {
    await revokeSession(ctx.db, row.session.id)
    ctx.log.warn('refresh token reuse detected; session revoked', { session_id: row.session.id, user_id: row.session.userId })
    throw invalidRefresh()
  }
  const refreshExpiresAt = secondsFromNow(REFRESH_TOKEN_SECONDS)
  await ctx.db.update(sessions).set({ expiresAt: refreshExpiresAt }).where(eq(sessions.id, row.session.id))
  const refreshToken = await storeRefreshToken(ctx.db, row.session.id, refreshExpiresAt)
  const access = await signAccess(ctx, row.session.userId, row.session.id, ACCESS_TOKEN_SECONDS)
  return { sessionId: row.session.id, ...access, refreshToken, refreshExpiresAt }
}

export async function revokeSession(db: Db, sessionId: string) {
  await db.update(sessions).set({ revokedAt: sql`now()` }).where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)))
}

/** Logout: revokes the session the refresh token belongs to; an unknown token is a no-op. */
export async function revokeByRefreshToken(db: Db, token: string) {
  const [row] = await db.select({ sessionId: refreshTokens.sessionId }).from(refreshTokens).where(eq(refreshTokens.tokenHash, await sha256Hex(token)))
  if (row) await revokeSession(db, row.sessionId)
  return row !== undefined
}

export function linkTo(ctx: AppContext, path: string, params: Record<string, string>) {
  const url = new URL(path, `${ctx.config.dashboardUrl}/`)
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  return url.toString()
}

export async function sendVerificationEmail(ctx: AppContext, user: { id: string; email: string }) {
  const token = await createAuthToken(ctx.db, { purpose: 'verify_email', email: user.email, userId: user.id })
  const link = linkTo(ctx, 'verify-email', { token })
  // The address is the signed-in user's own (`user.email`), not one in the request's body.
  await mailToken(ctx, token, {
    to: user.email,
    subject: 'Confirm your e-mail address for Chorus',
    text: `Confirm your e-mail address by opening this link within 24 hours:\n\n${link}\n`,
  }, ['user', 'email'])
}

/** Creates the account when the address is new and e-mails a 15-minute single-use link (docs/api.md#credentials). */
export async function requestMagicLink(ctx: AppContext, input: { email: string; redirect_to?: string }) {
  const email = normalizeEmail(input.email)
  const { user, created } = await findOrCreateAccount(ctx.db, email)
  const token = await createAuthToken(ctx.db, { purpose: 'magic_link', email, userId: user.id, data: { redirect_to: input.redirect_to ?? '/dashboard' } })
  const link = linkTo(ctx, 'auth/magic-link', { token })
  await mailToken(ctx, token, {
    to: email,
    subject: 'Your Chorus sign-in link',
    text: `Sign in to Chorus by opening this link within 15 minutes. It works once.\n\n${link}\n\nIf you did not ask for it, ignore this e-mail.`,
    html: `<p>Sign in to Chorus by opening this link within 15 minutes. It works once.</p><p><a href="${link}">Sign in to Chorus</a></p><p>If you did not ask for it, ignore this e-mail.</p>`,
  }, ['body', 'email'], created ? user.id : undefined)
}

/** Consumes the link, marks the address verified (the link proved it) and starts a session. */
export async function verifyMagicLink(ctx: AppContext, token: string, userAgent: string | null) {
  const row = await consumeAuthToken(ctx.db, 'magic_link', token)
  if (!row) throw new ApiError('UNAUTHENTICATED', 'The sign-in link is invalid, expired or already used')
  const user = await findOrCreateUser(ctx.db, row.email)
  const [verified] = await ctx.db.update(users).set({ emailVerified: true, updatedAt: sql`now()` }).where(eq(users.id, user.id)).returning()
  const session = await issueSession(ctx, user.id, { userAgent })
  const redirectTo = typeof row.data.redirect_to === 'string' ? row.data.redirect_to : '/dashboard'
  return { user: verified ?? user, session, redirectTo }
}

export async function verifyEmail(ctx: AppContext, token: string) {
  const row = await consumeAuthToken(ctx.db, 'verify_email', token)
  if (!row?.userId) throw new ApiError('UNAUTHENTICATED', 'The verification link is invalid, expired or already used')
  await ctx.db.update(users).set({ emailVerified: true, updatedAt: sql`now()` }).where(and(eq(users.id, row.userId), eq(users.email, row.email)))
}
