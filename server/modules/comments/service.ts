import { and, asc, eq, sql, type SQL } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { comments, posts, workspaces } from '../../db/schema/index.ts'
import { ApiError, conflict, forbidden, invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Caller } from '../../plugins/auth.ts'
import type { Member } from '../../plugins/credentials.ts'
import { recordEvent } from '../../events/outbox.ts'
import { authorColumns, authorEndUser, authorKey, authorSelection, authorUser, resolveActor, toReplyAuthor, type AuthorRow, type FeedbackCaller, type OnBehalf } from '../feedback/actor.ts'
import { findPost } from '../feedback/lookups.ts'
import { envelope, totalOf, type Page } from '../../lib/paging.ts'

/** Who may see internal notes: members, and keys holding comments:internal; never end users. */
export const seesInternal = (caller: FeedbackCaller) => caller.kind === 'session' || ((caller.kind === 'api_key' || caller.kind === 'oauth') && caller.scopes.includes('comments:internal'))

function selectComments(db: Db | Tx) {
  return db
    .select({ comment: comments, ...authorSelection, workspaceName: workspaces.name, total: sql<number>`count(*) over()`.mapWith(Number) })
    .from(comments)
    .innerJoin(workspaces, eq(workspaces.id, comments.workspaceId))
    .leftJoin(authorUser, eq(authorUser.id, comments.authorUserId))
    .leftJoin(authorEndUser, eq(authorEndUser.id, comments.authorEndUserId))
    .leftJoin(authorKey, eq(authorKey.id, comments.authorKeyId))
}

type CommentRow = Awaited<ReturnType<ReturnType<typeof selectComments>['execute']>>[number]

export const toCommentResponse = (row: CommentRow, publicView = false) => ({
  id: row.comment.id,
  post_id: row.comment.postId,
  parent_id: row.comment.parentId,
  body: row.comment.body,
  internal: row.comment.internal,
  author: toReplyAuthor(row as AuthorRow, row.workspaceName, publicView),
  created_at: row.comment.createdAt.toISOString(),
  updated_at: row.comment.updatedAt.toISOString(),
})

/** Oldest first, so a thread reads top-down; replies carry `parent_id`. */
export async function listComments(db: Db | Tx, workspaceId: string, postId: string, page: Page, options: { internal: boolean; publicView?: boolean }) {
  await findPost(db, workspaceId, postId)
  const conditions: SQL[] = [eq(comments.postId, postId), eq(comments.workspaceId, workspaceId)]
  if (!options.internal) conditions.push(eq(comments.internal, false))
  const rows = await selectComments(db).where(and(...conditions)).orderBy(asc(comments.createdAt), asc(comments.id)).limit(page.perPage).offset(page.offset)
  const total = await totalOf(rows, page, async () => (await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(comments).where(and(...conditions)))[0]!.n)
  return envelope(rows.map((row) => toCommentResponse(row, options.publicView)), page, total)
}

export async function getComment(db: Db | Tx, workspaceId: string, commentId: string, caller: Caller) {
  const [row] = await selectComments(db).where(and(eq(comments.id, commentId), eq(comments.workspaceId, workspaceId)))
  // An internal note is invisible, not forbidden, to a key without comments:internal.
  if (!row || (row.comment.internal && !seesInternal(caller))) throw notFound('Comment')
  return row
}

export interface CommentInput extends OnBehalf {
  body: string
  internal?: boolean
  parent_id?: string
}

const adjustCount = (tx: Tx, postId: string, delta: number) =>
  tx.update(posts).set({ commentCount: sql`${posts.commentCount} + ${delta}` }).where(eq(posts.id, postId))

export async function createComment(db: Db, workspaceId: string, caller: FeedbackCaller, postId: string, input: CommentInput, publicView = false) {
  if (input.internal && !seesInternal(caller)) {
    throw new ApiError('INSUFFICIENT_SCOPE', 'Internal comments need the comments:internal scope', { required_scope: 'comments:internal' })
  }
  return db.transaction(async (tx) => {
    const post = await findPost(tx, workspaceId, postId, true)
    if (post.mergedIntoId) throw conflict(`This post was merged into ${post.mergedIntoId}; comment there`)
    if (input.parent_id !== undefined) {
      const [parent] = await tx.select().from(comments).where(and(eq(comments.id, input.parent_id), eq(comments.postId, postId)))
      if (!parent || (parent.internal && !input.internal)) throw invalid(['body', 'parent_id'], 'parent_id must be a comment of the same post (a public reply cannot answer an internal note)')
    }
    const actor = await resolveActor(tx, workspaceId, caller, input)
    const id = newId('comment')
    await tx.insert(comments).values({ id, workspaceId, postId, parentId: input.parent_id ?? null, body: input.body, internal: input.internal ?? false, ...authorColumns(actor) })
    if (!input.internal) await adjustCount(tx, postId, 1)
    const [row] = await selectComments(tx).where(eq(comments.id, id))
    const comment = toCommentResponse(row!, publicView)
    await recordEvent(tx, workspaceId, 'comment.created', { comment: toCommentResponse(row!), post_id: postId })
    return comment
  })
}

/** Authors edit their own comments; admins, and keys and access tokens with comments:write, edit any. */
function assertMayEdit(row: CommentRow, caller: Caller, member: Member | null) {
  if (caller.kind === 'api_key' || caller.kind === 'oauth') return
  if (row.comment.authorUserId === caller.user.id || (member && member.role !== 'member')) return
  throw forbidden('Only the author or an admin can change this comment')
}

export async function updateComment(db: Db, workspaceId: string, caller: Caller, member: Member | null, commentId: string, body: string) {
  const row = await getComment(db, workspaceId, commentId, caller)
  assertMayEdit(row, caller, member)
  await db.update(comments).set({ body, updatedAt: sql`now()` }).where(eq(comments.id, commentId))
  return toCommentResponse((await selectComments(db).where(eq(comments.id, commentId)))[0]!)
}

/** Replies of a deleted comment move up to its parent, so threads stay connected. */
export async function deleteComment(db: Db, workspaceId: string, caller: Caller, member: Member | null, commentId: string) {
  const row = await getComment(db, workspaceId, commentId, caller)
  assertMayEdit(row, caller, member)
  await db.transaction((tx) => removeComment(tx, workspaceId, row))
}

/** Deletes a loaded comment in `tx`: its replies move up to its parent, the post's count follows, `comment.deleted` is raised. */
export async function removeComment(tx: Tx, workspaceId: string, row: CommentRow) {
  await tx.update(comments).set({ parentId: row.comment.parentId }).where(eq(comments.parentId, row.comment.id))
  await tx.delete(comments).where(eq(comments.id, row.comment.id))
  if (!row.comment.internal) await adjustCount(tx, row.comment.postId, -1)
  await recordEvent(tx, workspaceId, 'comment.deleted', { comment: toCommentResponse(row), post_id: row.comment.postId })
}

/** Every comment an end user wrote in the workspace, oldest first (their export and erasure). */
export const commentsByEndUser = (db: Db | Tx, workspaceId: string, endUserId: string) =>
  selectComments(db).where(and(eq(comments.workspaceId, workspaceId), eq(comments.authorEndUserId, endUserId))).orderBy(asc(comments.createdAt), asc(comments.id))
