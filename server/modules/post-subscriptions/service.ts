import { and, asc, eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { changelogSubscriptions, endUsers, postSubscriptions, posts, subscriberUpdates, workspaces } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { findPost } from '../feedback/lookups.ts'
import { envelope, totalOf, type Page } from '../../lib/paging.ts'

/** The end user behind an unsubscribe link; a token of another workspace is as unknown as a wrong one. */
export async function endUserByToken(db: Db, workspaceSlug: string, token: string) {
  const [row] = await db.select({ endUser: endUsers, workspace: { id: workspaces.id, name: workspaces.name } })
    .from(endUsers).innerJoin(workspaces, eq(workspaces.id, endUsers.workspaceId))
    .where(and(eq(endUsers.mailToken, token), eq(workspaces.slug, workspaceSlug)))
  if (!row) throw notFound('Subscription')
  return row
}

/** The post an unsubscribe link names, in the link's workspace (another workspace's post is 404). */
export async function linkedPost(db: Db, workspaceId: string, postId: string) {
  const [post] = await db.select({ id: posts.id, title: posts.title }).from(posts).where(and(eq(posts.id, postId), eq(posts.workspaceId, workspaceId)))
  if (!post) throw notFound('Post')
  return post
}

/**
 * Unsubscribes from one post, or (no `postId`) from every post update and the changelog of the workspace.
 * Idempotent; what was queued and not yet sent is dropped too (the sender also checks again).
 */
export async function unsubscribe(db: Db, workspaceSlug: string, token: string, postId?: string) {
  const { endUser, workspace } = await endUserByToken(db, workspaceSlug, token)
  const post = postId ? await linkedPost(db, workspace.id, postId) : null
  await db.transaction(async (tx) => {
    if (post) {
      await tx.insert(postSubscriptions).values({ postId: post.id, endUserId: endUser.id, workspaceId: workspace.id, reason: 'voter', unsubscribedAt: sql`now()` })
        .onConflictDoUpdate({ target: [postSubscriptions.postId, postSubscriptions.endUserId], set: { unsubscribedAt: sql`coalesce(${postSubscriptions.unsubscribedAt}, now())` } })
      await tx.update(subscriberUpdates).set({ status: 'skipped' }).where(and(eq(subscriberUpdates.endUserId, endUser.id), eq(subscriberUpdates.postId, post.id), eq(subscriberUpdates.status, 'pending')))
      return
    }
    await tx.update(endUsers).set({ notificationsOffAt: sql`coalesce(${endUsers.notificationsOffAt}, now())` }).where(eq(endUsers.id, endUser.id))
    await tx.update(subscriberUpdates).set({ status: 'skipped' }).where(and(eq(subscriberUpdates.endUserId, endUser.id), eq(subscriberUpdates.status, 'pending')))
    // "Everything" includes the changelog e-mail (changelog/mail.ts keeps its own unsubscribe row).
    await tx.insert(changelogSubscriptions).values({ endUserId: endUser.id, workspaceId: workspace.id, token: crypto.randomUUID().replaceAll('-', ''), unsubscribedAt: sql`now()` })
      .onConflictDoUpdate({ target: changelogSubscriptions.endUserId, set: { unsubscribedAt: sql`coalesce(${changelogSubscriptions.unsubscribedAt}, now())` } })
  })
  return { workspaceName: workspace.name, post }
}

/** Whether the link's scope is already unsubscribed (for the confirmation page). */
export async function isUnsubscribed(db: Db, workspaceSlug: string, token: string, postId?: string) {
  const { endUser, workspace } = await endUserByToken(db, workspaceSlug, token)
  const post = postId ? await linkedPost(db, workspace.id, postId) : null
  if (endUser.notificationsOffAt) return { done: true, workspaceName: workspace.name, post }
  if (!post) return { done: false, workspaceName: workspace.name, post }
  const [row] = await db.select().from(postSubscriptions).where(and(eq(postSubscriptions.postId, post.id), eq(postSubscriptions.endUserId, endUser.id)))
  return { done: !row || row.unsubscribedAt !== null, workspaceName: workspace.name, post }
}

/** A post's subscribers for the team: who follows it and why, oldest first. */
export async function listSubscribers(db: Db, workspaceId: string, postId: string, page: Page) {
  await findPost(db, workspaceId, postId)
  const where = and(eq(postSubscriptions.postId, postId), eq(postSubscriptions.workspaceId, workspaceId))
  const rows = await db.select({ subscription: postSubscriptions, endUser: endUsers, total: sql<number>`count(*) over()`.mapWith(Number) })
    .from(postSubscriptions).innerJoin(endUsers, eq(endUsers.id, postSubscriptions.endUserId))
    .where(where).orderBy(asc(postSubscriptions.createdAt), asc(postSubscriptions.endUserId)).limit(page.perPage).offset(page.offset)
  const total = await totalOf(rows, page, async () => (await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(postSubscriptions).where(where))[0]!.n)
  return envelope(rows.map(({ subscription, endUser }) => ({
    end_user_id: endUser.id,
    external_id: endUser.externalId,
    email: endUser.email,
    name: endUser.name,
    reason: subscription.reason,
    subscribed: subscription.unsubscribedAt === null && endUser.notificationsOffAt === null,
    // Why an e-mail would not reach them, whatever the subscription says.
    mail_blocked: endUser.email === null ? 'no_address' as const : endUser.verifiedAt === null ? 'unconfirmed' as const : endUser.emailBouncedAt ? 'bounced' as const : null,
    locale: endUser.locale,
    created_at: subscription.createdAt.toISOString(),
  })), page, total)
}

