import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { postReads, posts } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { unreadOf } from './queries.ts'

/**
 * Marks posts read (now) or unread for one member. Every id must be a post of the workspace (else 404,
 * nothing written); opening a post in the dashboard marks it read through the same function.
 */
export async function setReadState(db: Db | Tx, workspaceId: string, userId: string, postIds: string[], read: boolean) {
  const found = await db.select({ id: posts.id }).from(posts).where(and(eq(posts.workspaceId, workspaceId), inArray(posts.id, postIds)))
  if (found.length !== postIds.length) throw notFound('Post')
  if (read) {
    await db.insert(postReads).values(postIds.map((postId) => ({ userId, postId, workspaceId })))
      .onConflictDoUpdate({ target: [postReads.userId, postReads.postId], set: { readAt: sql`now()` } })
  } else {
    await db.delete(postReads).where(and(eq(postReads.userId, userId), inArray(postReads.postId, postIds)))
  }
  const unread = await unreadOf(db, userId, postIds)
  return { items: postIds.map((postId) => ({ post_id: postId, unread: unread.get(postId) ?? true })) }
}
