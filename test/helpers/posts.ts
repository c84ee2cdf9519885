import { and, eq } from 'drizzle-orm'
import { posts, statuses } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import type { Harness } from './harness.ts'

/** A post written straight to the database (for counts and cascades), in the workspace's default status unless told. */
export async function insertPost(h: Harness, workspaceId: string, boardId: string, extra: Partial<typeof posts.$inferInsert> = {}) {
  let statusId = extra.statusId
  if (!statusId) {
    const [status] = await h.db.select().from(statuses).where(and(eq(statuses.workspaceId, workspaceId), eq(statuses.isDefault, true)))
    statusId = status!.id
  }
  const [post] = await h.db.insert(posts).values({ id: newId('post'), workspaceId, boardId, title: 'A post', ...extra, statusId }).returning()
  return post!
}
