import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { boards, labels, posts, statuses } from '../../db/schema/index.ts'
import { invalid, notFound } from '../../errors.ts'

// Every lookup is scoped by workspace: an id or slug of another workspace is simply not found.

export async function findBoard(db: Db | Tx, workspaceId: string, slug: string) {
  const [board] = await db.select().from(boards).where(and(eq(boards.workspaceId, workspaceId), eq(boards.slug, slug)))
  if (!board) throw notFound('Board')
  return board
}

/** A status by id or case-insensitive name; without one, the workspace default. */
export async function resolveStatus(db: Db | Tx, workspaceId: string, ref: string | undefined, loc: (string | number)[] = ['body', 'status']) {
  const match = ref === undefined ? eq(statuses.isDefault, true) : sql`(${statuses.id} = ${ref} or lower(${statuses.name}) = lower(${ref}))`
  const [status] = await db.select().from(statuses).where(and(eq(statuses.workspaceId, workspaceId), match)).limit(1)
  if (!status) throw invalid(loc, ref === undefined ? 'The workspace has no default status' : `Unknown status "${ref}"`)
  return status
}

export async function resolveLabels(db: Db | Tx, workspaceId: string, slugs: string[], loc: (string | number)[] = ['body', 'labels']) {
  if (slugs.length === 0) return []
  const rows = await db.select().from(labels).where(and(eq(labels.workspaceId, workspaceId), inArray(labels.slug, slugs)))
  const missing = slugs.filter((slug) => !rows.some((row) => row.slug === slug))
  if (missing.length) throw invalid(loc, `Unknown label${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`)
  return rows
}

/** The post row itself; `lock` takes a row lock for the rest of the transaction. */
export async function findPost(db: Db | Tx, workspaceId: string, postId: string, lock = false) {
  const query = db.select().from(posts).where(and(eq(posts.id, postId), eq(posts.workspaceId, workspaceId)))
  const [post] = lock ? await query.for('update') : await query
  if (!post) throw notFound('Post')
  return post
}
