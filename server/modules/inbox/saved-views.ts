import { and, asc, eq, or, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { savedViews, type InboxFilterValues } from '../../db/schema/index.ts'
import { forbidden, invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Member } from '../../plugins/credentials.ts'
import { listInbox } from './queries.ts'

// Saved inbox views. A member sees their own views and the shared ones; a key (no member) sees the
// shared ones and makes only shared ones. A view is changed by whoever made it; a shared view also by
// an admin or the owner (members share views, admins tidy them up).

/** Who acts on views: the member behind a session or OAuth token (with their role), or a key. */
export interface ViewActor { workspaceId: string; userId: string | null; role: Member['role'] | null }

type Row = typeof savedViews.$inferSelect

const toView = (row: Row) => ({
  id: row.id, name: row.name, filters: row.filters, shared: row.shared, owner_user_id: row.userId,
  created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString(),
})

const visibleTo = (actor: ViewActor) => and(eq(savedViews.workspaceId, actor.workspaceId),
  actor.userId ? or(eq(savedViews.shared, true), eq(savedViews.userId, actor.userId)) : eq(savedViews.shared, true))

export async function listViews(db: Db, actor: ViewActor) {
  const rows = await db.select().from(savedViews).where(visibleTo(actor)).orderBy(asc(savedViews.createdAt), asc(savedViews.id))
  return { items: rows.map(toView) }
}

async function findView(db: Db, actor: ViewActor, viewId: string) {
  const [row] = await db.select().from(savedViews).where(and(visibleTo(actor), eq(savedViews.id, viewId)))
  if (!row) throw notFound('View')
  return row
}

export const getView = async (db: Db, actor: ViewActor, viewId: string) => toView(await findView(db, actor, viewId))

/** A view's filters must make a valid inbox query: checked by running it for one post. */
async function checkFilters(db: Db, actor: ViewActor, filters: InboxFilterValues) {
  const query = { ...filters, unanswered: bool(filters.unanswered), verified: bool(filters.verified) } as Parameters<typeof listInbox>[2]
  await listInbox(db, { workspaceId: actor.workspaceId, userId: actor.userId }, query, { page: 1, perPage: 1, offset: 0 }, 'body.filters')
}
const bool = (value: unknown) => (value === undefined ? undefined : value === 'true' || value === true)

export async function createView(db: Db, actor: ViewActor, input: { name: string; filters?: InboxFilterValues; shared?: boolean }) {
  if (!actor.userId && input.shared === false) throw invalid(['body', 'shared'], 'A view made with an API key belongs to no member: it is always shared')
  const filters = input.filters ?? {}
  await checkFilters(db, actor, filters)
  const [row] = await db.insert(savedViews).values({ id: newId('savedView'), workspaceId: actor.workspaceId, userId: actor.userId, name: input.name.trim(), filters, shared: input.shared ?? !actor.userId }).returning()
  return toView(row!)
}

function mayChange(actor: ViewActor, row: Row) {
  if (row.userId !== null && row.userId === actor.userId) return
  if (row.shared && (actor.role === 'admin' || actor.role === 'owner')) return
  if (row.shared && row.userId === null && !actor.userId) return
  throw forbidden('Only the member who made this view (or an admin, for a shared view) can change it')
}

export async function updateView(db: Db, actor: ViewActor, viewId: string, changes: { name?: string; filters?: InboxFilterValues; shared?: boolean }) {
  const row = await findView(db, actor, viewId)
  mayChange(actor, row)
  if (changes.shared === false && row.userId === null) throw invalid(['body', 'shared'], 'A view made with an API key belongs to no member: it stays shared')
  if (changes.filters) await checkFilters(db, actor, changes.filters)
  const [updated] = await db.update(savedViews).set({
    ...(changes.name !== undefined && { name: changes.name.trim() }),
    ...(changes.filters !== undefined && { filters: changes.filters }),
    ...(changes.shared !== undefined && { shared: changes.shared }),
    updatedAt: sql`now()`,
  }).where(eq(savedViews.id, viewId)).returning()
  return toView(updated!)
}

export async function deleteView(db: Db, actor: ViewActor, viewId: string) {
  const row = await findView(db, actor, viewId)
  mayChange(actor, row)
  await db.delete(savedViews).where(eq(savedViews.id, viewId))
}
