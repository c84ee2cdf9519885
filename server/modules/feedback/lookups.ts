import { and, eq, getTableColumns, inArray, sql } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { compiled } from '../../db/compiled.ts'
import { boards, labels, posts, statuses } from '../../db/schema/index.ts'
import { invalid, notFound } from '../../errors.ts'

// Every lookup is scoped by workspace: an id or slug of another workspace is simply not found.
// The ones every write runs are compiled once (db/compiled.ts).

const param = sql.placeholder
const boardBySlug = compiled('board_by_slug', (db) => db.select().from(boards).where(and(eq(boards.workspaceId, param('workspaceId')), eq(boards.slug, param('slug')))))
const defaultStatus = compiled('default_status', (db) => db.select().from(statuses).where(and(eq(statuses.workspaceId, param('workspaceId')), eq(statuses.isDefault, true))).limit(1))
// A post's row without its list item (migration 0060: read by the board list only, not by the writes that lock the post).
const { listHead: _listHead, ...postRowColumns } = getTableColumns(posts)
const postRow = compiled('post_row', (db) => db.select(postRowColumns).from(posts).where(and(eq(posts.id, param('postId')), eq(posts.workspaceId, param('workspaceId')))))
const lockedPostRow = compiled('locked_post_row', (db) => db.select(postRowColumns).from(posts).where(and(eq(posts.id, param('postId')), eq(posts.workspaceId, param('workspaceId')))).for('update'))

export async function findBoard(db: Db | Tx, workspaceId: string, slug: string) {
  const [board] = await boardBySlug(db).execute({ workspaceId, slug })
  if (!board) throw notFound('Board')
  return board
}

/** A status by id or case-insensitive name; without one, the workspace default. */
export async function resolveStatus(db: Db | Tx, workspaceId: string, ref: string | undefined, loc: (string | number)[] = ['body', 'status']) {
  const [status] = ref === undefined
    ? await defaultStatus(db).execute({ workspaceId })
    : await db.select().from(statuses).where(and(eq(statuses.workspaceId, workspaceId), sql`(${statuses.id} = ${ref} or lower(${statuses.name}) = lower(${ref}))`)).limit(1)
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
  const [post] = await (lock ? lockedPostRow : postRow)(db).execute({ postId, workspaceId })
  if (!post) throw notFound('Post')
  return post
}
