import { and, desc, eq, isNotNull, or, sql } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { moderationBlocks, moderationChecks, posts, votes } from '../../db/schema/index.ts'
import type { Workspace } from '../../plugins/credentials.ts'
import { ApiError, conflict, notFound } from '../../errors.ts'
import { recordEvent } from '../../events/outbox.ts'
import { newId } from '../../lib/ids.ts'
import { envelope, type Page } from '../../lib/paging.ts'
import { hmacSha256Base64, type Secrets } from '../../lib/secrets.ts'
import type { EndUserContext } from '../../plugins/end-user-writer.ts'
import { findPosts, getPost } from '../posts/queries.ts'
import { BURST_WINDOW_MINUTES, normaliseText, REPEAT_WINDOW_HOURS, scoreWrite, HOLD_AT } from './rules.ts'

export const MODERATION_MODES = ['off', 'suspicious', 'anonymous'] as const
export type ModerationMode = (typeof MODERATION_MODES)[number]
export type BlockKind = 'email' | 'domain' | 'ip'

/** `settings.moderation`, default `off`: an upgrade never starts holding posts nobody asked it to hold. */
export const moderationMode = (workspace: Pick<Workspace, 'settings'>): ModerationMode =>
  MODERATION_MODES.find((mode) => mode === workspace.settings.moderation) ?? 'off'

/** Blocked values and burst signals are compared as HMACs under a key derived from SECRET_KEY: nothing readable at rest. */
export async function hashValue(secrets: Pick<Secrets, 'deriveKey'>, kind: BlockKind | 'text', value: string) {
  return hmacSha256Base64(await secrets.deriveKey('moderation'), `${kind}:${value}`)
}

/** The canonical form of a blocked or checked value: addresses and domains lower-cased, IPs as given. */
export function canonical(kind: BlockKind, value: string) {
  const trimmed = value.trim().toLowerCase()
  return kind === 'domain' ? trimmed.replace(/^@/, '').replace(/\.$/, '') : trimmed
}

const domainOf = (address: string | null) => (address?.includes('@') ? address.slice(address.lastIndexOf('@') + 1) : null)

/** `settings.proof_of_work`, default false: anonymous and unconfirmed writers then solve the contact form's ALTCHA challenge. */
export const needsProofOfWork = (writer: EndUserContext) => writer.workspace.settings.proof_of_work === true && writer.voteRemoval.kind !== 'any'

/** What the write will be: published, or held with its check written beside the post. */
export interface Assessment {
  held: boolean
  /** Writes the check row in the post's transaction; absent when nothing was scored. */
  record?: (tx: Tx, postId: string) => Promise<unknown>
}

/** The writer's IP, address and domain as HMACs; 403 WRITER_BLOCKED when the workspace blocks any of them. */
export async function refuseBlocked(db: Db, secrets: Pick<Secrets, 'deriveKey'>, writer: EndUserContext) {
  const email = writer.address ? canonical('email', writer.address) : null
  const domain = domainOf(email)
  const [ipHash, emailHash, domainHash] = await Promise.all([
    hashValue(secrets, 'ip', canonical('ip', writer.clientIp)),
    email ? hashValue(secrets, 'email', email) : null,
    domain ? hashValue(secrets, 'domain', domain) : null,
  ])
  const matches = [and(eq(moderationBlocks.kind, 'ip'), eq(moderationBlocks.valueHash, ipHash))]
  if (emailHash) matches.push(and(eq(moderationBlocks.kind, 'email'), eq(moderationBlocks.valueHash, emailHash)))
  if (domainHash) matches.push(and(eq(moderationBlocks.kind, 'domain'), eq(moderationBlocks.valueHash, domainHash)))
  const [blocked] = await db.select({ kind: moderationBlocks.kind }).from(moderationBlocks).where(and(eq(moderationBlocks.workspaceId, writer.workspace.id), or(...matches))).limit(1)
  if (blocked) throw new ApiError('WRITER_BLOCKED', `This workspace does not accept feedback from this ${blocked.kind === 'ip' ? 'network address' : blocked.kind === 'domain' ? 'e-mail domain' : 'e-mail address'}`)
  return { email, domain, ipHash, emailHash, domainHash }
}

/**
 * Blocks first (any end user, 403 WRITER_BLOCKED), then the score. Identified and confirmed end users
 * (a session from identify or a confirmed address: `voteRemoval.kind === "any"`) are never scored or held.
 */
export async function assessWrite(db: Db, secrets: Pick<Secrets, 'deriveKey'>, writer: EndUserContext, text: string): Promise<Assessment> {
  const workspaceId = writer.workspace.id
  const { email, domain, ipHash, emailHash, domainHash } = await refuseBlocked(db, secrets, writer)
  const mode = moderationMode(writer.workspace)
  if (mode === 'off' || writer.voteRemoval.kind === 'any') return { held: false }
  const textHash = await hashValue(secrets, 'text', normaliseText(text))
  const burst = sql`${moderationChecks.createdAt} > now() - make_interval(mins => ${BURST_WINDOW_MINUTES})`
  const [counts] = await db.select({
    ip: sql<number>`count(*) filter (where ${moderationChecks.ipHash} = ${ipHash} and ${burst})`.mapWith(Number),
    email: sql<number>`count(*) filter (where ${moderationChecks.emailHash} = ${emailHash} and ${burst})`.mapWith(Number),
    domain: sql<number>`count(*) filter (where ${moderationChecks.domainHash} = ${domainHash} and ${burst})`.mapWith(Number),
    text: sql<number>`count(*) filter (where ${moderationChecks.textHash} = ${textHash})`.mapWith(Number),
  }).from(moderationChecks).where(and(eq(moderationChecks.workspaceId, workspaceId), sql`${moderationChecks.createdAt} > now() - make_interval(hours => ${REPEAT_WINDOW_HOURS})`,
    or(eq(moderationChecks.ipHash, ipHash), emailHash ? eq(moderationChecks.emailHash, emailHash) : undefined, domainHash ? eq(moderationChecks.domainHash, domainHash) : undefined, eq(moderationChecks.textHash, textHash))))
  const { score, reasons } = scoreWrite({ text, email, domain, recentByIp: counts!.ip, recentByEmail: counts!.email, recentByDomain: counts!.domain, sameTextRecent: counts!.text })
  const held = mode === 'anonymous' || score >= HOLD_AT
  if (mode === 'anonymous') reasons.push('settings.moderation: anonymous')
  if (Math.random() * PRUNE_ONE_IN < 1) void pruneChecks(db).catch(() => {})
  return {
    held,
    record: (tx, postId) => tx.insert(moderationChecks).values({ id: newId('moderationCheck'), workspaceId, postId, ipHash, emailHash, domainHash, textHash, score, reasons }),
  }
}

/** About one scored write in this many also prunes every workspace's checks (as the rate-limit counters are). */
const PRUNE_ONE_IN = 200

/**
 * A check's hashes serve the burst and repeat windows only, so a check older than the longest window is
 * deleted unless its post is still held (the queue shows its reasons). Pruned on the held queue's read
 * (that workspace) and now and then on a scored write (every workspace), so no writer's hashed address or
 * network outlives the day it counted for, whether or not the team opens the queue.
 */
export async function pruneChecks(db: Db, workspaceId?: string) {
  await db.delete(moderationChecks).where(and(
    workspaceId ? eq(moderationChecks.workspaceId, workspaceId) : undefined,
    sql`${moderationChecks.createdAt} < now() - make_interval(hours => ${REPEAT_WINDOW_HOURS})`,
    sql`not exists (select 1 from ${posts} where ${posts.id} = ${moderationChecks.postId} and ${posts.moderation} is not null)`,
  ))
}

/** The score and reasons behind each held post of a page, keyed by post id. */
async function checksOf(db: Db, postIds: string[]) {
  if (postIds.length === 0) return new Map<string, { score: number; reasons: string[] }>()
  const rows = await db.select({ postId: moderationChecks.postId, score: moderationChecks.score, reasons: moderationChecks.reasons }).from(moderationChecks)
    .where(sql`${moderationChecks.postId} in ${postIds}`)
  return new Map(rows.map((row) => [row.postId!, { score: row.score, reasons: row.reasons }]))
}

/** Held posts, newest first, each with the score and reasons that held it. */
export async function listHeld(db: Db, workspaceId: string, page: Page) {
  const where = and(eq(posts.workspaceId, workspaceId), isNotNull(posts.moderation))
  // The prune never deletes a held post's check, so it runs beside the page's reads.
  const [items, [count]] = await Promise.all([
    findPosts(db, where, [desc(posts.createdAt)], page.perPage, false, page.offset),
    db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(posts).where(where),
    pruneChecks(db, workspaceId),
  ])
  const checks = await checksOf(db, items.map((post) => post.id))
  return envelope(items.map((post) => ({ post, score: checks.get(post.id)?.score ?? null, reasons: checks.get(post.id)?.reasons ?? [] })), page, count!.n)
}

/** Locks a held post of the workspace; any other post is 409, an unknown or foreign one 404. */
async function lockHeld(tx: Tx, workspaceId: string, postId: string) {
  const [row] = await tx.select({ id: posts.id, moderation: posts.moderation, authorEndUserId: posts.authorEndUserId }).from(posts)
    .where(and(eq(posts.id, postId), eq(posts.workspaceId, workspaceId))).for('update')
  if (!row) throw notFound('Post')
  if (row.moderation !== 'held') throw conflict('This post is not held for moderation: it is already published')
  return row
}

/**
 * Publishes a held post: it joins its board's lists and counts, and only now raises `post.created`
 * (and the author's `vote.created`), so webhooks, chat and notifications hear of it exactly once.
 */
export async function approvePost(db: Db, workspaceId: string, postId: string) {
  return db.transaction(async (tx) => {
    const held = await lockHeld(tx, workspaceId, postId)
    await tx.update(posts).set({ moderation: null, updatedAt: sql`now()` }).where(eq(posts.id, postId))
    const post = await getPost(tx, workspaceId, postId)
    await recordEvent(tx, workspaceId, 'post.created', { post })
    const [vote] = held.authorEndUserId
      ? await tx.select({ id: votes.id }).from(votes).where(and(eq(votes.postId, postId), eq(votes.endUserId, held.authorEndUserId)))
      : []
    if (vote) await recordEvent(tx, workspaceId, 'vote.created', { vote: { id: vote.id, post_id: postId, voter: { type: 'end_user', id: held.authorEndUserId } }, votes: post.votes })
    return post
  })
}

/** Deletes a held post for good, with its votes and comments. No event: nothing ever announced it. */
export async function rejectPost(db: Db, workspaceId: string, postId: string) {
  return db.transaction(async (tx) => {
    await lockHeld(tx, workspaceId, postId)
    await tx.delete(posts).where(eq(posts.id, postId))
    return { status: 'deleted' as const, id: postId }
  })
}
