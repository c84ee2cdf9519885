import { and, asc, eq, getTableColumns, sql, type SQL } from 'drizzle-orm'
import { isUniqueViolation, type Db } from '../../db/client.ts'
import { boardPostCounts, boards } from '../../db/schema/index.ts'
import { notFound, slugTaken } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import type { BoardRow } from './model.ts'

interface BoardInput {
  name?: string
  slug?: string
  description?: string | null
  is_private?: boolean
}

/** The unmerged posts of a board, from the counts a trigger maintains (never a scan of the board). */
export const boardPostCount = sql<number>`(select coalesce(sum(${boardPostCounts.posts}), 0) from ${boardPostCounts} where ${boardPostCounts.boardId} = ${boards.id})::int`.mapWith(Number)

/** Boards with their post counts in one query, however many boards match. */
const selectBoards = (db: Db, where: SQL | undefined): Promise<BoardRow[]> =>
  db.select({ ...getTableColumns(boards), postCount: boardPostCount })
    .from(boards)
    .where(where)
    .orderBy(asc(boards.createdAt), asc(boards.id))

export const listBoards = (db: Db, workspaceId: string) => selectBoards(db, eq(boards.workspaceId, workspaceId))

export async function getBoard(db: Db, workspaceId: string, slug: string): Promise<BoardRow> {
  const [board] = await selectBoards(db, and(eq(boards.workspaceId, workspaceId), eq(boards.slug, slug)))
  if (!board) throw notFound('Board')
  return board
}

const trimmed = (text: string | null | undefined) => (typeof text === 'string' ? text.trim() || null : text)

export async function createBoard(db: Db, workspaceId: string, input: BoardInput & { name: string; slug: string }): Promise<BoardRow> {
  try {
    const [board] = await db.insert(boards).values({
      id: newId('board'),
      workspaceId,
      slug: input.slug,
      name: input.name.trim(),
      description: trimmed(input.description) ?? null,
      isPrivate: input.is_private ?? false,
    }).returning()
    return { ...board!, postCount: 0 }
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTaken(input.slug)
    throw error
  }
}

export async function updateBoard(db: Db, workspaceId: string, slug: string, input: BoardInput): Promise<BoardRow> {
  try {
    const [board] = await db.update(boards).set({
      ...(input.name !== undefined && { name: input.name.trim() }),
      ...(input.slug !== undefined && { slug: input.slug }),
      ...(input.description !== undefined && { description: trimmed(input.description) }),
      ...(input.is_private !== undefined && { isPrivate: input.is_private }),
      updatedAt: sql`now()`,
    }).where(and(eq(boards.workspaceId, workspaceId), eq(boards.slug, slug))).returning({ slug: boards.slug })
    if (!board) throw notFound('Board')
    return getBoard(db, workspaceId, board.slug)
  } catch (error) {
    if (isUniqueViolation(error) && input.slug) throw slugTaken(input.slug)
    throw error
  }
}

/** Posts reference their board with ON DELETE CASCADE, so their comments, votes and labels go in the same statement. */
export async function deleteBoard(db: Db, workspaceId: string, slug: string) {
  const [board] = await db.delete(boards).where(and(eq(boards.workspaceId, workspaceId), eq(boards.slug, slug))).returning({ id: boards.id })
  if (!board) throw notFound('Board')
}
