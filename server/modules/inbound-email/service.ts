import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { Email, Mailbox } from 'postal-mime'
import type { AppContext } from '../../context.ts'
import type { Db } from '../../db/client.ts'
import { boards, endUsers, inboundEmails, members, notificationEvents, posts, users, workspaces } from '../../db/schema/index.ts'
import { ApiError, conflict, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { sha256Hex } from '../../lib/secrets.ts'
import { dashboardAccess } from '../../lib/subscription.ts'
import type { Workspace } from '../../plugins/credentials.ts'
import { enforceRateLimit } from '../../plugins/rate-limit.ts'
import { createComment } from '../comments/service.ts'
import { endUserByEmail, type FeedbackCaller } from '../feedback/actor.ts'
import { standInIdentity } from '../../identity/end-users.ts'
import { createPost } from '../posts/service.ts'
import { notificationIdOf } from './addresses.ts'
import { senderProof } from './authenticity.ts'
import { dropReason, referencedIds, stripQuotedReply, textOf, type DropReason } from './classify.ts'

export interface InboundResult {
  outcome: 'post' | 'comment' | 'duplicate' | 'dropped'
  post_id: string | null
  comment_id: string | null
  reason: DropReason | 'subscription_inactive' | null
}

const TITLE_MAX = 200
const POST_BODY_MAX = 20_000
const COMMENT_BODY_MAX = 10_000
const MESSAGE_ID_MAX = 255

const dropped = (reason: InboundResult['reason']): InboundResult => ({ outcome: 'dropped', post_id: null, comment_id: null, reason })

export async function workspaceByIntakeToken(db: Db, token: string): Promise<Workspace> {
  // Tokens are 32 lowercase hex characters; anything else cannot match and needs no query.
  const [workspace] = /^[0-9a-f]{32}$/.test(token) ? await db.select().from(workspaces).where(eq(workspaces.emailIntakeToken, token)) : []
  if (!workspace) throw notFound('Intake address')
  return workspace
}

/** A new token at once: the previous address stops working with this statement. */
export async function rotateIntakeToken(db: Db, workspaceId: string) {
  const [row] = await db.update(workspaces).set({ emailIntakeToken: sql`DEFAULT`, updatedAt: sql`now()` }).where(eq(workspaces.id, workspaceId)).returning()
  return row!
}

/**
 * The dedupe key: the Message-ID as sent, or (missing, or too long to store whole) a hash of it or of
 * the raw message, so a redelivered message is still recognised.
 */
async function dedupeKey(email: Email, raw: Uint8Array) {
  const id = email.messageId?.trim()
  if (id && id.length <= MESSAGE_ID_MAX) return id
  return `sha256:${await sha256Hex(id ?? new TextDecoder().decode(raw))}`
}

/** The board new mail lands on: `settings.default_board`, else the oldest public board, else the oldest board. */
async function defaultBoard(db: Db, workspace: Workspace) {
  const preferred = typeof workspace.settings.default_board === 'string' ? workspace.settings.default_board : null
  const rows = await db.select().from(boards).where(eq(boards.workspaceId, workspace.id)).orderBy(asc(boards.isPrivate), asc(boards.createdAt))
  const board = rows.find((row) => row.slug === preferred) ?? rows[0]
  if (!board) throw conflict('The workspace has no board to receive e-mail yet')
  return board
}

/** The post a reply answers: one our notification e-mail was about, or one an earlier inbound e-mail made. */
async function threadOf(ctx: AppContext, workspaceId: string, email: Email) {
  const ids = referencedIds(email)
  if (!ids.length) return null
  const notificationIds = ids.map((id) => notificationIdOf(id, ctx.config.inboundEmailDomain)).filter((id) => id !== null)
  if (notificationIds.length) {
    const rows = await ctx.db.select({ id: notificationEvents.id, userId: notificationEvents.userId, data: notificationEvents.data })
      .from(notificationEvents).where(and(eq(notificationEvents.workspaceId, workspaceId), inArray(notificationEvents.id, notificationIds)))
    for (const id of notificationIds) {
      const row = rows.find((candidate) => candidate.id === id)
      const data = row?.data as { post?: { id?: string }; into?: { id?: string }; post_id?: string } | undefined
      const postId = data?.into?.id ?? data?.post?.id ?? data?.post_id
      if (row && postId) return { postId, recipientId: row.userId }
    }
  }
  const [earlier] = await ctx.db.select({ postId: inboundEmails.postId }).from(inboundEmails)
    .where(and(eq(inboundEmails.workspaceId, workspaceId), inArray(inboundEmails.messageId, ids)))
  return earlier?.postId ? { postId: earlier.postId, recipientId: null } : null
}

/** The member a notification went to, when they are the one replying (their address, still an active member). */
async function replyingMember(db: Db, workspaceId: string, userId: string | null, address: string) {
  if (!userId) return null
  const [row] = await db.select({ user: users }).from(members).innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.workspaceId, workspaceId), eq(members.userId, userId), eq(members.status, 'active'), eq(users.email, address)))
  return row?.user ?? null
}

/**
 * The sender as an end user of the workspace (created on first mail), named after the From display
 * name if it has none. A message authenticated for its From domain (`proven`) vouches for the address:
 * its identity is, or becomes, verified. An unauthenticated one writes as the address's unverified
 * identity, as an anonymous widget write does; when that address is confirmed, the claim must not
 * inherit it, so the message gets an unverified identity of its own (no address, the display name).
 */
async function senderEndUser(db: Db, workspaceId: string, from: Mailbox, proven: boolean) {
  const name = from.name.trim().slice(0, 200)
  const endUser = await endUserByEmail(db, workspaceId, from.address, proven)
  if (!proven && endUser.verifiedAt) {
    return standInIdentity(db, workspaceId, name || null)
  }
  if (proven && !endUser.verifiedAt) await db.update(endUsers).set({ verifiedAt: sql`now()`, updatedAt: sql`now()` }).where(and(eq(endUsers.id, endUser.id), isNull(endUsers.verifiedAt)))
  if (name && !endUser.name) await db.update(endUsers).set({ name, updatedAt: sql`now()` }).where(and(eq(endUsers.id, endUser.id), isNull(endUsers.name)))
  return endUser
}

function titleOf(email: Email, body: string) {
  const subject = (email.subject ?? '').replace(/\s+/g, ' ').trim()
  const title = subject || body.split('\n').find((line) => line.trim())?.trim() || '(no subject)'
  return title.length > TITLE_MAX ? `${title.slice(0, TITLE_MAX - 1)}…` : title
}

const clip = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text)

/**
 * One inbound message: dropped when automatic (see classify.ts), ignored when its Message-ID was
 * seen, threaded as a comment when it answers our mail, else a new post on the default board.
 */
export async function receiveEmail(ctx: AppContext, workspace: Workspace, raw: Uint8Array, headers: Record<string, string | number>): Promise<InboundResult> {
  // Loaded on the first message: most processes never receive one.
  const { default: PostalMime } = await import('postal-mime')
  let email: Email
  try {
    email = await PostalMime.parse(raw, { maxNestingDepth: 32, maxHeadersSize: 256 * 1024 })
  } catch (error) {
    throw new ApiError('BAD_REQUEST', `The body is not a parseable RFC 822 message: ${(error as Error).message}`)
  }
  const reason = dropReason(email, ctx.config.inboundEmailDomain)
  if (reason) return dropped(reason)
  const from = email.from as Mailbox
  const address = from.address.trim().toLowerCase()
  await enforceRateLimit(ctx, headers, `inbound-email:${workspace.id}:${address}`, ctx.config.rateLimitPerIp)
  if (dashboardAccess(workspace, new Date(), ctx.config.billing) !== 'full') return dropped('subscription_inactive')

  const key = await dedupeKey(email, raw)
  // Before the transaction: the DKIM check may ask DNS.
  const proven = (await senderProof(ctx, raw, email, address)) !== null
  const text = textOf(email)
  const thread = await threadOf(ctx, workspace.id, email)
  const board = thread ? null : await defaultBoard(ctx.db, workspace)

  return ctx.db.transaction(async (tx) => {
    const db = tx as unknown as Db
    const [claimed] = await db.insert(inboundEmails).values({ workspaceId: workspace.id, messageId: key }).onConflictDoNothing().returning()
    if (!claimed) return { outcome: 'duplicate' as const, post_id: null, comment_id: null, reason: null }
    const claim = and(eq(inboundEmails.workspaceId, workspace.id), eq(inboundEmails.messageId, key))
    if (thread) {
      const [post] = await db.select({ id: posts.id, mergedIntoId: posts.mergedIntoId }).from(posts).where(and(eq(posts.id, thread.postId), eq(posts.workspaceId, workspace.id)))
      if (post) {
        // A member comments as themselves only when the message proves it is from them.
        const member = proven ? await replyingMember(db, workspace.id, thread.recipientId, address) : null
        const caller: FeedbackCaller = member
          ? { kind: 'session', user: member, sessionId: 'inbound-email', impersonatorId: null }
          : { kind: 'end_user', endUserId: (await senderEndUser(db, workspace.id, from, proven)).id }
        const body = clip(stripQuotedReply(text) || text || '(empty reply)', COMMENT_BODY_MAX)
        const comment = await createComment(db, workspace.id, caller, post.mergedIntoId ?? post.id, { body, internal: false })
        await db.update(inboundEmails).set({ postId: post.mergedIntoId ?? post.id, commentId: comment.id }).where(claim)
        return { outcome: 'comment' as const, post_id: post.mergedIntoId ?? post.id, comment_id: comment.id, reason: null }
      }
    }
    const endUser = await senderEndUser(db, workspace.id, from, proven)
    const target = board ?? (await defaultBoard(db, workspace))
    const post = await createPost(db, workspace.id, { kind: 'end_user', endUserId: endUser.id }, target.slug, { title: titleOf(email, text), body: clip(text, POST_BODY_MAX) })
    await db.update(inboundEmails).set({ postId: post.id }).where(claim)
    return { outcome: 'post' as const, post_id: post.id, comment_id: null, reason: null }
  })
}
