import { and, asc, desc, eq, getTableColumns, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { boards, labels, postLabels, posts, statuses } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { authorEndUser, authorKey, authorSelection, authorUser, toAuthor, type AuthorRow } from '../feedback/actor.ts'
import { envelope, type Page } from '../feedback/paging.ts'

const { search: _search, ...postColumns } = getTableColumns(posts)

/** One row per post with its board, status and author joined in; labels come from one extra query per page. */
function selectPosts(db: Db | Tx) {
  return db
    .select({ ...postColumns, boardSlug: boards.slug, statusName: statuses.name, statusKind: statuses.kind, ...authorSelection, total: sql<number>`count(*) over()`.mapWith(Number) })
    .from(posts)
    .innerJoin(boards, eq(boards.id, posts.boardId))
    .innerJoin(statuses, eq(statuses.id, posts.statusId))
    .leftJoin(authorUser, eq(authorUser.id, posts.authorUserId))
    .leftJoin(authorEndUser, eq(authorEndUser.id, posts.authorEndUserId))
    .leftJoin(authorKey, eq(authorKey.id, posts.authorKeyId))
}

type PostRow = Awaited<ReturnType<ReturnType<typeof selectPosts>['execute']>>[number]

async function labelsOf(db: Db | Tx, postIds: string[]) {
  const byPost = new Map<string, string[]>()
  if (postIds.length === 0) return byPost
  const rows = await db.select({ postId: postLabels.postId, slug: labels.slug }).from(postLabels)
    .innerJoin(labels, eq(labels.id, postLabels.labelId)).where(inArray(postLabels.postId, postIds)).orderBy(asc(labels.slug))
  for (const row of rows) byPost.set(row.postId, [...(byPost.get(row.postId) ?? []), row.slug])
  return byPost
}

function toPostResponse(row: PostRow, labelSlugs: string[], publicView: boolean) {
  return {
    id: row.id,
    board: row.boardSlug,
    board_id: row.boardId,
    title: row.title,
    body: row.body,
    status: row.statusName,
    status_id: row.statusId,
    status_kind: row.statusKind,
    labels: labelSlugs,
    votes: row.voteCount,
    comment_count: row.commentCount,
    author: toAuthor(row as AuthorRow, publicView),
    // Who on the team owns a post is triage data, not for the portal or the widget.
    owner_user_id: publicView ? null : row.ownerUserId,
    merged_into: row.mergedIntoId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export type PostResponseBody = ReturnType<typeof toPostResponse>

async function render(db: Db | Tx, rows: PostRow[], publicView: boolean) {
  const labelMap = await labelsOf(db, rows.map((row) => row.id))
  return rows.map((row) => toPostResponse(row, labelMap.get(row.id) ?? [], publicView))
}

/** A post of the workspace, merged ones included (they show `merged_into`); 404 otherwise. */
export async function getPost(db: Db | Tx, workspaceId: string, postId: string, options: { publicView?: boolean } = {}) {
  const rows = await selectPosts(db).where(and(eq(posts.id, postId), eq(posts.workspaceId, workspaceId), ...(options.publicView ? [eq(boards.isPrivate, false)] : [])))
  if (!rows[0]) throw notFound('Post')
  return (await render(db, rows, options.publicView ?? false))[0]!
}

export interface PostFilters {
  status?: { id: string }
  labelId?: string
  q?: string
  sort?: 'top' | 'new' | 'trending'
}

const TRENDING = sql`${posts.voteCount} / power(extract(epoch from (now() - ${posts.createdAt})) / 3600 + 2, 1.5)`

/** A page of a board's posts (merged ones hidden): two queries for the page, whatever its size. */
export async function listPosts(db: Db | Tx, boardId: string, filters: PostFilters, page: Page, publicView = false) {
  const conditions: SQL[] = [eq(posts.boardId, boardId), isNull(posts.mergedIntoId)]
  if (filters.status) conditions.push(eq(posts.statusId, filters.status.id))
  if (filters.labelId) conditions.push(sql`exists (select 1 from ${postLabels} where ${postLabels.postId} = ${posts.id} and ${postLabels.labelId} = ${filters.labelId})`)
  const query = filters.q ? sql`websearch_to_tsquery('english', ${filters.q})` : undefined
  if (query) conditions.push(sql`${posts.search} @@ ${query}`)

  const order = filters.sort === 'top' ? [desc(posts.voteCount), desc(posts.createdAt)]
    : filters.sort === 'trending' ? [desc(TRENDING), desc(posts.createdAt)]
    : query && !filters.sort ? [desc(sql`ts_rank(${posts.search}, ${query})`), desc(posts.createdAt)]
    : [desc(posts.createdAt)]

  const rows = await selectPosts(db).where(and(...conditions)).orderBy(...order, desc(posts.id)).limit(page.perPage).offset(page.offset)
  // count(*) over() rides along with the page; only a page past the end needs its own count.
  const total = rows[0]?.total ?? (page.offset === 0 ? 0 : (await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(posts).where(and(...conditions)))[0]!.n)
  return envelope(await render(db, rows, publicView), page, total)
}

/**
 * Posts matching `where` (over the post row and its joined board and status), rendered like every other
 * post response: two queries whatever the limit. For views that pick posts across boards.
 */
export async function findPosts(db: Db | Tx, where: SQL | undefined, order: SQL[], limit: number, publicView = false) {
  const rows = await selectPosts(db).where(where).orderBy(...order, desc(posts.id)).limit(limit)
  return render(db, rows, publicView)
}
