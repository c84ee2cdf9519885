// One end user as the customer's backend sees them (issue 39): look-up by id or external id, the
// record, the full export, and erasure (erasure/end-user.ts), behind `end_users:read|write`.
import { and, asc, desc, eq, or, sql, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { changelogSubscriptions, comments, companies, endUserCompanies, endUsers, postSubscriptions, posts, visitorConfirmations, votes } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { commentsByEndUser, toCommentResponse } from '../comments/service.ts'
import { eraseEndUser, type ContentMode } from '../erasure/end-user.ts'
import { findPosts } from '../posts/queries.ts'
import { toEndUserResponse } from './model.ts'

type EndUserRow = typeof endUsers.$inferSelect
const iso = (value: Date | null) => value?.toISOString() ?? null

/** By the `eu_` id or the customer's external id; another workspace's end user is 404 like an unknown one. */
export async function findEndUser(db: Db, workspaceId: string, idOrExternal: string) {
  const [row] = await db.select().from(endUsers)
    .where(and(eq(endUsers.workspaceId, workspaceId), or(eq(endUsers.id, idOrExternal), eq(endUsers.externalId, idOrExternal))))
    .orderBy(sql`${endUsers.externalId} = ${idOrExternal} desc nulls last`).limit(1)
  if (!row) throw notFound('End user')
  return row
}

const companiesOf = (db: Db, endUserId: string) =>
  db.select({ id: companies.id, external_id: companies.externalId, name: companies.name }).from(endUserCompanies)
    .innerJoin(companies, eq(companies.id, endUserCompanies.companyId)).where(eq(endUserCompanies.endUserId, endUserId)).orderBy(asc(companies.name))

const recordOf = async (db: Db, row: EndUserRow) => ({
  ...toEndUserResponse(row),
  company: row.company,
  locale: row.locale,
  companies: await companiesOf(db, row.id),
  updated_at: row.updatedAt.toISOString(),
})

export async function endUserRecord(db: Db, workspaceId: string, idOrExternal: string) {
  const row = await findEndUser(db, workspaceId, idOrExternal)
  const counted = (table: SQL, column: SQL) => sql<number>`(select count(*) from ${table} where ${column} = ${row.id})::int`.mapWith(Number)
  const [record, [counts]] = await Promise.all([
    recordOf(db, row),
    db.select({ posts: counted(sql`${posts}`, sql`${posts.authorEndUserId}`), comments: counted(sql`${comments}`, sql`${comments.authorEndUserId}`), votes: counted(sql`${votes}`, sql`${votes.endUserId}`) }).from(sql`(select 1) as one`),
  ])
  return { ...record, counts: counts! }
}

/** Everything stored about them, in one consistent read (one transaction). */
export async function exportEndUser(db: Db, workspaceId: string, idOrExternal: string) {
  const row = await findEndUser(db, workspaceId, idOrExternal)
  return db.transaction(async (tx) => {
    const read = tx as unknown as Db
    const [record, written, wrote, voted, followed, confirmations, changelog] = await Promise.all([
      recordOf(read, row),
      findPosts(read, and(eq(posts.workspaceId, workspaceId), eq(posts.authorEndUserId, row.id)), [asc(posts.createdAt)], 100_000),
      commentsByEndUser(read, workspaceId, row.id),
      read.select({ post_id: votes.postId, post_title: posts.title, createdAt: votes.createdAt }).from(votes).innerJoin(posts, eq(posts.id, votes.postId))
        .where(eq(votes.endUserId, row.id)).orderBy(asc(votes.createdAt)),
      read.select().from(postSubscriptions).where(eq(postSubscriptions.endUserId, row.id)).orderBy(asc(postSubscriptions.createdAt)),
      read.select().from(visitorConfirmations).where(eq(visitorConfirmations.endUserId, row.id)).orderBy(desc(visitorConfirmations.createdAt)),
      read.select({ unsubscribedAt: changelogSubscriptions.unsubscribedAt }).from(changelogSubscriptions).where(eq(changelogSubscriptions.endUserId, row.id)),
    ])
    return {
      format: 'chorus-end-user-export' as const,
      version: 1,
      exported_at: new Date().toISOString(),
      end_user: {
        ...record,
        verified_at: iso(row.verifiedAt), confirmation_sent_at: iso(row.confirmationSentAt), email_bounced_at: iso(row.emailBouncedAt),
        notifications_off_at: iso(row.notificationsOffAt), changelog_unsubscribed_at: iso(changelog[0]?.unsubscribedAt ?? null),
      },
      posts: written,
      comments: wrote.map((comment) => toCommentResponse(comment)),
      votes: voted.map((vote) => ({ post_id: vote.post_id, post_title: vote.post_title, created_at: vote.createdAt.toISOString() })),
      subscriptions: followed.map((sub) => ({ post_id: sub.postId, reason: sub.reason, unsubscribed_at: iso(sub.unsubscribedAt), created_at: sub.createdAt.toISOString() })),
      sessions: confirmations.map((c) => ({ kind: 'email_confirmation' as const, created_at: c.createdAt.toISOString(), expires_at: c.expiresAt.toISOString(), confirmed_at: iso(c.confirmedAt), claimed_at: iso(c.claimedAt) })),
    }
  })
}

/** Finds and erases in one transaction (the row is locked, so two erasures of one person cannot interleave). */
export async function eraseEndUserById(db: Db, workspaceId: string, idOrExternal: string, mode: ContentMode) {
  const found = await findEndUser(db, workspaceId, idOrExternal)
  return db.transaction(async (tx) => {
    const [locked] = await tx.select().from(endUsers).where(eq(endUsers.id, found.id)).for('update')
    if (!locked) throw notFound('End user')
    return { status: 'erased' as const, id: locked.id, content: mode, ...(await eraseEndUser(tx, workspaceId, locked, mode)) }
  })
}
