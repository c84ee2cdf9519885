import { and, eq, isNull, sql } from 'drizzle-orm'
import { decodeJwt } from 'jose'
import type { AppContext } from '../context.ts'
import { isTransaction, type Db, type Tx } from '../db/client.ts'
import { compiled } from '../db/compiled.ts'
import { endUsers, workspaces } from '../db/schema/index.ts'
import { ApiError, notFound } from '../errors.ts'
import { newId } from '../lib/ids.ts'
import { signJwt, verifyJwt } from '../lib/jwt.ts'
import { randomToken } from '../lib/secrets.ts'

// End-user identity, below the plugins (docs/architecture.md): the workspace of a public route, the
// anonymous identity of an address, and widget sessions. The `endUser` macro (plugins/auth.ts) and the
// feature modules (end-users, visitors, portal, public, feedback) all use this one home; it imports
// no feature module. The rules it keeps are in docs/security.md#end-user-identity.

/**
 * An end user writing through the public routes: identified by a widget session (`endUserId`) or
 * anonymous by e-mail (resolved, or created, inside the write's transaction).
 */
export type EndUserCaller = { kind: 'end_user'; endUserId: string } | { kind: 'end_user'; email: string }

export async function workspaceBySlug(ctx: AppContext, slug: string) {
  const [workspace] = await ctx.db.select().from(workspaces).where(eq(workspaces.slug, slug))
  if (!workspace) throw notFound('Workspace')
  return workspace
}

const param = sql.placeholder
const insertAnonymousEndUser = compiled('insert_anonymous_end_user', (db) =>
  db.insert(endUsers).values({ id: param('id'), workspaceId: param('workspaceId'), email: param('email'), verifiedAt: sql`case when ${param('vouched')}::boolean then now() end` })
    .onConflictDoNothing({ target: [endUsers.workspaceId, endUsers.email], where: sql`external_id is null` }))
const anonymousEndUser = compiled('anonymous_end_user', (db) =>
  db.select().from(endUsers).where(and(eq(endUsers.workspaceId, param('workspaceId')), eq(endUsers.email, param('email')), isNull(endUsers.externalId))))

/**
 * The anonymous end user of an address, created when new. `vouched`: a member or key names it, so the
 * workspace stands behind it and a new identity starts verified; a visitor's own address starts unverified.
 */
export async function endUserByEmail(db: Db | Tx, workspaceId: string, rawEmail: string, vouched = false) {
  const email = rawEmail.trim().toLowerCase()
  const insert = () => insertAnonymousEndUser(db).execute({ id: newId('endUser'), workspaceId, email, vouched })
  const read = () => anonymousEndUser(db).execute({ workspaceId, email })
  // In a transaction both go out together (pipelined on PostgreSQL, the read after the insert on the same
  // connection); on the pool they could run on two connections at once, so there the read waits.
  const [row] = isTransaction(db) ? (await Promise.all([insert(), read()]))[1] : (await insert(), await read())
  return row!
}

/** Widget session tokens: their own `typ`, audience and derived key, so no other token kind passes for one (nor the reverse). */
export const WIDGET_SESSION_TYP = 'chorus-widget+jwt'
export const WIDGET_SESSION_AUDIENCE = 'chorus:widget'
export const WIDGET_SESSION_SECONDS = 24 * 3600

/**
 * A 24-hour widget session for an end user. One minted while the identity is unverified carries `uv`:
 * it stops working once the address is confirmed, so a session handed to whoever first typed the
 * address never turns into a session of the confirmed customer. It also carries its own id (`sid`),
 * recorded on the votes it casts: only that session may take them back.
 */
export async function mintWidgetSession(ctx: AppContext, workspaceId: string, endUser: { id: string; verifiedAt: Date | null }, sessionId = randomToken(12)) {
  const sessionToken = await signJwt({
    key: ctx.keys.widgetSession,
    issuer: ctx.config.baseUrl,
    audience: WIDGET_SESSION_AUDIENCE,
    typ: WIDGET_SESSION_TYP,
    subject: endUser.id,
    expiresInSeconds: WIDGET_SESSION_SECONDS,
    claims: endUser.verifiedAt ? { ws: workspaceId } : { ws: workspaceId, uv: true, sid: sessionId },
  })
  return { sessionToken, expiresAt: new Date(decodeJwt(sessionToken).exp! * 1000) }
}

/** The end user behind a widget session token of this workspace; 401 for any other token. */
export async function endUserFromSession(ctx: AppContext, workspaceId: string, token: string) {
  return (await widgetSession(ctx, workspaceId, token)).endUser
}

/** A widget session: its end user, and the session's id when it was minted for an unconfirmed identity (else null). */
export async function widgetSession(ctx: AppContext, workspaceId: string, token: string) {
  const claims = await verifyJwt(token, ctx.keys.widgetSession, ctx.config.baseUrl, WIDGET_SESSION_AUDIENCE, WIDGET_SESSION_TYP)
  if (!claims) throw new ApiError('UNAUTHENTICATED', 'The session token is invalid or expired: call identify again (API keys and dashboard tokens do not work here)')
  if (claims.ws !== workspaceId) throw new ApiError('UNAUTHENTICATED', 'This session token belongs to another workspace')
  const [row] = await ctx.db.select().from(endUsers).where(and(eq(endUsers.id, claims.sub!), eq(endUsers.workspaceId, workspaceId)))
  if (!row) throw new ApiError('UNAUTHENTICATED', 'The end user of this session no longer exists: call identify again')
  if (claims.uv === true && row.verifiedAt) throw new ApiError('UNAUTHENTICATED', 'This e-mail address was confirmed since this session began: confirm it by e-mail on this device (POST /public/{workspace_slug}/visitors) for a new session')
  return { endUser: row, unconfirmedSessionId: claims.uv === true ? String(claims.sid ?? '') : null }
}

/** An address-less, unverified identity: who writes when the address named is confirmed but not proven (docs/security.md). */
export async function standInIdentity(db: Db | Tx, workspaceId: string, name: string | null = null) {
  const [row] = await db.insert(endUsers).values({ id: newId('endUser'), workspaceId, email: null, name }).returning()
  return row!
}

type EndUserRow = typeof endUsers.$inferSelect

/** An anonymous write's two identities: who writes (`identity`) and the address named, whose owner the claim e-mail goes to (`address`). */
export interface AnonymousWriter { identity: EndUserRow; address: EndUserRow }

/**
 * Who an anonymous write (no session) acts as. An unconfirmed address: its own unverified identity. A
 * confirmed one: anyone can type it, only its owner can click the link, so the write gets an
 * address-less unverified stand-in. Both are answered alike (same status, body and headers, a session
 * and a claim), so the answer tells nobody whether an address is confirmed.
 */
export async function anonymousWriter(ctx: AppContext, workspaceId: string, email: string): Promise<AnonymousWriter> {
  const address = await endUserByEmail(ctx.db, workspaceId, email)
  return { identity: address.verifiedAt ? await standInIdentity(ctx.db, workspaceId) : address, address }
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
