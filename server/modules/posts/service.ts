import { and, eq, sql } from 'drizzle-orm'
import { rowsOf, type Db, type Tx } from '../../db/client.ts'
import { holdsIdempotencyKey } from '../../db/effects.ts'
import { members, postLabels, posts, statusChanges, votes, workspaces } from '../../db/schema/index.ts'
import { conflict, invalid } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { detectLanguage, type Language } from '../../lib/language.ts'
import { stripBidiControls } from '../../lib/text.ts'
import type { Caller } from '../../plugins/auth.ts'
import { recordEvent } from '../../events/outbox.ts'
import { authorColumns, resolveActor, teamAuthor, type FeedbackCaller, type OnBehalf } from '../feedback/actor.ts'
import { findBoard, findPost, resolveLabels, resolveStatus } from '../feedback/lookups.ts'
import { getPost, getPostJson, recordPostCreated, type PostResponseBody } from './queries.ts'
import { createPostStatement } from './create.ts'
import { applyFactors, recordScoreChanged } from '../scoring/service.ts'

export interface PostInput extends OnBehalf {
  title: string
  body?: string
  labels?: string[]
  status?: string
  /** From the writer's `locale` or `Content-Language` (lib/language.ts); detected from the text when absent. */
  language?: Language
}

/** A change the service makes on its own, e.g. when the connected tracker reports an issue done. */
export type ServiceCaller = { kind: 'service' }

// An end user's post, or a change the service made, has no member or key behind it: both columns stay null.
export const changedBy = (caller: FeedbackCaller | ServiceCaller) => (caller.kind === 'api_key' ? { changedByKeyId: caller.keyId } : caller.kind === 'session' || caller.kind === 'oauth' ? { changedByUserId: caller.user.id } : {})

async function setLabels(tx: Tx, postId: string, labelIds: string[]) {
  await tx.delete(postLabels).where(eq(postLabels.postId, postId))
  if (labelIds.length) await tx.insert(postLabels).values(labelIds.map((labelId) => ({ postId, labelId })))
}

/** A title as stored: without bidirectional controls (see TITLE_TEXT_RULE) and surrounding whitespace. */
function cleanTitle(title: string) {
  const clean = stripBidiControls(title).trim()
  if (!clean) throw invalid(['body', 'title'], 'The title is empty without its bidirectional control characters and surrounding whitespace')
  return clean
}

/** Whether an end user's new post gets its author's vote (`settings.author_votes`, default true). */
async function authorVotes(tx: Db | Tx, workspaceId: string) {
  const [row] = await tx.select({ on: sql<boolean>`coalesce((${workspaces.settings}->>'author_votes')::boolean, true)` }).from(workspaces).where(eq(workspaces.id, workspaceId))
  return row?.on ?? true
}

/** What moderation decided for an end user's write (moderation/service.ts): held, and its check to keep beside the post. */
export interface PostModeration {
  held: boolean
  record?: (tx: Tx, postId: string) => Promise<unknown>
}

/**
 * Creates the post, its labels, its first status-history entry and the `post.created` event; returns the
 * post as JSON text, rendered by PostgreSQL (GET /posts/{id}'s body). A key's or member's post is one
 * statement (createPostStatement) and nothing else. A write that needs more (an end user resolved or
 * created, the author's vote, a moderation check) runs in a transaction with the statement in it, and so
 * does a request holding an Idempotency-Key (its mark must commit with the post: db/effects.ts).
 */
export async function createPostJson(db: Db, workspaceId: string, caller: FeedbackCaller, boardSlug: string, input: PostInput, moderation: PostModeration = { held: false }): Promise<string> {
  const alone = caller.kind !== 'end_user' && input.email === undefined && input.end_user_id === undefined && !moderation.record && !holdsIdempotencyKey()
  // Duplicate suggestions are found in the background: post.created queues a check (duplicates/queue.ts).
  return alone ? writePost(db, workspaceId, caller, boardSlug, input, moderation) : db.transaction((tx) => writePost(tx, workspaceId, caller, boardSlug, input, moderation))
}

/** createPostJson's post as an object (the MCP tool, inbound e-mail, the widget's and portal's writes). */
export async function createPost(db: Db, workspaceId: string, caller: FeedbackCaller, boardSlug: string, input: PostInput, moderation: PostModeration = { held: false }): Promise<PostResponseBody> {
  return JSON.parse(await createPostJson(db, workspaceId, caller, boardSlug, input, moderation))
}

async function writePost(db: Db | Tx, workspaceId: string, caller: FeedbackCaller, boardSlug: string, input: PostInput, moderation: PostModeration) {
  const actor = await resolveActor(db, workspaceId, caller, input)
  const id = newId('post')
  const title = cleanTitle(input.title)
  // A post an end user writes themselves (widget, portal) starts with their own vote, unless the workspace
  // turns that off; one a member or key files for them (an import, a support ticket) does not vote for them.
  const firstVote = caller.kind === 'end_user' && actor.kind === 'end_user' && (await authorVotes(db, workspaceId)) ? { id: newId('vote'), endUserId: actor.endUserId } : null
  const labels = [...new Set(input.labels ?? [])]
  const [created] = rowsOf<{ json: string }>(await createPostStatement(db, labels).execute({
    workspaceId, boardSlug, status: input.status ?? null, labels, id, title, body: input.body ?? '', ...authorColumns(actor),
    language: input.language ?? detectLanguage(`${title}\n${input.body ?? ''}`), moderation: moderation.held ? 'held' : null,
    statusChangeId: newId('statusChange'), changedByUserId: null, changedByKeyId: null, ...changedBy(caller), eventId: newId('event'), showMrr: true,
    // A held post is announced when it is approved (moderation/service.ts approvePost), never before; a post
    // with its author's vote is announced below, once the vote's demand trigger has updated it.
    announce: !moderation.held && !firstVote,
  }))
  if (!created) return missingReference(db, workspaceId, boardSlug, input)
  if (!firstVote && !moderation.record) return created.json
  const tx = db as Tx
  const written = await Promise.all([
    firstVote ? tx.insert(votes).values({ id: firstVote.id, workspaceId, postId: id, endUserId: firstVote.endUserId }).execute() : undefined,
    firstVote ? tx.update(posts).set({ voteCount: 1 }).where(eq(posts.id, id)).execute() : undefined,
    moderation.record?.(tx, id),
    firstVote && !moderation.held ? recordPostCreated(tx, workspaceId, id) : undefined,
    firstVote && !moderation.held ? recordEvent(tx, workspaceId, 'vote.created', { vote: { id: firstVote.id, post_id: id, voter: { type: 'end_user', id: firstVote.endUserId } }, votes: 1 }) : undefined,
    firstVote ? getPostJson(tx, workspaceId, id, true) : undefined,
  ])
  return written[5]?.value ?? created.json
}

/** Why the create statement wrote nothing: the board, then the status, then a label is unknown (the errors the lookups give). */
async function missingReference(db: Db | Tx, workspaceId: string, boardSlug: string, input: PostInput): Promise<never> {
  await findBoard(db, workspaceId, boardSlug)
  await resolveStatus(db, workspaceId, input.status)
  await resolveLabels(db, workspaceId, input.labels ?? [])
  throw conflict('The board, status or labels changed while the post was written; try again')
}

export interface PostChanges {
  title?: string
  body?: string
  status?: string
  labels?: string[]
  board?: string
  owner_user_id?: string | null
  /** A note to the post's voters that goes with a status change (carried as `message` on `status.changed`). */
  status_message?: string
  /** Scoring inputs to set (number) or clear (null): docs/demand.md#scores. */
  factors?: Record<string, number | null>
  /** A correction of the detected language; an edit of the title or body keeps the language. */
  language?: Language
}

/** Applies the changes; a status change is kept as history and raises `status.changed` besides `post.updated`. */
export async function updatePost(db: Db | Tx, workspaceId: string, caller: Caller | ServiceCaller, postId: string, changes: PostChanges) {
  return db.transaction(async (tx) => {
    const current = await findPost(tx, workspaceId, postId, true)
    const before = await getPost(tx, workspaceId, postId)
    const status = changes.status !== undefined ? await resolveStatus(tx, workspaceId, changes.status) : undefined
    const board = changes.board !== undefined ? await findBoard(tx, workspaceId, changes.board) : undefined
    if (changes.owner_user_id) {
      const [owner] = await tx.select().from(members).where(and(eq(members.workspaceId, workspaceId), eq(members.userId, changes.owner_user_id), eq(members.status, 'active')))
      if (!owner) throw invalid(['body', 'owner_user_id'], 'The owner must be an active member of the workspace')
    }
    if (changes.labels !== undefined) await setLabels(tx, postId, (await resolveLabels(tx, workspaceId, changes.labels)).map((label) => label.id))
    await tx.update(posts).set({
      ...(changes.title !== undefined && { title: cleanTitle(changes.title) }),
      ...(changes.body !== undefined && { body: changes.body }),
      ...(status && { statusId: status.id }),
      ...(board && { boardId: board.id }),
      ...(changes.owner_user_id !== undefined && { ownerUserId: changes.owner_user_id }),
      ...(changes.language !== undefined && { language: changes.language }),
      updatedAt: sql`now()`,
    }).where(eq(posts.id, postId))
    const scored = changes.factors !== undefined ? await applyFactors(tx, workspaceId, postId, changes.factors, changedBy(caller)) : undefined

    const post = await getPost(tx, workspaceId, postId)
    if (scored && scored.from !== scored.to) await recordScoreChanged(tx, workspaceId, post, scored.from, scored.to)
    if (status && status.id !== current.statusId) {
      await tx.insert(statusChanges).values({ id: newId('statusChange'), postId, fromStatusId: current.statusId, toStatusId: status.id, ...changedBy(caller) })
      // The team's message and name go to the post's subscribers (post-subscriptions/fanout.ts).
      if (post.moderation !== 'held') await recordEvent(tx, workspaceId, 'status.changed', { post, from_status: before.status, to_status: post.status, message: changes.status_message ?? null, author: await teamAuthor(tx, workspaceId, caller) })
    }
    // A held post has not been announced yet: its edits are not either (approval announces the post as it is then).
    if (post.moderation === 'held') return post
    await recordEvent(tx, workspaceId, 'post.updated', { post, previous: before })
    return post
  })
}

export async function deletePost(db: Db | Tx, workspaceId: string, postId: string) {
  await db.transaction(async (tx) => {
    const post = await getPost(tx, workspaceId, postId)
    await tx.delete(posts).where(eq(posts.id, postId))
    // A held post was never announced, so its deletion is not either.
    if (post.moderation !== 'held') await recordEvent(tx, workspaceId, 'post.deleted', { post })
  })
}

/**
 * Merges `sourceId` into `intoId`: the source's votes move unless the voter already voted on the
 * target, its comments move, counts are recomputed from the rows, and the source keeps `merged_into`.
 */
export async function mergePost(db: Db | Tx, workspaceId: string, sourceId: string, intoId: string) {
  if (sourceId === intoId) throw invalid(['body', 'into_post_id'], 'A post cannot be merged into itself')
  return db.transaction(async (tx) => {
    // Lock both rows in id order, so two merges touching the same posts cannot deadlock or interleave.
    const [first, second] = [sourceId, intoId].sort()
    const locked = new Map([[first!, await findPost(tx, workspaceId, first!, true)], [second!, await findPost(tx, workspaceId, second!, true)]])
    const source = locked.get(sourceId)!
    const target = locked.get(intoId)!
    if (source.mergedIntoId) throw conflict(`This post was already merged into ${source.mergedIntoId}`)
    if (target.mergedIntoId) throw conflict(`The target post was itself merged into ${target.mergedIntoId}; merge into that one`)

    await tx.execute(sql`
      update votes set post_id = ${intoId}
      where post_id = ${sourceId} and not exists (
        select 1 from votes t where t.post_id = ${intoId}
          and (t.user_id = votes.user_id or t.end_user_id = votes.end_user_id))`)
    await tx.execute(sql`delete from votes where post_id = ${sourceId}`)
    await tx.execute(sql`update comments set post_id = ${intoId} where post_id = ${sourceId}`)
    await tx.execute(sql`
      update posts set
        vote_count = (select count(*) from votes where post_id = ${intoId}),
        comment_count = (select count(*) from comments where post_id = ${intoId} and not internal),
        updated_at = now()
      where id = ${intoId}`)
    await tx.update(posts).set({ mergedIntoId: intoId, voteCount: 0, commentCount: 0, updatedAt: sql`now()` }).where(eq(posts.id, sourceId))

    const merged = await getPost(tx, workspaceId, sourceId)
    const into = await getPost(tx, workspaceId, intoId)
    await recordEvent(tx, workspaceId, 'post.merged', { post: merged, into })
    return { post: merged, into }
  })
}
