// Erasure of one end user of a workspace, asked for by the customer's backend (issue 39,
// docs/data-lifecycle.md#one-end-user). One transaction: the identity goes with its votes (the demand
// triggers of migration 0029 take their share off every post), its confirmations, subscriptions and
// company links (foreign keys); its posts and comments are deleted or kept without a name; and every
// stored payload, queued e-mail, stored answer and delivery log of the workspace that names the person
// is scrubbed (chorus_forget_end_user, migration 0044). Widget sessions are stateless tokens checked
// against the identity on every use (identity/end-users.ts), so they stop working with it.
import { and, eq, inArray, like, or, sql, type SQL } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import type { Tx } from '../../db/client.ts'
import {
  chatChannelMappings, chatDeliveryLogs, comments, emailOutbox, endUsers, events, idempotencyKeys, notificationEvents, posts,
  rateLimitCounters, subscriberUpdates, votes, webhookDeliveryLogs, webhooks,
} from '../../db/schema/index.ts'
import { recordEvent } from '../../events/outbox.ts'
import { sha256Hex } from '../../lib/secrets.ts'
import { commentsByEndUser, removeComment } from '../comments/service.ts'
import { deletePost } from '../posts/service.ts'
import { foldWorkspaceTerms } from '../duplicates/term-counts.ts'

export const CONTENT_MODES = ['anonymise', 'delete'] as const
export type ContentMode = (typeof CONTENT_MODES)[number]
type EndUserRow = typeof endUsers.$inferSelect

/**
 * What is searched for and replaced inside stored text: the address, and the name when it has three
 * characters or more (a shorter one would match inside ordinary words; it still goes wherever it is a
 * field of its own, such as an author object).
 */
export function needlesOf(endUser: Pick<EndUserRow, 'email' | 'name'>) {
  return [endUser.email, endUser.name && endUser.name.trim().length >= 3 ? endUser.name.trim() : null].filter((value): value is string => !!value)
}

/** Rows whose column mentions the person: their id, or a needle as it is written inside JSON text (case ignored). */
function mentions(column: AnyPgColumn, endUserId: string, needles: string[]): SQL {
  const encoded = needles.map((needle) => JSON.stringify(needle.toLowerCase()).slice(1, -1))
  return or(sql`strpos(${column}::text, ${endUserId}) > 0`, ...encoded.map((needle) => sql`strpos(lower(${column}::text), ${needle}) > 0`))!
}

const textArray = (values: string[]) => (values.length ? sql`ARRAY[${sql.join(values.map((value) => sql`${value}`), sql`, `)}]::text[]` : sql`'{}'::text[]`)
const forgetJson = (column: AnyPgColumn, endUserId: string, needles: string[]) => sql`chorus_forget_end_user(${column}, ${endUserId}, ${textArray(needles)})`
const forgetText = (column: AnyPgColumn, needles: string[]) => sql`chorus_forget_text(${column}, ${textArray(needles)})`

/** Their posts and comments: deleted (raising `post.deleted` / `comment.deleted`), or kept with their name and address taken out of the text. */
async function handleContent(tx: Tx, workspaceId: string, endUser: EndUserRow, mode: ContentMode, needles: string[]) {
  const authored = await tx.select({ id: posts.id }).from(posts).where(and(eq(posts.workspaceId, workspaceId), eq(posts.authorEndUserId, endUser.id)))
  const written = await commentsByEndUser(tx, workspaceId, endUser.id)
  if (mode === 'delete') {
    // Comments first: those on their own posts go with the posts anyway, and their counts with them.
    const postIds = new Set(authored.map((row) => row.id))
    for (const row of written) if (!postIds.has(row.comment.postId)) await removeComment(tx, workspaceId, row)
    for (const post of authored) await deletePost(tx, workspaceId, post.id)
  } else {
    await tx.update(posts).set({ authorName: null, title: forgetText(posts.title, needles), body: forgetText(posts.body, needles) })
      .where(and(eq(posts.workspaceId, workspaceId), eq(posts.authorEndUserId, endUser.id)))
    await tx.update(comments).set({ authorName: null, body: forgetText(comments.body, needles) })
      .where(and(eq(comments.workspaceId, workspaceId), eq(comments.authorEndUserId, endUser.id)))
  }
  return { posts: authored.length, comments: written.length }
}

/** Every stored payload, answer, e-mail and log of the workspace that names them keeps what happened, without who. */
async function scrubMentions(tx: Tx, workspaceId: string, endUser: EndUserRow, needles: string[]) {
  const id = endUser.id
  await tx.update(events).set({ data: forgetJson(events.data, id, needles) }).where(and(eq(events.workspaceId, workspaceId), mentions(events.data, id, needles)))
  await tx.update(notificationEvents).set({ data: forgetJson(notificationEvents.data, id, needles), subject: forgetText(notificationEvents.subject, needles) })
    .where(and(eq(notificationEvents.workspaceId, workspaceId), or(mentions(notificationEvents.data, id, needles), mentions(notificationEvents.subject, id, needles))))
  await tx.update(subscriberUpdates).set({ data: forgetJson(subscriberUpdates.data, id, needles) })
    .where(and(eq(subscriberUpdates.workspaceId, workspaceId), mentions(subscriberUpdates.data, id, needles)))
  // Stored answers: their own writes' records go; others' answers that name them are scrubbed.
  const scopes = [`${workspaceId}:eu:${id}`, ...(endUser.email ? [`${workspaceId}:anon:${sha256Hex(endUser.email)}`] : [])]
  await tx.delete(idempotencyKeys).where(inArray(idempotencyKeys.scope, scopes))
  await tx.update(idempotencyKeys).set({ responseBody: forgetJson(idempotencyKeys.responseBody, id, needles) })
    .where(and(like(idempotencyKeys.scope, `${workspaceId}:%`), mentions(idempotencyKeys.responseBody, id, needles)))
  if (endUser.email) {
    await tx.delete(emailOutbox).where(and(eq(emailOutbox.workspaceId, workspaceId), sql`lower(${emailOutbox.to}) = ${endUser.email.toLowerCase()}`))
    // The per-address budget of confirmation e-mails (visitors module) is keyed by the address itself.
    await tx.delete(rateLimitCounters).where(eq(rateLimitCounters.key, `visitor-claim:email:${endUser.email}`))
  }
  if (!needles.length) return
  await tx.update(emailOutbox).set({ subject: forgetText(emailOutbox.subject, needles), text: forgetText(emailOutbox.text, needles), html: forgetText(emailOutbox.html, needles) })
    .where(and(eq(emailOutbox.workspaceId, workspaceId), or(mentions(emailOutbox.subject, id, needles), mentions(emailOutbox.text, id, needles), mentions(emailOutbox.html, id, needles))))
  // Receivers may echo a payload back: the first 4 KiB of their answer is in the log.
  const hooks = sql`(select ${webhooks.id} from ${webhooks} where ${webhooks.workspaceId} = ${workspaceId})`
  await tx.update(webhookDeliveryLogs).set({ responseBody: forgetText(webhookDeliveryLogs.responseBody, needles), error: forgetText(webhookDeliveryLogs.error, needles) })
    .where(and(sql`${webhookDeliveryLogs.webhookId} in ${hooks}`, or(mentions(webhookDeliveryLogs.responseBody, id, needles), mentions(webhookDeliveryLogs.error, id, needles))))
  const mappings = sql`(select ${chatChannelMappings.id} from ${chatChannelMappings} where ${chatChannelMappings.workspaceId} = ${workspaceId})`
  await tx.update(chatDeliveryLogs).set({ error: forgetText(chatDeliveryLogs.error, needles) })
    .where(and(sql`${chatDeliveryLogs.mappingId} in ${mappings}`, mentions(chatDeliveryLogs.error, id, needles)))
}

/**
 * Erases the end user in `tx` and raises `end_user.erased` (its data: the id and the mode, nothing
 * else). Answers what went: votes, and the posts and comments deleted or anonymised.
 */
export async function eraseEndUser(tx: Tx, workspaceId: string, endUser: EndUserRow, mode: ContentMode) {
  const needles = needlesOf(endUser)
  // vote_count is kept by the votes service, not by a trigger: their votes leave it here.
  const voted = await tx.select({ postId: votes.postId }).from(votes).where(eq(votes.endUserId, endUser.id))
  if (voted.length) {
    await tx.update(posts).set({ voteCount: sql`greatest(${posts.voteCount} - 1, 0)` }).where(inArray(posts.id, voted.map((vote) => vote.postId)))
    // The demand trigger (votes_demand) takes each vote's share off its post.
    await tx.delete(votes).where(eq(votes.endUserId, endUser.id))
  }
  const content = await handleContent(tx, workspaceId, endUser, mode, needles)
  // The search-term counts (duplicates/term-counts.ts) hold lexemes of the text just rewritten: folded
  // now, so the terms only they held (their address, their name) leave with them.
  await foldWorkspaceTerms(tx, workspaceId)
  await scrubMentions(tx, workspaceId, endUser, needles)
  // Confirmations, subscriptions, queued updates and company links go by their foreign keys; authorship becomes null.
  await tx.delete(endUsers).where(and(eq(endUsers.id, endUser.id), eq(endUsers.workspaceId, workspaceId)))
  await recordEvent(tx, workspaceId, 'end_user.erased', { end_user: { id: endUser.id }, content: mode })
  return { votes: voted.length, ...content }
}
