import { and, eq, gt, isNull, lt, or, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { endUsers, visitorConfirmations, type workspaces } from '../../db/schema/index.ts'
import { ApiError } from '../../errors.ts'
import { describeError } from '../../db/errors.ts'
import { newId } from '../../lib/ids.ts'
import { sendToGivenAddress, withWorkspaceLogo } from '../../lib/mail.ts'
import { randomToken, sha256Hex } from '../../lib/secrets.ts'
import { endUserByEmail } from '../../identity/end-users.ts'
import { CLAIM_EXPIRES_HEADER, CLAIM_ID_HEADER, SESSION_EXPIRES_HEADER, SESSION_TOKEN_HEADER, type EndUserContext } from '../../plugins/end-user-writer.ts'
import { fileUrl } from '../files/model.ts'
import { senderFor } from '../sending-domain/service.ts'
import { mintWidgetSession, workspaceBySlug, type AnonymousWriter } from '../../identity/end-users.ts'
import { toEndUserResponse } from '../end-users/model.ts'

type Workspace = typeof workspaces.$inferSelect
type EndUser = typeof endUsers.$inferSelect

// Why an anonymous address must be confirmed, and why a confirmed one needs its session: docs/widget.md.

export const LINK_TTL_SECONDS = 7 * 24 * 3600
export const CLAIM_TTL_SECONDS = 3600
const RESEND_AFTER = sql`interval '24 hours'`

const confirmLink = (ctx: AppContext, slug: string, token: string) =>
  `${ctx.config.baseUrl}/api/v1/public/${encodeURIComponent(slug)}/visitors/confirm?token=${token}`

/** Stores a new single-use link for `endUser` (and a claim when `claim`), then mails it. Returns the claim id. */
async function sendConfirmation(ctx: AppContext, workspace: Workspace, endUser: EndUser, claim: boolean) {
  const token = randomToken()
  const claimId = claim ? randomToken() : null
  const now = Date.now()
  const confirmationId = newId('visitorConfirmation')
  await ctx.db.insert(visitorConfirmations).values({
    id: confirmationId,
    workspaceId: workspace.id,
    endUserId: endUser.id,
    tokenHash: await sha256Hex(token),
    claimHash: claimId ? await sha256Hex(claimId) : null,
    expiresAt: new Date(now + LINK_TTL_SECONDS * 1000),
    claimExpiresAt: claimId ? new Date(now + CLAIM_TTL_SECONDS * 1000) : null,
  })
  const sender = await senderFor(ctx.db, ctx.secrets, workspace.id, workspace.name)
  const link = confirmLink(ctx, workspace.slug, token)
  // An address the mail server refuses is the caller's 422 on body.email (POST /visitors); a link that did not go
  // out is not left live.
  await sendToGivenAddress(ctx.mail, withWorkspaceLogo({
    to: endUser.email!,
    subject: `Confirm your e-mail address for ${workspace.name}`,
    text: `You (or someone using your address) gave feedback to ${workspace.name}.\n\nIf it was you, open this link: it confirms your address and signs you in on the device you wrote from: ${link}\n\nThe link works once and expires in 7 days. If it was not you, ignore this e-mail: nothing is done in your name.\n`,
    ...(sender ?? {}),
    workspaceId: workspace.id,
    headers: { 'Auto-Submitted': 'auto-generated' },
  }, { name: workspace.name, logoUrl: fileUrl(ctx.config.baseUrl, workspace.logoFileId) }), ['body', 'email'],
  () => ctx.db.delete(visitorConfirmations).where(eq(visitorConfirmations.id, confirmationId)))
  return claimId
}

/**
 * After an accepted anonymous write: a session for the identity that wrote, and, at most once a day per
 * address, the e-mail with a one-click link and a claim on it. Opening the link confirms the address and
 * lets the browser that wrote collect a confirmed session (`pollClaim`), so the visitor goes on as
 * themselves; the unconfirmed session itself never becomes a confirmed one. Whether the address was
 * confirmed before changes nothing in the answer. A mail failure does not undo the write.
 */
export async function afterAnonymousWrite(ctx: AppContext, workspace: Workspace, anonymous: AnonymousWriter, sessionId?: string) {
  const [due] = await ctx.db.update(endUsers).set({ confirmationSentAt: sql`now()` })
    .where(and(eq(endUsers.id, anonymous.address.id), or(isNull(endUsers.confirmationSentAt), lt(endUsers.confirmationSentAt, sql`now() - ${RESEND_AFTER}`))))
    .returning({ id: endUsers.id })
  const claimId = due
    ? await sendConfirmation(ctx, workspace, anonymous.address, true).catch((error) => {
      ctx.log.warn('visitor confirmation e-mail not sent', { endUserId: anonymous.address.id, error: describeError(error) })
      return null
    })
    : null
  const session = await mintWidgetSession(ctx, workspace.id, anonymous.identity, sessionId)
  return { ...session, claim: claimId ? { id: claimId, expiresAt: new Date(Date.now() + CLAIM_TTL_SECONDS * 1000) } : null }
}

/** After an anonymous write on a JSON route: its session, and the claim when one was started, in the response headers. */
export async function answerAnonymousWrite(ctx: AppContext, writer: EndUserContext, headers: Record<string, string | number>) {
  if (!writer.anonymous) return
  const session = await afterAnonymousWrite(ctx, writer.workspace, writer.anonymous, sessionIdOf(writer))
  headers[SESSION_TOKEN_HEADER] = session.sessionToken
  headers[SESSION_EXPIRES_HEADER] = session.expiresAt.toISOString()
  if (session.claim) {
    headers[CLAIM_ID_HEADER] = session.claim.id
    headers[CLAIM_EXPIRES_HEADER] = session.claim.expiresAt.toISOString()
  }
}

/** The id of the session an anonymous write's answer carries (recorded on the votes it cast). */
export const sessionIdOf = (writer: EndUserContext) => (writer.voteRemoval.kind === 'any' ? undefined : writer.voteRemoval.sessionId)

/** `POST /visitors`: a claim for the address, answered by polling once its link is clicked. */
export async function startClaim(ctx: AppContext, slug: string, email: string) {
  const workspace = await workspaceBySlug(ctx, slug)
  const endUser = await endUserByEmail(ctx.db, workspace.id, email)
  const claimId = (await sendConfirmation(ctx, workspace, endUser, true))!
  return { claim_id: claimId, expires_at: new Date(Date.now() + CLAIM_TTL_SECONDS * 1000).toISOString() }
}

const claimNotFound = () => new ApiError('NOT_FOUND', 'Claim not found: it is unknown, expired or already used; start again with POST /visitors')

/** `GET /visitors/{claim_id}`: pending until the link is clicked, then one session, once. */
export async function pollClaim(ctx: AppContext, slug: string, claimId: string) {
  const workspace = await workspaceBySlug(ctx, slug)
  const claimHash = await sha256Hex(claimId)
  const live = and(eq(visitorConfirmations.claimHash, claimHash), eq(visitorConfirmations.workspaceId, workspace.id), gt(visitorConfirmations.claimExpiresAt, sql`now()`), isNull(visitorConfirmations.claimedAt))
  const [row] = await ctx.db.select({ confirmedAt: visitorConfirmations.confirmedAt }).from(visitorConfirmations).where(live)
  if (!row) throw claimNotFound()
  if (!row.confirmedAt) return { status: 'pending' as const }
  // The update is the single-use check: of two concurrent polls, one gets the session.
  const [claimed] = await ctx.db.update(visitorConfirmations).set({ claimedAt: sql`now()` }).where(live).returning({ endUserId: visitorConfirmations.endUserId })
  if (!claimed) throw claimNotFound()
  const [endUser] = await ctx.db.select().from(endUsers).where(eq(endUsers.id, claimed.endUserId))
  if (!endUser) throw claimNotFound()
  const session = await mintWidgetSession(ctx, workspace.id, endUser)
  return { status: 'confirmed' as const, session_token: session.sessionToken, session_expires_at: session.expiresAt.toISOString(), end_user: toEndUserResponse(endUser) }
}

/**
 * The link in the e-mail: marks the identity verified (its posts and votes read as verified from then on,
 * since `verified` is derived from the identity) and the link used. Null when unknown, expired or used.
 */
export async function confirmVisitor(ctx: AppContext, slug: string, token: string) {
  const workspace = await workspaceBySlug(ctx, slug).catch(() => null)
  if (!workspace) return null
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx.update(visitorConfirmations).set({ confirmedAt: sql`now()` })
      .where(and(eq(visitorConfirmations.tokenHash, await sha256Hex(token)), eq(visitorConfirmations.workspaceId, workspace.id), isNull(visitorConfirmations.confirmedAt), gt(visitorConfirmations.expiresAt, sql`now()`)))
      .returning({ endUserId: visitorConfirmations.endUserId })
    if (!row) return null
    const [endUser] = await tx.update(endUsers).set({ verifiedAt: sql`coalesce(${endUsers.verifiedAt}, now())`, updatedAt: sql`now()` }).where(eq(endUsers.id, row.endUserId)).returning()
    return { workspace, endUser: endUser! }
  })
}
