// Hard deletion of a workspace or an account, as one ordered cascade (docs/data-lifecycle.md):
// 1. stop: webhook deliveries and queued notifications are cancelled, API keys and sessions revoked,
//    so nothing goes out and no credential works while the rest happens;
// 2. external state: stored objects (and, through their foreign keys, OAuth grants and integrations);
// 3. rows: one transaction. Every table that belongs to a workspace or a user references it with
//    ON DELETE CASCADE (or SET NULL for authorship kept elsewhere); the few rows that name them
//    without a foreign key (idempotency records, outbox mail, invitation tokens, event payloads)
//    are removed or scrubbed here. test/api/erasure.test.ts walks the catalog to keep it so.
import { and, eq, inArray, isNull, like, ne, or, sql } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import type { AppContext } from '../../context.ts'
import type { Db } from '../../db/client.ts'
import {
  apiKeys, authTokens, comments, contactMessages, emailOutbox, eventDispatch, events, idempotencyKeys, members, notificationEvents,
  posts, sessions, statusChanges, users, webhookDeliveries, webhookDispatch, webhooks, workspaces,
} from '../../db/schema/index.ts'
import { conflict } from '../../errors.ts'
import { deleteStoredFiles } from '../files/service.ts'

const workspaceEvents = (workspaceId: string) => sql`(select ${events.id} from ${events} where ${events.workspaceId} = ${workspaceId})`
const workspaceWebhooks = (workspaceId: string) => sql`(select ${webhooks.id} from ${webhooks} where ${webhooks.workspaceId} = ${workspaceId})`

/** Step 1 for a workspace: nothing is delivered, mailed or accepted from its keys any more. */
async function stopWorkspace(db: Db, workspaceId: string) {
  await db.transaction(async (tx) => {
    await tx.update(webhooks).set({ enabled: false, disabledReason: 'workspace deleted', updatedAt: sql`now()` }).where(eq(webhooks.workspaceId, workspaceId))
    await tx.update(webhookDeliveries).set({ status: 'canceled', leaseOwner: null, leaseUntil: null, updatedAt: sql`now()` })
      .where(and(sql`${webhookDeliveries.webhookId} in ${workspaceWebhooks(workspaceId)}`, eq(webhookDeliveries.status, 'pending')))
    await tx.delete(eventDispatch).where(sql`${eventDispatch.eventId} in ${workspaceEvents(workspaceId)}`)
    await tx.delete(webhookDispatch).where(sql`${webhookDispatch.eventId} in ${workspaceEvents(workspaceId)}`)
    await tx.update(notificationEvents).set({ emailStatus: 'failed', emailLeaseUntil: null })
      .where(and(eq(notificationEvents.workspaceId, workspaceId), eq(notificationEvents.emailStatus, 'pending')))
    await tx.update(apiKeys).set({ revokedAt: sql`now()` }).where(and(eq(apiKeys.workspaceId, workspaceId), isNull(apiKeys.revokedAt)))
  })
}

/** Deletes a workspace and everything in it. `workspace.deleted` is not an event: nobody is left to receive it. */
export async function eraseWorkspace(ctx: AppContext, workspaceId: string) {
  const [workspace] = await ctx.db.select().from(workspaces).where(eq(workspaces.id, workspaceId))
  if (!workspace) return
  await stopWorkspace(ctx.db, workspaceId)
  // Objects first: the rows' cascade alone would leave them in storage.
  await deleteStoredFiles(ctx, { workspaceId })
  await ctx.db.transaction(async (tx) => {
    // Idempotency scopes are `{workspace_id}:{credential}`; invitation tokens name the workspace in their data.
    await tx.delete(idempotencyKeys).where(like(idempotencyKeys.scope, `${workspaceId}:%`))
    await tx.delete(authTokens).where(and(eq(authTokens.purpose, 'invitation'), sql`${authTokens.data}->>'workspace_id' = ${workspaceId}`))
    const invited = await tx.select({ userId: members.userId }).from(members).where(and(eq(members.workspaceId, workspaceId), eq(members.status, 'pending')))
    await tx.delete(workspaces).where(eq(workspaces.id, workspaceId))
    // An invitation creates the invitee's account; one never used (never verified, no session, no other workspace) goes with the invitation.
    if (invited.length) {
      await tx.delete(users).where(and(
        inArray(users.id, invited.map((row) => row.userId)),
        eq(users.emailVerified, false),
        sql`not exists (select 1 from ${sessions} where ${sessions.userId} = ${users.id})`,
        sql`not exists (select 1 from ${members} where ${members.userId} = ${users.id})`,
      ))
    }
  })
}

/**
 * The workspaces that go with the account (the user is their only active member), or 409 while the
 * user owns a workspace that has other active members: ownership is handed over first.
 */
async function workspacesToErase(db: Db, userId: string) {
  const mine = await db.select({ workspaceId: members.workspaceId, role: members.role, slug: workspaces.slug }).from(members)
    .innerJoin(workspaces, eq(workspaces.id, members.workspaceId))
    .where(and(eq(members.userId, userId), eq(members.status, 'active')))
  if (!mine.length) return []
  const others = await db.selectDistinct({ workspaceId: members.workspaceId }).from(members)
    .where(and(inArray(members.workspaceId, mine.map((row) => row.workspaceId)), ne(members.userId, userId), eq(members.status, 'active')))
  const shared = new Set(others.map((row) => row.workspaceId))
  const blocking = mine.filter((row) => row.role === 'owner' && shared.has(row.workspaceId))
  if (blocking.length) {
    throw conflict(`You own ${blocking.map((row) => row.slug).join(', ')}, which other members share: make another member the owner (PATCH /workspaces/{slug}/members/{user_id} with role owner) or remove them first`)
  }
  return mine.filter((row) => !shared.has(row.workspaceId)).map((row) => row.workspaceId)
}

/**
 * Deletes the account: personal data, sessions, grants, votes, and the workspaces the user alone
 * belongs to. Their posts and comments in other workspaces stay, shown as by a deleted user; event
 * payloads and notifications there are scrubbed of them (chorus_forget_person, migration 0012).
 */
export async function eraseAccount(ctx: AppContext, userId: string) {
  const [user] = await ctx.db.select().from(users).where(eq(users.id, userId))
  if (!user) return { workspaceIds: [] as string[] }
  const workspaceIds = await workspacesToErase(ctx.db, userId)
  await ctx.db.update(sessions).set({ revokedAt: sql`now()` }).where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt)))
  for (const workspaceId of workspaceIds) await eraseWorkspace(ctx, workspaceId)
  await deleteStoredFiles(ctx, { userId })
  const mentions = (column: AnyPgColumn) => or(sql`${column}::text like ${`%${userId}%`}`, sql`lower(${column}::text) like ${`%${user.email}%`}`)
  await ctx.db.transaction(async (tx) => {
    // A membership gained since the check would leave a shared workspace ownerless: check again inside.
    const again = await workspacesToErase(tx as unknown as Db, userId)
    if (again.some((id) => !workspaceIds.includes(id))) throw conflict('Your workspaces changed while deleting; try again')
    await tx.execute(sql`update ${posts} set vote_count = greatest(${posts.voteCount} - 1, 0) from votes where votes.post_id = ${posts.id} and votes.user_id = ${userId}`)
    await tx.update(posts).set({ authorName: null }).where(eq(posts.authorUserId, userId))
    await tx.update(comments).set({ authorName: null }).where(eq(comments.authorUserId, userId))
    await tx.update(statusChanges).set({ changedByUserId: null }).where(eq(statusChanges.changedByUserId, userId))
    await tx.update(sessions).set({ impersonatorId: null }).where(eq(sessions.impersonatorId, userId))
    await tx.update(events).set({ data: sql`chorus_forget_person(${events.data}, ${userId}, ${user.email})` }).where(mentions(events.data))
    await tx.update(notificationEvents).set({ data: sql`chorus_forget_person(${notificationEvents.data}, ${userId}, ${user.email})` }).where(mentions(notificationEvents.data))
    await tx.delete(idempotencyKeys).where(like(idempotencyKeys.scope, `%:${userId}`))
    await tx.update(idempotencyKeys).set({ responseBody: sql`chorus_forget_person(${idempotencyKeys.responseBody}, ${userId}, ${user.email})` })
      .where(mentions(idempotencyKeys.responseBody))
    await tx.delete(authTokens).where(or(eq(authTokens.email, user.email), eq(authTokens.userId, userId)))
    await tx.delete(emailOutbox).where(eq(emailOutbox.to, user.email))
    // Contact-form messages name their sender by address only, with no reference to the account.
    await tx.delete(contactMessages).where(sql`lower(${contactMessages.email}) = ${user.email.toLowerCase()}`)
    await tx.delete(users).where(eq(users.id, userId))
  })
  return { workspaceIds }
}
