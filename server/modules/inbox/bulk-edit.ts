import { and, asc, eq, inArray, sql } from 'drizzle-orm'
import type { Tx } from '../../db/client.ts'
import { members, postLabels, posts, statusChanges } from '../../db/schema/index.ts'
import { invalid, notFound, type ApiError } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Caller } from '../../plugins/auth.ts'
import { recordEvents, type EventType } from '../../events/outbox.ts'
import { teamAuthor } from '../feedback/actor.ts'
import { findBoard, resolveLabels, resolveStatus } from '../feedback/lookups.ts'
import { findPosts } from '../posts/queries.ts'
import { changedBy } from '../posts/service.ts'

// The edit half of a bulk change (status, labels, owner, board) as a few set-based statements instead of
// updatePost once per post: one lock of all rows, one read before and one after, one update, one label
// rewrite, one insert of status changes and one of events. What each post ends with, and the events it
// records (`status.changed` when its status moved, then `post.updated`), are the ones updatePost writes
// for a single change; a post that is missing, of another workspace, or refused is a failed result.

export interface BulkEdit {
  status?: string
  status_message?: string
  add_labels?: string[]
  remove_labels?: string[]
  owner_user_id?: string | null
  board_slug?: string
}

export interface BulkItem { post_id: string; ok: boolean; error: { code: string; message: string } | null }

const failure = (postId: string, error: ApiError): BulkItem => ({ post_id: postId, ok: false, error: { code: error.code, message: error.issues?.[0]?.msg ?? error.message } })

export async function editPosts(tx: Tx, workspaceId: string, caller: Caller, postIds: string[], edit: BulkEdit): Promise<BulkItem[]> {
  const inWorkspace = and(eq(posts.workspaceId, workspaceId), inArray(posts.id, postIds))
  // Rows locked in id order, as mergePost locks, so concurrent changes of the same posts cannot deadlock.
  const locked = await tx.select({ id: posts.id, statusId: posts.statusId }).from(posts).where(inWorkspace).orderBy(asc(posts.id)).for('update')
  const statusBefore = new Map(locked.map((row) => [row.id, row.statusId]))
  if (edit.owner_user_id) {
    const [owner] = await tx.select({ id: members.userId }).from(members).where(and(eq(members.workspaceId, workspaceId), eq(members.userId, edit.owner_user_id), eq(members.status, 'active')))
    if (!owner) {
      const refused = invalid(['body', 'owner_user_id'], 'The owner must be an active member of the workspace')
      return postIds.map((postId) => failure(postId, statusBefore.has(postId) ? refused : notFound('Post')))
    }
  }
  if (locked.length < postIds.length) return postIds.map((postId) => (statusBefore.has(postId) ? { post_id: postId, ok: true, error: null } : failure(postId, notFound('Post'))))

  const status = edit.status !== undefined ? await resolveStatus(tx, workspaceId, edit.status) : undefined
  const board = edit.board_slug !== undefined ? await findBoard(tx, workspaceId, edit.board_slug) : undefined
  const before = await findPosts(tx, inWorkspace, [], postIds.length)
  if (edit.add_labels || edit.remove_labels) {
    const removed = new Set(edit.remove_labels ?? [])
    const wanted = before.map((post) => ({ id: post.id, slugs: [...new Set([...post.labels, ...(edit.add_labels ?? [])])].filter((slug) => !removed.has(slug)) }))
    const labelIds = new Map((await resolveLabels(tx, workspaceId, [...new Set(wanted.flatMap((post) => post.slugs))])).map((label) => [label.slug, label.id]))
    await tx.delete(postLabels).where(inArray(postLabels.postId, postIds))
    const rows = wanted.flatMap((post) => post.slugs.map((slug) => ({ postId: post.id, labelId: labelIds.get(slug)! })))
    if (rows.length) await tx.insert(postLabels).values(rows)
  }
  await tx.update(posts).set({
    ...(status && { statusId: status.id }),
    ...(board && { boardId: board.id }),
    ...(edit.owner_user_id !== undefined && { ownerUserId: edit.owner_user_id }),
    updatedAt: sql`now()`,
  }).where(inWorkspace)

  const after = new Map((await findPosts(tx, inWorkspace, [], postIds.length)).map((post) => [post.id, post]))
  const previous = new Map(before.map((post) => [post.id, post]))
  const moved = status ? postIds.filter((postId) => statusBefore.get(postId) !== status.id) : []
  if (status && moved.length) {
    await tx.insert(statusChanges).values(moved.map((postId) => ({ id: newId('statusChange'), postId, fromStatusId: statusBefore.get(postId)!, toStatusId: status.id, ...changedBy(caller) })))
  }
  const author = moved.length ? await teamAuthor(tx, workspaceId, caller) : null
  const movedSet = new Set(moved)
  await recordEvents(tx, workspaceId, postIds.flatMap((postId) => {
    const post = after.get(postId)!
    const was = previous.get(postId)!
    const updated = { type: 'post.updated' as EventType, data: { post, previous: was } }
    if (!movedSet.has(postId)) return [updated]
    return [{ type: 'status.changed' as EventType, data: { post, from_status: was.status, to_status: post.status, message: edit.status_message ?? null, author } }, updated]
  }))
  return postIds.map((postId) => ({ post_id: postId, ok: true, error: null }))
}
