import { and, eq, inArray, sql, type SQL } from 'drizzle-orm'
import { rowsOf, type Db, type Tx } from '../../db/client.ts'
import { boardPostCounts, boards, comments, members, postReads, posts } from '../../db/schema/index.ts'
import { invalid } from '../../errors.ts'
import { envelope, type Page } from '../../lib/paging.ts'
import { isUnverifiedEndUser } from '../feedback/actor.ts'
import { findPosts, COUNTED_MATCHES, type PostResponseBody } from '../posts/queries.ts'
import { resolveLabels, resolveStatus } from '../feedback/lookups.ts'

// The inbox: one list over every board of a workspace. A page's ids come from a walk of one of the
// posts_inbox_*_idx indexes (migration 0026; the board's own list index with `board`), bounded like the
// board list's filtered pages: at most offset + COUNTED_MATCHES matches are walked, which also counts
// them. Only the page's ids are then rendered, with the same post responses as every other list.

export type InboxSort = 'new' | 'top' | 'trending' | 'oldest_unanswered'

export interface InboxFilters {
  board?: string
  status?: string
  label?: string
  owner?: string
  unanswered?: boolean
  stale_days?: number
  verified?: boolean
  q?: string
  sort?: InboxSort
}

/** Who reads: a member (session or OAuth user) has read state and `owner=me`; a key has neither. */
export interface InboxReader { workspaceId: string; userId: string | null }

/** A public reply by a member or a key answers the customer; internal notes do not. */
export const teamAnswered = sql`exists (select 1 from ${comments} where ${comments.postId} = ${posts.id} and not ${comments.internal} and (${comments.authorUserId} is not null or ${comments.authorKeyId} is not null))`

/** The latest of a post's own change and its newest comment: what "unread" and "stale" compare with. */
export const lastActivity = sql`greatest(${posts.updatedAt}, coalesce((select max(${comments.createdAt}) from ${comments} where ${comments.postId} = ${posts.id}), ${posts.updatedAt}))`

/** Each sort's keys, matching its index; the same keys number the walked rows (by the subquery's column names). */
const KEYS: Record<InboxSort, string> = {
  new: 'created_at desc, id desc',
  top: 'vote_count desc, created_at desc, id desc',
  trending: 'trending desc nulls last, created_at desc, id desc',
  oldest_unanswered: 'created_at asc, id asc',
}

/** Filters turned into conditions; a board, status or label that is not the workspace's is a 422 at `loc`. */
async function conditionsOf(db: Db | Tx, reader: InboxReader, filters: InboxFilters, loc: string) {
  const conditions: SQL[] = [sql`${posts.workspaceId} = ${reader.workspaceId}`, sql`${posts.mergedIntoId} is null`]
  let boardId: string | undefined
  let statusId: string | undefined
  if (filters.board !== undefined) {
    const [board] = await db.select({ id: boards.id }).from(boards).where(and(eq(boards.workspaceId, reader.workspaceId), eq(boards.slug, filters.board)))
    if (!board) throw invalid([loc, 'board'], `Unknown board "${filters.board}"`)
    boardId = board.id
    conditions.push(sql`${posts.boardId} = ${boardId}`)
  }
  if (filters.status !== undefined) {
    statusId = (await resolveStatus(db, reader.workspaceId, filters.status, [loc, 'status'])).id
    conditions.push(sql`${posts.statusId} = ${statusId}`)
  }
  if (filters.label !== undefined) {
    const [label] = await resolveLabels(db, reader.workspaceId, [filters.label], [loc, 'label'])
    conditions.push(sql`${posts.labelIds} @> array[${label!.id}]`)
  }
  if (filters.owner !== undefined) conditions.push(await ownerCondition(db, reader, filters.owner, loc))
  if (filters.unanswered !== undefined || filters.sort === 'oldest_unanswered') {
    conditions.push(filters.unanswered === false ? teamAnswered : sql`not ${teamAnswered}`)
  }
  if (filters.stale_days !== undefined) conditions.push(sql`${lastActivity} < now() - make_interval(days => ${filters.stale_days})`)
  if (filters.verified !== undefined) conditions.push(filters.verified ? sql`not ${isUnverifiedEndUser(posts.authorEndUserId)}` : isUnverifiedEndUser(posts.authorEndUserId))
  if (filters.q) conditions.push(sql`${posts.search} @@ websearch_to_tsquery('english', ${filters.q})`)
  // Only board and status: the maintained per-board counts give an exact total without a count. Named
  // filter by filter, so what else a caller's query carries (`page`, `per_page`) cannot make it bounded.
  const exactTotal = filters.label === undefined && filters.owner === undefined && filters.unanswered === undefined && filters.stale_days === undefined
    && filters.verified === undefined && !filters.q && filters.sort !== 'oldest_unanswered'
  return { where: sql.join(conditions, sql` and `), boardId, statusId, exactTotal }
}

async function ownerCondition(db: Db | Tx, reader: InboxReader, owner: string, loc: string) {
  if (owner === 'unassigned') return sql`${posts.ownerUserId} is null`
  if (owner === 'me') {
    if (!reader.userId) throw invalid([loc, 'owner'], '`owner=me` needs a signed-in member; an API key has no "me": name the user id')
    return sql`${posts.ownerUserId} = ${reader.userId}`
  }
  const [member] = await db.select({ id: members.userId }).from(members).where(and(eq(members.workspaceId, reader.workspaceId), eq(members.userId, owner)))
  if (!member) throw invalid([loc, 'owner'], 'The owner must be `me`, `unassigned` or the user id of a member of the workspace')
  return sql`${posts.ownerUserId} = ${owner}`
}

/** The exact total from the maintained per-board counts, as a scalar subquery of the page's walk. */
const exactTotal = (workspaceId: string, boardId: string | undefined, statusId: string | undefined) => sql`(select coalesce(sum(${boardPostCounts.posts}), 0)::int from ${boardPostCounts}
    join ${boards} on ${boards.id} = ${boardPostCounts.boardId}
    where ${boards.workspaceId} = ${workspaceId}${boardId ? sql` and ${boardPostCounts.boardId} = ${boardId}` : sql``}${statusId ? sql` and ${boardPostCounts.statusId} = ${statusId}` : sql``})`

/** Whether each post is unread for the member: never opened, or changed or commented on since. */
export async function unreadOf(db: Db | Tx, userId: string, postIds: string[]): Promise<Map<string, boolean>> {
  if (postIds.length === 0) return new Map()
  const rows = await db.select({ id: posts.id, unread: sql<boolean>`(${postReads.readAt} is null or ${postReads.readAt} < ${lastActivity})` })
    .from(posts)
    .leftJoin(postReads, and(eq(postReads.postId, posts.id), eq(postReads.userId, userId)))
    .where(inArray(posts.id, postIds))
  return new Map(rows.map((row) => [row.id, row.unread]))
}

export type InboxItem = PostResponseBody & { unread: boolean | null }

/** A page of the inbox, each post with its unread marker for a member. */
export async function listInbox(db: Db | Tx, reader: InboxReader, filters: InboxFilters, page: Page, loc = 'query') {
  const { where, boardId, statusId, exactTotal: exact } = await conditionsOf(db, reader, filters, loc)
  const keys = sql.raw(KEYS[filters.sort ?? 'new'])
  const counted = page.offset + Math.max(COUNTED_MATCHES, page.perPage)
  // The walk stops after `counted` rows in index order; numbering and counting happen over those only. The
  // exact total (when there is one) rides in the same statement: one row even when the page is empty.
  const rows = rowsOf<{ id: string | null; total: number | null; exact: number | null }>(await db.execute(sql`
    select numbered.id, numbered.total, ${exact ? exactTotal(reader.workspaceId, boardId, statusId) : sql`null::int`} as exact
    from (select 1) one left join (
      select id, total, n from (
        select id, row_number() over (order by ${keys}) as n, count(*) over () as total
        from (select ${posts.id} as id, ${posts.createdAt} as created_at, ${posts.voteCount} as vote_count, ${posts.trending} as trending
          from ${posts} where ${where} order by ${keys} limit ${counted}) walked
      ) numbered where n > ${page.offset} order by n limit ${page.perPage}
    ) numbered on true order by numbered.n`))
  const ids = rows.flatMap((row) => (row.id === null ? [] : [row.id]))
  const found = ids.length ? await findPosts(db, inArray(posts.id, ids), [], ids.length) : []
  const position = new Map(ids.map((id, i) => [id, i]))
  found.sort((a, b) => position.get(a.id)! - position.get(b.id)!)
  const unread = reader.userId ? await unreadOf(db, reader.userId, ids) : undefined
  const items: InboxItem[] = found.map((post) => ({ ...post, unread: unread ? (unread.get(post.id) ?? true) : null }))
  let total: number
  if (exact) total = Number(rows[0]!.exact)
  else if (ids.length) total = Number(rows[0]!.total)
  else total = page.offset === 0 ? 0 : rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from (select 1 from ${posts} where ${where} limit ${counted}) c`)).map((row) => Number(row.n))[0]!
  return envelope(items, page, total)
}
