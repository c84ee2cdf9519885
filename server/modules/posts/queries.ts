import { and, desc, eq, getTableColumns, isNull, sql, type SQL } from 'drizzle-orm'
import type { PgSelect } from 'drizzle-orm/pg-core'
import type { Db, Tx } from '../../db/client.ts'
import { compiled } from '../../db/compiled.ts'
import { boardPostCounts, boards, companies, events, labels, postCompanyVotes, postLabels, posts, statuses, workspaces } from '../../db/schema/index.ts'
import { isoTimestamp } from '../../db/schema/columns.ts'
import { notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { authorEndUser, authorKey, authorSelection, authorUser, authorVerified, isUnverifiedEndUser, toAuthor, type AuthorRow } from '../feedback/actor.ts'
import { findBoard, resolveLabels, resolveStatus } from '../feedback/lookups.ts'
import { envelope, type Page } from '../../lib/paging.ts'
import type { Language } from '../../lib/language.ts'
import { CREDENTIAL_CHANGES } from '../../lib/rate-limit.ts'

// What a post response reads: not the search vector, the sort keys only lists need, the workspace (the
// caller's) or the stored author name (the author comes from the joined rows); its times as it writes them.
const { search: _search, trending: _trending, labelIds: _labelIds, listHead: _listHead, workspaceId: _workspaceId, authorName: _authorName, ...tableColumns } = getTableColumns(posts)
const postColumns = { ...tableColumns, createdAt: isoTimestamp(posts.createdAt), updatedAt: isoTimestamp(posts.updatedAt) }

// A correlated subquery: a page's labels come with its rows (one round trip), looked up by the post_labels key.
const labelSlugs = sql<string[]>`coalesce((select array_agg(${labels.slug} order by ${labels.slug}) from ${postLabels} join ${labels} on ${labels.id} = ${postLabels.labelId} where ${postLabels.postId} = ${posts.id}), '{}')`

/** The joins every post response reads: board, status and the three kinds of author. */
export const withPostJoins = <Q extends PgSelect>(query: Q) => query
  .innerJoin(boards, eq(boards.id, posts.boardId))
  .innerJoin(statuses, eq(statuses.id, posts.statusId))
  .leftJoin(authorUser, eq(authorUser.id, posts.authorUserId))
  .leftJoin(authorEndUser, eq(authorEndUser.id, posts.authorEndUserId))
  .leftJoin(authorKey, eq(authorKey.id, posts.authorKeyId))

/** One row per post with its board, status, author and label slugs joined in. */
function selectPosts<T extends Record<string, SQL.Aliased | SQL>>(db: Db | Tx, extra: T = {} as T) {
  return withPostJoins(db.select({ ...postColumns, boardSlug: boards.slug, statusName: statuses.name, statusKind: statuses.kind, ...authorSelection, labelSlugs, ...extra }).from(posts).$dynamic())
}

/**
 * The team's post response (toPostResponse with publicView false, then revenueView) as JSON text, from the
 * posts' read model (migration 0060, docs/architecture.md#the-board-lists-read-model): the item a trigger keeps
 * rendered on the row in the same field order with the same values (compact), the MRR figure put in as the
 * caller may see it (`showMrr`: canSeeRevenue's answer; postItemJson takes it as a placeholder). The keyed reads send it as it
 * comes, with no join, row mapping, rendering, response validation or serialisation; test/api/post-json.test.ts
 * and post-list-model.test.ts compare it with the process's rendering.
 */
export const postItemJsonShowing = (showMrr: SQL | ReturnType<typeof sql.placeholder>) => sql`${posts.listHead} || case when ${showMrr}::boolean then ${posts.demandMrr}::text else 'null' end
  || ',"weighted":' || (floor(${posts.demandWeighted} * 1000000::float8 + 0.5) / 1000000::float8)
  || '},"score":' || coalesce(${posts.score}::text, 'null') || ',"factors":' || ${posts.factors}::text || ',"moderation":' || coalesce(to_json(${posts.moderation})::text, 'null') || '}'`
/** postItemJson for compiled statements: the MRR shown as the `showMrr` placeholder says. */
export const postItemJson = postItemJsonShowing(sql.placeholder('showMrr'))

type PostRow = Awaited<ReturnType<ReturnType<typeof selectPosts>['execute']>>[number]

function toPostResponse(row: PostRow, publicView: boolean) {
  return {
    id: row.id,
    board: row.boardSlug,
    board_id: row.boardId,
    title: row.title,
    body: row.body,
    status: row.statusName,
    status_id: row.statusId,
    status_kind: row.statusKind,
    labels: row.labelSlugs,
    votes: row.voteCount,
    comment_count: row.commentCount,
    author: toAuthor(row as AuthorRow, publicView),
    verified: authorVerified(row),
    // Who on the team owns a post is triage data, not for the portal or the widget.
    owner_user_id: publicView ? null : row.ownerUserId,
    merged_into: row.mergedIntoId,
    language: row.language as Language,
    // A link into the team's tracker is internal, like the owner.
    tracker_issue: publicView ? null : row.trackerIssue ?? null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    // The team's figures (docs/demand.md): left out of public reads altogether, not nulled.
    ...(!publicView && {
      demand: {
        voters: row.voteCount, verified_voters: row.demandVerifiedVoters, companies: row.demandCompanies,
        mrr: row.demandMrr as number | null, weighted: Math.round(row.demandWeighted * 1e6) / 1e6,
      },
      score: row.score,
      factors: row.factors,
      moderation: row.moderation,
    }),
  }
}

export type PostResponseBody = ReturnType<typeof toPostResponse>

const render = (rows: PostRow[], publicView: boolean) => rows.map((row) => toPostResponse(row, publicView))

const byId = and(eq(posts.id, sql.placeholder('id')), eq(posts.workspaceId, sql.placeholder('workspaceId')))
const postLookup = compiled('get_post', (db) => selectPosts(db).where(byId))
const postJsonLookup = compiled('get_post_json', (db) => db.select({ json: postItemJson, changes: CREDENTIAL_CHANGES }).from(posts).where(byId))
// A held post (docs/moderation.md) does not exist for the public until it is approved.
const publicPostLookup = compiled('get_public_post', (db) => selectPosts(db).where(and(byId, eq(boards.isPrivate, false), isNull(posts.moderation))))

// The `post.created` outbox row written by PostgreSQL from the post as the team reads it (its item with
// revenue shown: the body getPost renders, see test/api/post-json.test.ts). A create sends it in the same
// pipelined group as its inserts, instead of waiting for the post to come back before writing its event:
// one round trip fewer per create, a wait saved rather than work (BENCHMARKS.md, "Creates against the raw baselines").
const postCreatedEvent = compiled('insert_post_created_event', (db) => db.insert(events).select(db.select({
  id: sql<string>`${sql.placeholder('eventId')}::text`.as('id'), workspaceId: posts.workspaceId, type: sql<string>`'post.created'`.as('type'),
  data: sql<Record<string, unknown>>`('{"post":' || ${postItemJson} || '}')::jsonb`.as('data'), createdAt: sql<Date>`now()`.as('created_at'),
}).from(posts).where(byId)))

/** Writes `post.created` for a post of this transaction, its `post` as getPost would give it; returns the event's id. */
export async function recordPostCreated(tx: Tx, workspaceId: string, postId: string) {
  const eventId = newId('event')
  await postCreatedEvent(tx).execute({ eventId, id: postId, workspaceId, showMrr: true })
  return eventId
}

/** One compiled statement, on the pool (GET /posts/:id) or in the transaction of a write that returns the post. */
const lookupPost = (db: Db | Tx, workspaceId: string, postId: string, publicView: boolean) =>
  (publicView ? publicPostLookup : postLookup)(db).execute({ id: postId, workspaceId })

/** A post of the workspace, merged ones included (they show `merged_into`); 404 otherwise. One query. */
export async function getPost(db: Db | Tx, workspaceId: string, postId: string, options: { publicView?: boolean } = {}) {
  const rows = await lookupPost(db, workspaceId, postId, options.publicView ?? false)
  if (!rows[0]) throw notFound('Post')
  return toPostResponse(rows[0], options.publicView ?? false)
}

/**
 * GET /posts/:id's body from the read model (`postItemJson`) and the credential change count (for
 * `confirmedRead`), in one statement; 404 when the workspace has no such post.
 */
export async function getPostJson(db: Db | Tx, workspaceId: string, postId: string, showMrr: boolean) {
  const [row] = await postJsonLookup(db).execute({ id: postId, workspaceId, showMrr })
  if (!row) throw notFound('Post')
  return { value: row.json as string, changes: row.changes as number | null }
}

/** Which board a list reads: by slug in a workspace given by id (API) or by slug (public routes, public boards only). */
export interface BoardRef {
  workspace: { id: string } | { slug: string }
  board: string
  publicOnly?: boolean
}

/** Filters as the caller sent them: a status name or id, a label slug; unknown ones are 422 at `loc`. */
export interface PostFilters {
  status?: string
  label?: string
  q?: string
  sort?: 'top' | 'new' | 'trending' | 'mrr' | 'companies' | 'score'
  /** Team lists only: posts this company (external or `co_` id) voted for with a verified vote. */
  company?: string
  /** Team lists only: `demand_mrr` at least this (minor units). */
  minMrr?: number
  /** Whether the author is verified: `false` keeps only posts of unconfirmed anonymous visitors. */
  verified?: boolean
}

/** With `q` and no sort, this many newest matches are ranked by relevance; any further ones follow newest first. */
export const RANKED_MATCHES = 500
/** Lists filtered by `label` or `q` count at most this many matches past the page's start (see docs/api.md#lists-and-paging). */
export const COUNTED_MATCHES = 200

/** The same keys over a subquery's columns. */
const KEYS = {
  top: 'vote_count desc, created_at desc, id desc', trending: 'trending desc nulls last, created_at desc, id desc', new: 'created_at desc, id desc',
  mrr: 'demand_mrr desc, created_at desc, id desc', companies: 'demand_companies desc, created_at desc, id desc', score: 'score desc nulls last, created_at desc, id desc',
}

/** The sort keys, each matching one of the posts_list_*_idx indexes, so a page is an index walk. */
function orderOf(sort: PostFilters['sort']): SQL {
  if (sort === 'top') return sql`${posts.voteCount} desc, ${posts.createdAt} desc, ${posts.id} desc`
  if (sort === 'trending') return sql`${posts.trending} desc nulls last, ${posts.createdAt} desc, ${posts.id} desc`
  if (sort === 'mrr') return sql`${posts.demandMrr} desc, ${posts.createdAt} desc, ${posts.id} desc`
  if (sort === 'companies') return sql`${posts.demandCompanies} desc, ${posts.createdAt} desc, ${posts.id} desc`
  if (sort === 'score') return sql`${posts.score} desc nulls last, ${posts.createdAt} desc, ${posts.id} desc`
  return sql`${posts.createdAt} desc, ${posts.id} desc`
}

const param = (name: string) => sql.placeholder(name)

/**
 * The sort as a constant of each shape's text, one of KEYS' names only. As a placeholder (one text
 * shared by the three sorts) PostgreSQL kept custom plans for it in the size test of
 * test/api/post-lists.test.ts; as a constant the test sees its generic plan reused.
 */
const SORT_ARGUMENTS = Object.fromEntries(Object.keys(KEYS).map((name) => [name, sql.raw(`'${name}'`)])) as Record<keyof typeof KEYS, SQL>

/**
 * The page query and its total for one shape of list (sort, which filters, how the board is named),
 * with every value but the sort a placeholder: each shape is a named prepared statement, so PostgreSQL plans it
 * once per connection instead of on every request (planning this join costs more than running it).
 */
function buildList(db: Db | Tx, ref: BoardRef, filters: PostFilters) {
  const workspaceId = 'id' in ref.workspace ? sql`${param('workspace')}` : sql`(select ${workspaces.id} from ${workspaces} where ${workspaces.slug} = ${param('workspace')})`
  const boardId = sql`(select ${boards.id} from ${boards} where ${boards.workspaceId} = ${workspaceId} and ${boards.slug} = ${param('board')}${ref.publicOnly ? sql` and not ${boards.isPrivate}` : sql``})`
  const statusId = filters.status === undefined ? undefined
    : sql`(select ${statuses.id} from ${statuses} where ${statuses.workspaceId} = ${workspaceId} and (${statuses.id} = ${param('status')} or lower(${statuses.name}) = lower(${param('status')})) limit 1)`
  const labelId = filters.label === undefined ? undefined
    : sql`(select ${labels.id} from ${labels} where ${labels.workspaceId} = ${workspaceId} and ${labels.slug} = ${param('label')})`
  const query = filters.q ? sql`(select chorus_search_query(${param('q')}))` : undefined

  // Held posts are not on their board yet (docs/moderation.md): the team finds them in the inbox and the queue.
  const conditions: SQL[] = [sql`${posts.boardId} = ${boardId}`, sql`${posts.mergedIntoId} is null`, sql`${posts.moderation} is null`]
  if (statusId) conditions.push(sql`${posts.statusId} = ${statusId}`)
  // Read from the list index's entry (it carries label_ids), not by probing post_labels for every post walked.
  if (labelId) conditions.push(sql`${posts.labelIds} @> array[${labelId}]`)
  if (query) conditions.push(sql`${posts.search} @@ ${query}`)
  if (filters.company !== undefined) {
    conditions.push(sql`exists (select 1 from ${postCompanyVotes} join ${companies} on ${companies.id} = ${postCompanyVotes.companyId}
      where ${postCompanyVotes.postId} = ${posts.id} and ${companies.workspaceId} = ${workspaceId} and (${companies.externalId} = ${param('company')} or ${companies.id} = ${param('company')}))`)
  }
  if (filters.minMrr !== undefined) conditions.push(sql`${posts.demandMrr} >= ${param('minMrr')}`)
  // A constant of the shape (part of its key), so it needs no placeholder.
  if (filters.verified !== undefined) conditions.push(filters.verified ? sql`not ${isUnverifiedEndUser(posts.authorEndUserId)}` : isUnverifiedEndUser(posts.authorEndUserId))
  const where = sql.join(conditions, sql` and `)

  // With label, q or verified there is no maintained count: the page comes from a bounded scan (offset + COUNTED_MATCHES
  // matches, in index order) that also counts, so finding and counting the matches is one walk.
  const bounded = Boolean(labelId || query || filters.verified !== undefined || filters.company !== undefined || filters.minMrr !== undefined)
  const candidates = (order: SQL) => sql`select ${posts.id} as id, ${posts.voteCount} as vote_count, ${posts.createdAt} as created_at, ${posts.trending} as trending, ${posts.search} as search,
      ${posts.demandMrr} as demand_mrr, ${posts.demandCompanies} as demand_companies, ${posts.score} as score
    from ${posts} where ${where} order by ${order} limit ${param('counted')}`
  const ids = query && !filters.sort
    // Relevance over a bounded set: the newest RANKED_MATCHES matches by ts_rank, then the rest newest first.
    ? sql`select id, n, total from (
        select id, row_number() over (order by case when newest <= ${RANKED_MATCHES} then ts_rank(search, ${query}) end desc nulls last, created_at desc, id desc) as n, count(*) over () as total
        from (select *, row_number() over (order by created_at desc, id desc) as newest from (${candidates(orderOf('new'))}) c) m) r
      where n > ${param('offset')} order by n limit ${param('limit')}`
    : bounded
      ? sql`select id, n, total from (select id, row_number() over (order by ${sql.raw(KEYS[filters.sort ?? 'new'])}) as n, count(*) over () as total from (${candidates(orderOf(filters.sort))}) c) r
          where n > ${param('offset')} order by n limit ${param('limit')}`
      // The walk behind a function (migration 0022), so this statement's generic plan fits any board and is reused.
      : sql`select id, n from unnest(chorus_post_page(${boardId}, ${statusId ? sql`coalesce(${statusId}, '')` : sql`null`}, ${SORT_ARGUMENTS[filters.sort ?? 'new'] ?? SORT_ARGUMENTS.new}, ${param('limit')}, ${param('offset')})) with ordinality as page(id, n)`
  const total = bounded
    ? sql`(select count(*) from (select 1 from ${posts} where ${where} limit ${param('counted')}) counted)::int`
    : sql`(select coalesce(sum(${boardPostCounts.posts}), 0) from ${boardPostCounts} where ${boardPostCounts.boardId} = ${boardId}${statusId ? sql` and ${boardPostCounts.statusId} = ${statusId}` : sql``})::int`

  return {
    page: selectPosts(db, { total: (bounded ? sql<number>`page.total` : sql<number>`${total}`).mapWith(Number) })
      .innerJoin(sql`(${ids}) as page`, sql`page.id = ${posts.id}`)
      .orderBy(sql`page.n`),
    total: db.select({ n: sql<number>`${total}`.mapWith(Number) }).from(sql`(select 1) as one`),
    // The page as the team's list body writes it (`postItemJson`, no join), in the page's order; no row and a null total when the page is empty.
    json: db.select({
      items: sql<string>`'[' || coalesce(string_agg(${postItemJson}, ',' order by page.n), '') || ']'`,
      total: sql<number | null>`max(${bounded ? sql`page.total` : total})`,
      // One row whatever the page holds (an aggregate), so the count is read even for an empty page.
      changes: CREDENTIAL_CHANGES,
    }).from(posts).innerJoin(sql`(${ids}) as page`, sql`page.id = ${posts.id}`),
  }
}

/** The page and total statements of each shape of list, compiled once per database (server/db/compiled.ts). */
const listStatements = new Map<string, { page: ReturnType<typeof compiledPage>; total: ReturnType<typeof compiledTotal>; json: ReturnType<typeof compiledJson> }>()
const compiledPage = (shape: string, ref: BoardRef, filters: PostFilters) => compiled(`list_posts_${shape}`, (db) => buildList(db, ref, filters).page)
const compiledTotal = (shape: string, ref: BoardRef, filters: PostFilters) => compiled(`list_posts_total_${shape}`, (db) => buildList(db, ref, filters).total)
const compiledJson = (shape: string, ref: BoardRef, filters: PostFilters) => compiled(`list_posts_json_${shape}`, (db) => buildList(db, ref, filters).json)

function listStatementsOf(ref: BoardRef, filters: PostFilters) {
  const shape = [filters.sort ?? (filters.q ? 'relevance' : 'new'), filters.status !== undefined ? 's' : '', filters.label !== undefined ? 'l' : '', filters.q ? 'q' : '',
    'id' in ref.workspace ? 'ws' : 'slug', ref.publicOnly ? 'pub' : '', filters.verified === undefined ? '' : `v${Number(filters.verified)}`,
    filters.company !== undefined ? 'c' : '', filters.minMrr !== undefined ? 'm' : ''].join('_')
  let statements = listStatements.get(shape)
  if (!statements) listStatements.set(shape, (statements = { page: compiledPage(shape, ref, filters), total: compiledTotal(shape, ref, filters), json: compiledJson(shape, ref, filters) }))
  return statements
}

/**
 * A page of a board's posts (merged ones hidden) in one prepared query: the board, status and label
 * are resolved inside it, the page's ids come from an index walk (only they are joined and rendered),
 * and `total` comes from the maintained per-board counts, or from a bounded count with `label`/`q`.
 * Only an empty page costs more: it finds out whether a reference was unknown (404/422) or the page is past the end.
 */
export async function listPosts(db: Db | Tx, ref: BoardRef, filters: PostFilters, page: Page, publicView = false, loc = 'query') {
  // Revenue never orders or filters a public list, whatever reaches this far.
  if (publicView) filters = { ...filters, company: undefined, minMrr: undefined, sort: filters.sort === 'top' || filters.sort === 'trending' || filters.sort === 'new' ? filters.sort : undefined }
  const rows = await listStatementsOf(ref, filters).page(db).execute(listValues(ref, filters, page))
  if (rows[0]) return envelope(render(rows, publicView), page, rows[0].total)
  return envelope([], page, await emptyPageTotal(db, ref, filters, page, loc))
}

/**
 * The team's list body (listPosts with publicView false, then revenueView) as JSON text: the page's
 * posts' items from the read model (`postItemJson`) in the same one statement, the envelope around them here;
 * with the credential change count that statement read (for `confirmedRead`).
 */
export async function listPostsJson(db: Db | Tx, ref: BoardRef, filters: PostFilters, page: Page, showMrr: boolean, loc = 'query') {
  const [row] = await listStatementsOf(ref, filters).json(db).execute({ ...listValues(ref, filters, page), showMrr })
  const found = row !== undefined && row.total !== null
  const total = found ? Number(row.total) : await emptyPageTotal(db, ref, filters, page, loc)
  // The envelope's other fields after the items, as envelope() orders them.
  const rest = JSON.stringify(envelope([], page, total)).slice('{"items":[]'.length)
  return { value: `{"items":${found ? row.items : '[]'}${rest}`, changes: (row?.changes ?? null) as number | null }
}

const listValues = (ref: BoardRef, filters: PostFilters, page: Page) => ({
  workspace: 'id' in ref.workspace ? ref.workspace.id : ref.workspace.slug, board: ref.board, status: filters.status, label: filters.label, q: filters.q,
  company: filters.company, minMrr: filters.minMrr,
  limit: page.perPage, offset: page.offset, counted: page.offset + Math.max(COUNTED_MATCHES, page.perPage),
})

/** Nothing on the page: an unknown workspace, board, status or label is an error, not an empty list; otherwise the total the page is past. */
async function emptyPageTotal(db: Db | Tx, ref: BoardRef, filters: PostFilters, page: Page, loc: string) {
  let workspaceId = 'id' in ref.workspace ? ref.workspace.id : undefined
  if (workspaceId === undefined) {
    const [found] = await db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.slug, (ref.workspace as { slug: string }).slug))
    if (!found) throw notFound('Workspace')
    workspaceId = found.id
  }
  const board = await findBoard(db, workspaceId, ref.board)
  if (ref.publicOnly && board.isPrivate) throw notFound('Board')
  if (filters.status !== undefined) await resolveStatus(db, workspaceId, filters.status, [loc, 'status'])
  if (filters.label !== undefined) await resolveLabels(db, workspaceId, [filters.label], [loc, 'label'])
  if (page.offset === 0) return 0
  const [counted] = await listStatementsOf(ref, filters).total(db).execute(listValues(ref, filters, page))
  return counted!.n
}

/**
 * Posts matching `where` (over the post row and its joined board and status), rendered like every other
 * post response: one query whatever the limit. For views that pick posts across boards.
 */
export async function findPosts(db: Db | Tx, where: SQL | undefined, order: SQL[], limit: number, publicView = false, offset = 0) {
  const rows = await selectPosts(db).where(where).orderBy(...order, desc(posts.id)).limit(limit).offset(offset)
  return render(rows, publicView)
}

/**
 * A page of the workspace's posts on public boards (merged ones hidden), best match first with `q`,
 * else newest first: the public search behind duplicate suggestions. One query; `total` is exact.
 */
export async function searchPosts(db: Db | Tx, workspaceId: string, filters: { q?: string; verified?: boolean }, page: Page) {
  const query = filters.q ? sql`(select chorus_search_query(${filters.q}))` : undefined
  const unverified = isUnverifiedEndUser(posts.authorEndUserId)
  const where = and(eq(posts.workspaceId, workspaceId), eq(boards.isPrivate, false), sql`${posts.mergedIntoId} is null`, isNull(posts.moderation),
    query && sql`${posts.search} @@ ${query}`, filters.verified === undefined ? undefined : filters.verified ? sql`not ${unverified}` : unverified)
  const order = query ? [desc(sql`ts_rank(${posts.search}, ${query})`), desc(posts.createdAt)] : [desc(posts.createdAt)]
  const rows = await selectPosts(db, { total: sql<number>`count(*) over ()`.mapWith(Number) }).where(where).orderBy(...order, desc(posts.id)).limit(page.perPage).offset(page.offset)
  return envelope(render(rows, true), page, rows[0]?.total ?? 0)
}
