import { and, asc, desc, eq, getTableColumns, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { boards, labels, postLabels, posts, statuses } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { authorEndUser, authorKey, authorSelection, authorUser, toAuthor, type AuthorRow } from '../feedback/actor.ts'
import { envelope, totalOf, type Page } from '../feedback/paging.ts'

const { search: _search, ...postColumns } = getTableColumns(posts)

const isTransaction = (db: Db | Tx): db is Tx => 'rollback' in db

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

function prepareLabelLookup(db: Db) {
  return db.select({ postId: postLabels.postId, slug: labels.slug }).from(postLabels)
    .innerJoin(labels, eq(labels.id, postLabels.labelId))
    .where(sql`${postLabels.postId} = any(${sql.placeholder('postIds')}::text[])`)
    .orderBy(asc(labels.slug))
    .prepare('post_labels_of')
}
const preparedLabelLookups = new WeakMap<Db, ReturnType<typeof prepareLabelLookup>>()

/** Label slugs of a page of posts, in one (prepared, outside transactions) query. */
async function labelsOf(db: Db | Tx, postIds: string[]) {
  const byPost = new Map<string, string[]>()
  if (postIds.length === 0) return byPost
  let rows: { postId: string; slug: string }[]
  if (isTransaction(db)) {
    rows = await db.select({ postId: postLabels.postId, slug: labels.slug }).from(postLabels)
      .innerJoin(labels, eq(labels.id, postLabels.labelId)).where(inArray(postLabels.postId, postIds)).orderBy(asc(labels.slug))
  } else {
    let prepared = preparedLabelLookups.get(db)
    if (!prepared) preparedLabelLookups.set(db, (prepared = prepareLabelLookup(db)))
    rows = await prepared.execute({ postIds })
  }
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

function preparePostLookup(db: Db) {
  return selectPosts(db).where(and(eq(posts.id, sql.placeholder('id')), eq(posts.workspaceId, sql.placeholder('workspaceId')))).prepare('get_post')
}
const preparedLookups = new WeakMap<Db, ReturnType<typeof preparePostLookup>>()

/** The hot read path (GET /posts/:id) runs a prepared statement; transactions and public reads use the plain query. */
function lookupPost(db: Db | Tx, workspaceId: string, postId: string, publicView: boolean) {
  if (publicView || isTransaction(db)) {
    return selectPosts(db).where(and(eq(posts.id, postId), eq(posts.workspaceId, workspaceId), ...(publicView ? [eq(boards.isPrivate, false)] : [])))
  }
  let prepared = preparedLookups.get(db)
  if (!prepared) preparedLookups.set(db, (prepared = preparePostLookup(db)))
  return prepared.execute({ id: postId, workspaceId })
}

/** A post of the workspace, merged ones included (they show `merged_into`); 404 otherwise. */
export async function getPost(db: Db | Tx, workspaceId: string, postId: string, options: { publicView?: boolean } = {}) {
  const rows = await lookupPost(db, workspaceId, postId, options.publicView ?? false)
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
  const total = await totalOf(rows, page, async () => (await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(posts).where(and(...conditions)))[0]!.n)
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
