// The duplicate-suggestion queue: what a new post's similar candidates above the threshold become, and
// what the team does with them (accept = merge, dismiss = never again for that pair).
import { and, desc, eq, inArray, isNull, sql } from 'drizzle-orm'
import { rowsOf, type Db, type Tx } from '../../db/client.ts'
import { duplicateSuggestions, posts } from '../../db/schema/index.ts'
import { conflict, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { envelope, type Page } from '../../lib/paging.ts'
import type { Language } from '../../lib/language.ts'
import { findPosts, getPost, postItemJsonShowing } from '../posts/queries.ts'
import { similarPostsMany } from './similarity.ts'

/** A candidate scoring this much or more is stored as a suggestion (tuned on test/fixtures/duplicates; docs/duplicates.md). */
export const SUGGESTION_THRESHOLD = 0.4
/** At most this many suggestions per new post. */
export const SUGGESTIONS_PER_POST = 3

interface NewPost { id: string; title: string; body: string; language: Language; board_id: string; labelIds?: string[] }

/** The suggestion step for one new post (suggestDuplicatesMany). */
export const suggestDuplicates = async (db: Db, workspaceId: string, post: NewPost) => (await suggestDuplicatesMany(db, workspaceId, [post])).flat()

/**
 * Stores each new post's best candidates above the threshold and raises `post.duplicate_suggested` for
 * each, for all the posts (of one workspace) in one statement. A pair stored before (suggested, accepted or
 * dismissed) is skipped by the pair's unique index, so a dismissed pair never comes back. Returns the pairs
 * stored, per post.
 */
export async function suggestDuplicatesMany(db: Db, workspaceId: string, newPosts: NewPost[]) {
  const found = await similarPostsMany(db, workspaceId, newPosts.map((post) => ({
    draft: { title: post.title, body: post.body, language: post.language, boardId: post.board_id, labelIds: post.labelIds },
    scope: { excludeId: post.id, olderOnly: true, limit: SUGGESTIONS_PER_POST },
  })))
  const above = newPosts.flatMap((post, i) => found[i]!.filter((candidate) => candidate.score >= SUGGESTION_THRESHOLD).map((candidate) => ({
    id: newId('duplicateSuggestion'), post_id: post.id, candidate_id: candidate.postId, score: candidate.score, reasons: candidate.reasons, event_id: newId('event'),
  })))
  const stored = above.length ? rowsOf<StoredPair>(await db.execute(storeSuggestions(workspaceId, above))) : []
  return newPosts.map((post) => stored.filter((pair) => pair.post_id === post.id))
}

interface StoredPair { id: string; post_id: string; candidate_id: string }

/**
 * The pairs inserted (in the order given: each post's candidates best first) and, for each one new, its
 * `post.duplicate_suggested` event with the suggestion as the list renders it (toSuggestion): both posts as
 * the team reads them, from the posts' read model (postItemJson), never shipped to the process and back.
 * test/api/duplicates.test.ts compares the event with the list's item.
 */
const storeSuggestions = (workspaceId: string, pairs: (StoredPair & { score: number; reasons: string[]; event_id: string })[]) => sql`
  with given as (
    select v.*, v.ord::int as position from jsonb_to_recordset(${JSON.stringify(pairs.map((pair, ord) => ({ ...pair, ord })))}::jsonb)
      as v(id text, post_id text, candidate_id text, score real, reasons jsonb, event_id text, ord int)),
  stored as (
    insert into duplicate_suggestions as d (id, workspace_id, post_id, candidate_id, score, reasons)
    select id, ${workspaceId}, post_id, candidate_id, score, reasons from given order by position
    on conflict do nothing
    returning d.id, d.post_id, d.candidate_id, d.score, d.reasons, d.status, d.created_at, d.decided_at),
  rendered as (
    select posts.id, ${postItemJsonShowing(sql`true`)} as json from posts
    where posts.workspace_id = ${workspaceId} and posts.id in (select post_id from stored union select candidate_id from stored)),
  raised as (
    insert into events (id, workspace_id, type, data)
    select g.event_id, ${workspaceId}, 'post.duplicate_suggested', ('{"suggestion":{"id":' || chorus_json(s.id) || ',"post":' || post.json || ',"candidate":' || candidate.json
      || ',"score":' || chorus_json(s.score) || ',"reasons":' || s.reasons::text || ',"status":' || chorus_json(s.status) || ',"created_at":' || chorus_json_time(s.created_at)
      || ',"decided_at":' || coalesce(chorus_json_time(s.decided_at), 'null') || '}}')::jsonb
    from stored s join given g on g.id = s.id join rendered post on post.id = s.post_id join rendered candidate on candidate.id = s.candidate_id
    order by g.position)
  select s.id, s.post_id, s.candidate_id from stored s join given g on g.id = s.id order by g.position`

/** The posts as the team reads them, in one query; a post gone meanwhile is a 404, as `getPost` makes it. */
async function renderPosts(db: Db | Tx, workspaceId: string, ids: string[]) {
  const byId = new Map((await findPosts(db, and(eq(posts.workspaceId, workspaceId), inArray(posts.id, ids)), [], ids.length)).map((found) => [found.id, found]))
  return (id: string) => {
    const found = byId.get(id)
    if (!found) throw notFound('Post')
    return found
  }
}

type SuggestionRow = typeof duplicateSuggestions.$inferSelect

async function renderSuggestion(db: Db | Tx, workspaceId: string, row: SuggestionRow) {
  const rendered = await renderPosts(db, workspaceId, [row.postId, row.candidateId])
  return toSuggestion(row, rendered(row.postId), rendered(row.candidateId))
}

function toSuggestion(row: SuggestionRow, post: Awaited<ReturnType<typeof getPost>>, candidate: Awaited<ReturnType<typeof getPost>>) {
  return {
    id: row.id, post, candidate, score: row.score, reasons: row.reasons, status: row.status,
    created_at: row.createdAt.toISOString(), decided_at: row.decidedAt?.toISOString() ?? null,
  }
}

/** Open suggestions whose two posts are both still unmerged, newest first; two queries whatever the page size. */
export async function listSuggestions(db: Db, workspaceId: string, page: Page) {
  const bothOpen = and(eq(duplicateSuggestions.workspaceId, workspaceId), eq(duplicateSuggestions.status, 'open'),
    sql`not exists (select 1 from ${posts} p where p.id in (${duplicateSuggestions.postId}, ${duplicateSuggestions.candidateId}) and p.merged_into_id is not null)`)
  const rows = await db.select({ row: duplicateSuggestions, total: sql<number>`count(*) over ()`.mapWith(Number) }).from(duplicateSuggestions)
    .where(bothOpen).orderBy(desc(duplicateSuggestions.createdAt), desc(duplicateSuggestions.id)).limit(page.perPage).offset(page.offset)
  const ids = [...new Set(rows.flatMap(({ row }) => [row.postId, row.candidateId]))]
  const rendered = ids.length ? await findPosts(db, and(eq(posts.workspaceId, workspaceId), inArray(posts.id, ids)), [], ids.length) : []
  const byId = new Map(rendered.map((post) => [post.id, post]))
  return envelope(rows.map(({ row }) => toSuggestion(row, byId.get(row.postId)!, byId.get(row.candidateId)!)), page, rows[0]?.total ?? 0)
}

async function openSuggestion(tx: Tx, workspaceId: string, id: string) {
  const [row] = await tx.select().from(duplicateSuggestions)
    .where(and(eq(duplicateSuggestions.id, id), eq(duplicateSuggestions.workspaceId, workspaceId))).for('update')
  if (!row) throw notFound('Duplicate suggestion')
  if (row.status !== 'open') throw conflict(`This suggestion was already ${row.status}`)
  return row
}

/** Accept: the newer post is merged into the candidate by the merge service (votes de-duplicated by voter, comments moved). */
export async function acceptSuggestion(db: Db, workspaceId: string, id: string, merge: (sourceId: string, intoId: string) => Promise<unknown>) {
  const row = await db.transaction((tx) => openSuggestion(tx, workspaceId, id))
  await merge(row.postId, row.candidateId)
  const [decided] = await db.update(duplicateSuggestions).set({ status: 'accepted', decidedAt: sql`now()` })
    .where(and(eq(duplicateSuggestions.id, id), eq(duplicateSuggestions.status, 'open'))).returning()
  if (!decided) throw conflict('This suggestion was decided meanwhile')
  return renderSuggestion(db, workspaceId, decided)
}

/** Dismiss: the pair stays stored as dismissed, so neither post is suggested for the other again. */
export async function dismissSuggestion(db: Db, workspaceId: string, id: string) {
  const decided = await db.transaction(async (tx) => {
    await openSuggestion(tx, workspaceId, id)
    const [row] = await tx.update(duplicateSuggestions).set({ status: 'dismissed', decidedAt: sql`now()` }).where(eq(duplicateSuggestions.id, id)).returning()
    return row!
  })
  return renderSuggestion(db, workspaceId, decided)
}

/** Candidates rendered as posts (public or team view), for the similar routes and the MCP tool. */
export async function similarItems(db: Db | Tx, workspaceId: string, found: { postId: string; score: number; reasons: string[] }[], publicView: boolean) {
  if (!found.length) return []
  const rendered = await findPosts(db, and(eq(posts.workspaceId, workspaceId), inArray(posts.id, found.map((item) => item.postId)), isNull(posts.mergedIntoId)), [], found.length, publicView)
  const byId = new Map(rendered.map((post) => [post.id, post]))
  return found.filter((item) => byId.has(item.postId)).map((item) => ({ post: byId.get(item.postId)!, score: item.score, reasons: item.reasons }))
}
