import { and, desc, eq, inArray, not, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { compiled } from '../../db/compiled.ts'
import { endUsers, posts, users, votes } from '../../db/schema/index.ts'
import { conflict, invalid } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { recordEvent } from '../../events/outbox.ts'
import { isUnverifiedEndUser, resolveActor, type FeedbackCaller, type OnBehalf } from '../feedback/actor.ts'
import { findPost } from '../feedback/lookups.ts'
import { envelope, totalOf, type Page } from '../../lib/paging.ts'
import type { VoteRemoval } from '../../plugins/end-user-writer.ts'

const param = sql.placeholder
const deleteMemberVote = compiled('delete_member_vote', (db) => db.delete(votes).where(and(eq(votes.postId, param('postId')), eq(votes.userId, param('voterId')))).returning())
const deleteEndUserVote = compiled('delete_end_user_vote', (db) => db.delete(votes).where(and(eq(votes.postId, param('postId')), eq(votes.endUserId, param('voterId')))).returning())
const insertVote = compiled('insert_vote', (db) => db.insert(votes).values({ id: param('id'), workspaceId: param('workspaceId'), postId: param('postId'), userId: param('userId'), endUserId: param('endUserId'), castBySession: param('castBySession') }))
const endUserVote = compiled('end_user_vote', (db) => db.select({ castBySession: votes.castBySession }).from(votes).where(and(eq(votes.postId, param('postId')), eq(votes.endUserId, param('voterId')))))

// Who may take an end user's vote back: VoteRemoval (plugins/auth.ts); members and keys always may.
const ANY: VoteRemoval = { kind: 'any' }
const addToVoteCount = compiled('add_to_vote_count', (db) =>
  db.update(posts).set({ voteCount: sql`${posts.voteCount} + ${param('change')}::int` }).where(eq(posts.id, param('postId'))).returning({ votes: posts.voteCount }))

/**
 * Toggles the voter's vote. The insert-or-delete and the counter update run in one transaction on the
 * post's locked row, so concurrent toggles keep `vote_count` equal to the number of vote rows.
 */
export async function toggleVote(db: Db, workspaceId: string, caller: FeedbackCaller, postId: string, onBehalf: OnBehalf, removal: VoteRemoval = ANY) {
  if (caller.kind === 'api_key' && onBehalf.email === undefined && onBehalf.end_user_id === undefined) {
    throw invalid(['body', 'email'], 'With an API key, name the voter with email or end_user_id')
  }
  return db.transaction(async (tx) => {
    // The post's lock and the voter's look-up (or creation) go out together, pipelined on PostgreSQL as in
    // createPost; the post's errors still come first, and a failure rolls the voter's creation back.
    const [locked, voter] = await Promise.allSettled([findPost(tx, workspaceId, postId, true), resolveActor(tx, workspaceId, caller, onBehalf)])
    if (locked.status === 'rejected') throw locked.reason
    if (locked.value.mergedIntoId) throw conflict(`This post was merged into ${locked.value.mergedIntoId}; vote there`)
    if (voter.status === 'rejected') throw voter.reason
    const actor = voter.value
    if (actor.kind === 'api_key') throw invalid(['body', 'email'], 'An API key cannot vote as itself')
    const userId = actor.kind === 'member' ? actor.userId : null
    const endUserId = actor.kind === 'end_user' ? actor.endUserId : null

    const verified = actor.kind !== 'end_user' || actor.verified
    const castBySession = removal.kind === 'any' ? null : removal.sessionId
    if (removal.kind !== 'any' && endUserId) {
      // A vote this writer may not take back stays cast: the answer says so, and nothing changes.
      const [existing] = await endUserVote(tx).execute({ postId, voterId: endUserId })
      if (existing && (removal.kind === 'none' || existing.castBySession !== castBySession)) return { voted: true, votes: locked.value.voteCount, verified }
    }
    const [removed] = await (userId ? deleteMemberVote : deleteEndUserVote)(tx).execute({ postId, voterId: userId ?? endUserId })
    const voteId = removed?.id ?? newId('vote')
    // The new vote and the counter go out together (pipelined on PostgreSQL, see createPost).
    const [, [updated]] = await Promise.all([
      removed ? undefined : insertVote(tx).execute({ id: voteId, workspaceId, postId, userId, endUserId, castBySession }),
      addToVoteCount(tx).execute({ postId, change: removed ? -1 : 1 }),
    ])
    const voted = !removed
    await recordEvent(tx, workspaceId, voted ? 'vote.created' : 'vote.deleted', {
      vote: { id: voteId, post_id: postId, voter: actor.kind === 'member' ? { type: 'member', id: actor.userId } : { type: 'end_user', id: (actor as { endUserId: string }).endUserId } },
      votes: updated!.votes,
    })
    return { voted, votes: updated!.votes, verified }
  })
}

/** Newest first, each with its voter, in one query for the page. */
export async function listVotes(db: Db, workspaceId: string, postId: string, page: Page, verified?: boolean) {
  await findPost(db, workspaceId, postId)
  const unverified = isUnverifiedEndUser(votes.endUserId)
  const where = and(eq(votes.postId, postId), eq(votes.workspaceId, workspaceId), verified === undefined ? undefined : verified ? not(unverified) : unverified)
  const rows = await db
    .select({ vote: votes, userName: sql<string | null>`coalesce(${users.name}, ${users.email})`, userEmail: users.email, endUserName: endUsers.name, endUserEmail: endUsers.email, endUserVerifiedAt: endUsers.verifiedAt, total: sql<number>`count(*) over()`.mapWith(Number) })
    .from(votes)
    .leftJoin(users, eq(users.id, votes.userId))
    .leftJoin(endUsers, eq(endUsers.id, votes.endUserId))
    .where(where)
    .orderBy(desc(votes.createdAt), desc(votes.id))
    .limit(page.perPage)
    .offset(page.offset)
  const total = await totalOf(rows, page, async () => (await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(votes).where(where))[0]!.n)
  const items = rows.map((row) => ({
    id: row.vote.id,
    post_id: row.vote.postId,
    voter: row.vote.userId
      ? { type: 'member' as const, id: row.vote.userId, name: row.userName, email: row.userEmail, verified: true }
      : { type: 'end_user' as const, id: row.vote.endUserId!, name: row.endUserName, email: row.endUserEmail, verified: row.endUserVerifiedAt !== null },
    verified: row.vote.userId !== null || row.endUserVerifiedAt !== null,
    created_at: row.vote.createdAt.toISOString(),
  }))
  return envelope(items, page, total)
}

/** Which of `postIds` the end user has voted for: one query, whatever the number of posts. */
export async function votedBy(db: Db, endUserId: string, postIds: string[]) {
  if (postIds.length === 0) return new Set<string>()
  const rows = await db.select({ postId: votes.postId }).from(votes).where(and(eq(votes.endUserId, endUserId), inArray(votes.postId, postIds)))
  return new Set(rows.map((row) => row.postId))
}
