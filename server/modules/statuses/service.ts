import { and, asc, count, eq, getTableColumns, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import { isUniqueViolation, type Db, type Tx } from '../../db/client.ts'
import { posts, statusChanges, statuses, type StatusKind } from '../../db/schema/index.ts'
import { conflict, invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { recordEvent } from '../../events/outbox.ts'
import { findPosts } from '../posts/queries.ts'
import type { StatusRow } from './model.ts'

interface StatusInput {
  name?: string
  kind?: StatusKind
  color?: string
  position?: number
  is_default?: boolean
}

/** Larger than any real position: "after everything". */
const LAST = 2_147_483_647

/** Statuses with their post counts in one grouped query, in workflow order. */
const selectStatuses = (db: Db | Tx, where: SQL | undefined): Promise<StatusRow[]> =>
  db.select({ ...getTableColumns(statuses), postCount: count(posts.id) })
    .from(statuses)
    .leftJoin(posts, and(eq(posts.statusId, statuses.id), isNull(posts.mergedIntoId)))
    .where(where)
    .groupBy(statuses.id)
    .orderBy(asc(statuses.position), asc(statuses.createdAt), asc(statuses.id))

export const listStatuses = (db: Db, workspaceId: string) => selectStatuses(db, eq(statuses.workspaceId, workspaceId))

async function getStatus(db: Db, workspaceId: string, statusId: string): Promise<StatusRow> {
  const [status] = await selectStatuses(db, and(eq(statuses.workspaceId, workspaceId), eq(statuses.id, statusId)))
  if (!status) throw notFound('Status')
  return status
}

/**
 * Every write to a workspace's statuses starts here: locking all its rows serializes concurrent
 * reorders, default switches and deletions, so positions stay 0..n-1 and there is one default.
 * The locks are taken in id order: in heap order, two waiting writers can lock the same rows in
 * different orders (each renumber rewrites them) and deadlock.
 */
const lockStatuses = (tx: Tx, workspaceId: string) =>
  tx.select({ id: statuses.id, name: statuses.name, isDefault: statuses.isDefault }).from(statuses)
    .where(eq(statuses.workspaceId, workspaceId)).orderBy(asc(statuses.id)).for('update')

/** Renumbers the statuses 0..n-1 in their current order; with `place`, that status goes to index `place.at` (clamped to last). */
async function renumber(tx: Tx, workspaceId: string, place?: { id: string; at: number }) {
  const at = place?.at ?? LAST
  await tx.execute(sql`
    update ${statuses} set position = ordered.ordinal + (case when ordered.ordinal >= ${at} then 1 else 0 end)
    from (
      select id, row_number() over (order by position, created_at, id) - 1 as ordinal
      from ${statuses} where workspace_id = ${workspaceId} and id <> ${place?.id ?? ''}
    ) as ordered
    where ${statuses}.id = ordered.id`)
  if (place) {
    await tx.execute(sql`
      update ${statuses} set position = least(${at}, (select count(*) - 1 from ${statuses} where workspace_id = ${workspaceId}))
      where id = ${place.id}`)
  }
}

/** One statement flips every flag, so the workspace never has zero or two defaults, even for a moment. */
const makeDefault = (tx: Tx, workspaceId: string, statusId: string) =>
  tx.update(statuses).set({ isDefault: sql`${statuses.id} = ${statusId}` }).where(eq(statuses.workspaceId, workspaceId))

const duplicateName = (name: string) => conflict(`A status named "${name.trim()}" already exists in this workspace`)

export async function createStatus(db: Db, workspaceId: string, input: StatusInput & { name: string; kind: StatusKind }) {
  const id = newId('status')
  try {
    await db.transaction(async (tx) => {
      await lockStatuses(tx, workspaceId)
      await tx.insert(statuses).values({ id, workspaceId, name: input.name.trim(), kind: input.kind, color: input.color, position: LAST })
      await renumber(tx, workspaceId, { id, at: input.position ?? LAST })
      if (input.is_default) await makeDefault(tx, workspaceId, id)
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateName(input.name)
    throw error
  }
  return getStatus(db, workspaceId, id)
}

export async function updateStatus(db: Db, workspaceId: string, statusId: string, input: StatusInput) {
  try {
    await db.transaction(async (tx) => {
      const current = (await lockStatuses(tx, workspaceId)).find((status) => status.id === statusId)
      if (!current) throw notFound('Status')
      if (input.is_default === false && current.isDefault) throw conflict('A workspace always has one default status: make another status the default instead')
      const changes = {
        ...(input.name !== undefined && { name: input.name.trim() }),
        ...(input.kind !== undefined && { kind: input.kind }),
        ...(input.color !== undefined && { color: input.color }),
      }
      if (Object.keys(changes).length) await tx.update(statuses).set(changes).where(eq(statuses.id, statusId))
      if (input.position !== undefined) await renumber(tx, workspaceId, { id: statusId, at: input.position })
      if (input.is_default) await makeDefault(tx, workspaceId, statusId)
    })
  } catch (error) {
    if (isUniqueViolation(error) && input.name !== undefined) throw duplicateName(input.name)
    throw error
  }
  return getStatus(db, workspaceId, statusId)
}

/** Posts moved off a deleted status keep their history and raise `status.changed`, like any other status change. */
async function recordMovedPosts(tx: Tx, workspaceId: string, postIds: string[], fromName: string, fromStatusId: string, toStatusId: string, changedByUserId: string) {
  if (postIds.length === 0) return
  await tx.insert(statusChanges).values(postIds.map((postId) => ({ id: newId('statusChange'), postId, fromStatusId, toStatusId, changedByUserId })))
  for (const post of await findPosts(tx, inArray(posts.id, postIds), [], postIds.length)) {
    await recordEvent(tx, workspaceId, 'status.changed', { post, from_status: fromName, to_status: post.status })
  }
}

/**
 * Deletes a status that is not the default. Its posts (merged ones included, which still reference it)
 * must move to `moveTo`, in the same transaction; without `moveTo` a status with posts is 409.
 */
export async function deleteStatus(db: Db, workspaceId: string, statusId: string, moveTo: string | undefined, changedByUserId: string) {
  await db.transaction(async (tx) => {
    const locked = await lockStatuses(tx, workspaceId)
    const status = locked.find((row) => row.id === statusId)
    if (!status) throw notFound('Status')
    if (status.isDefault) throw conflict('The default status cannot be deleted: make another status the default first')
    if (moveTo !== undefined) {
      if (moveTo === statusId) throw invalid(['query', 'move_to'], 'move_to must name another status than the one being deleted')
      if (!locked.some((row) => row.id === moveTo)) throw notFound('Status named by move_to')
      const moved = await tx.update(posts).set({ statusId: moveTo, updatedAt: sql`now()` })
        .where(and(eq(posts.workspaceId, workspaceId), eq(posts.statusId, statusId))).returning({ id: posts.id })
      await recordMovedPosts(tx, workspaceId, moved.map((row) => row.id), status.name, statusId, moveTo, changedByUserId)
    } else {
      const [used] = await tx.select({ posts: count() }).from(posts).where(eq(posts.statusId, statusId))
      if (used!.posts > 0) throw conflict(`The status still has ${used!.posts} post(s): pass move_to with the id of the status to move them to`)
    }
    await tx.delete(statuses).where(eq(statuses.id, statusId))
    await renumber(tx, workspaceId)
  })
}
