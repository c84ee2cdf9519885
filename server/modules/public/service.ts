import { and, asc, desc, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { boardPostCounts, boards, posts, statusChanges, statuses, workspaces } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { boardPostCount } from '../boards/service.ts'
import { listComments } from '../comments/service.ts'
import type { Page } from '../../lib/paging.ts'
import { findPosts, getPost, listPosts, searchPosts, type PostFilters } from '../posts/queries.ts'
import { toWorkspaceResponse } from '../workspaces/model.ts'
import { verifiedFilter } from '../posts/model.ts'
import { votedBy } from '../votes/service.ts'
import { ROADMAP_KINDS } from './model.ts'

// Every read here is a fixed number of queries, and only public boards are ever visible: a private
// board, or a post on one, is indistinguishable from one that does not exist.
// The subscription is deliberately not checked: a lapsed workspace loses its API keys (docs/api.md#subscription-gate), but its
// customers' portal and widget keep reading, so end users are not punished for a billing problem.

// Held posts (docs/moderation.md) are left out of every public read like merged ones.
const listed = and(isNull(posts.mergedIntoId), isNull(posts.moderation))!
const publicBoard = eq(boards.isPrivate, false)

export async function findWorkspace(db: Db, slug: string) {
  const [workspace] = await db.select().from(workspaces).where(eq(workspaces.slug, slug))
  if (!workspace) throw notFound('Workspace')
  return workspace
}

/** The portal's front page: branding, public boards with their post counts, and the workflow. */
export const publicWorkspace = async (db: Db, slug: string, baseUrl: string) => (await publicWorkspaceOf(db, slug, baseUrl)).portal

/** The public workspace with the id its cached copies are dropped by (server/lib/public-cache.ts). */
export async function publicWorkspaceOf(db: Db, slug: string, baseUrl: string) {
  const workspace = await findWorkspace(db, slug)
  const [boardRows, statusRows] = await Promise.all([
    db.select({ id: boards.id, slug: boards.slug, name: boards.name, description: boards.description, post_count: boardPostCount, age_rank: sql<number>`row_number() over (order by ${boards.createdAt}, ${boards.id})`.mapWith(Number) })
      .from(boards)
      .where(and(eq(boards.workspaceId, workspace.id), publicBoard))
      .orderBy(asc(boards.name), asc(boards.slug)),
    db.select({ id: statuses.id, name: statuses.name, kind: statuses.kind, color: statuses.color, position: statuses.position })
      .from(statuses).where(eq(statuses.workspaceId, workspace.id)).orderBy(asc(statuses.position), asc(statuses.name)),
  ])
  const { logo_url, favicon_url } = toWorkspaceResponse(workspace, null, baseUrl)
  const settings = workspace.settings
  const brandColor = typeof settings.brand_color === 'string' ? settings.brand_color : null
  // The configured default when it is still a public board, else the oldest public board.
  const defaultBoard = boardRows.find((board) => board.slug === settings.default_board)?.slug ?? boardRows.find((board) => board.age_rank === 1)?.slug ?? null
  const portal = {
    workspace: {
      slug: workspace.slug,
      name: workspace.name,
      logo_url,
      favicon_url,
      // An allow-list: settings may gain private fields, and only these are meant for visitors.
      settings: {
        allow_anonymous: settings.allow_anonymous !== false,
        brand_color: brandColor,
        accent_color: brandColor,
        default_board: defaultBoard,
        // The widget solves a proof of work before an anonymous post (docs/moderation.md#proof-of-work).
        proof_of_work: settings.proof_of_work === true,
      },
    },
    boards: boardRows.map(({ age_rank: _, ...board }) => board),
    statuses: statusRows,
  }
  return { workspaceId: workspace.id, portal }
}

export interface PublicListQuery {
  status?: string
  label?: string
  q?: string
  sort?: PostFilters['sort']
  verified?: 'true' | 'false'
}

/**
 * `voted` for the end user of a session on every post: one query for the whole page. Without a viewer
 * the posts are returned as they are (no `voted`), so the anonymous answer stays shareable.
 */
export async function withVoted<T extends { id: string }>(db: Db, viewer: string | null, items: T[]) {
  if (!viewer) return items
  const voted = await votedBy(db, viewer, items.map((post) => post.id))
  return items.map((post) => ({ ...post, voted: voted.has(post.id) }))
}

/** A public board's posts, with the same filters, sorts and envelope as the private list. */
export async function publicBoardPosts(db: Db, workspaceSlug: string, boardSlug: string, query: PublicListQuery, page: Page, viewer: string | null = null) {
  const list = await listPosts(db, { workspace: { slug: workspaceSlug }, board: boardSlug, publicOnly: true }, { ...query, verified: verifiedFilter(query.verified) }, page, true)
  return { ...list, items: await withVoted(db, viewer, list.items) }
}

/** Posts of every public board, for duplicate suggestions while a visitor types a title. */
export async function searchPublicPosts(db: Db, workspaceSlug: string, query: { q?: string; verified?: 'true' | 'false' }, page: Page, viewer: string | null = null) {
  const workspace = await findWorkspace(db, workspaceSlug)
  const list = await searchPosts(db, workspace.id, { q: query.q, verified: verifiedFilter(query.verified) }, page)
  return { ...list, items: await withVoted(db, viewer, list.items) }
}

export const PUBLIC_COMMENTS_INLINE = 100

/**
 * A post of a public board with its first public comments inline (one request for a post page).
 * A merged post still answers, with `merged_into` for the portal to follow, unless its target is not public.
 */
export async function publicPost(db: Db, workspaceSlug: string, postId: string, viewer: string | null = null) {
  const workspace = await findWorkspace(db, workspaceSlug)
  const post = await getPost(db, workspace.id, postId, { publicView: true })
  if (post.merged_into) await getPost(db, workspace.id, post.merged_into, { publicView: true })
  const [comments, history] = await Promise.all([
    listComments(db, workspace.id, post.id, { page: 1, perPage: PUBLIC_COMMENTS_INLINE, offset: 0 }, { internal: false, publicView: true }),
    // Only where the post went and when: who moved it is the team's business.
    db.select({ status: statuses.name, status_kind: statuses.kind, changed_at: statusChanges.createdAt })
      .from(statusChanges).innerJoin(statuses, eq(statuses.id, statusChanges.toStatusId))
      .where(eq(statusChanges.postId, post.id)).orderBy(asc(statusChanges.createdAt), asc(statusChanges.id)),
  ])
  const [withFlag] = await withVoted(db, viewer, [post])
  return { ...withFlag!, comments: comments.items, status_history: history.map((row) => ({ ...row, changed_at: row.changed_at.toISOString() })) }
}

/** The most-voted public posts across the public boards (the portal's front page). */
export async function publicTopPosts(db: Db, workspaceSlug: string, limit: number) {
  const workspace = await findWorkspace(db, workspaceSlug)
  return findPosts(db, and(eq(posts.workspaceId, workspace.id), listed, publicBoard), [desc(posts.voteCount), desc(posts.createdAt)], limit, true)
}

export const SITEMAP_POSTS = 10_000

/** Every public page address's parts for a sitemap: public boards, and the newest public posts with their last change. */
export async function publicSitemap(db: Db, workspaceSlug: string) {
  const workspace = await findWorkspace(db, workspaceSlug)
  const [boardRows, postRows] = await Promise.all([
    db.select({ slug: boards.slug, updatedAt: boards.updatedAt }).from(boards).where(and(eq(boards.workspaceId, workspace.id), publicBoard)).orderBy(asc(boards.slug)),
    db.select({ id: posts.id, updatedAt: posts.updatedAt }).from(posts).innerJoin(boards, eq(boards.id, posts.boardId))
      .where(and(eq(posts.workspaceId, workspace.id), listed, publicBoard)).orderBy(desc(posts.updatedAt), desc(posts.id)).limit(SITEMAP_POSTS),
  ])
  return { boards: boardRows, posts: postRows }
}

const ROADMAP_LIMIT = 50

/** Public posts in planned, in-progress and complete statuses: the top 50 of each kind by votes, in four queries. */
export async function publicRoadmap(db: Db, workspaceSlug: string) {
  const workspace = await findWorkspace(db, workspaceSlug)
  const visible = and(eq(posts.workspaceId, workspace.id), listed, publicBoard, inArray(statuses.kind, [...ROADMAP_KINDS]))
  // Rank inside each kind first, so a busy "complete" column cannot crowd out the others.
  const ranked = sql`${posts.id} in (
    select id from (
      select p.id, row_number() over (partition by s.kind order by p.vote_count desc, p.created_at desc, p.id desc) as rank
      from ${posts} p join ${statuses} s on s.id = p.status_id join ${boards} b on b.id = p.board_id
      where p.workspace_id = ${workspace.id} and p.merged_into_id is null and p.moderation is null and not b.is_private
    ) ranked where rank <= ${ROADMAP_LIMIT})`
  const [items, statusRows] = await Promise.all([
    findPosts(db, and(visible, ranked), [desc(posts.voteCount), desc(posts.createdAt)], ROADMAP_LIMIT * ROADMAP_KINDS.length, true),
    db.select({ name: statuses.name, kind: statuses.kind, posts: sql<number>`coalesce(sum(${boardPostCounts.posts}) filter (where ${boards.id} is not null), 0)::int`.mapWith(Number) })
      .from(statuses)
      .leftJoin(boardPostCounts, eq(boardPostCounts.statusId, statuses.id))
      .leftJoin(boards, and(eq(boards.id, boardPostCounts.boardId), publicBoard))
      .where(and(eq(statuses.workspaceId, workspace.id), inArray(statuses.kind, [...ROADMAP_KINDS])))
      .groupBy(statuses.id)
      .orderBy(asc(statuses.position), asc(statuses.name)),
  ])
  return {
    groups: ROADMAP_KINDS.map((kind) => {
      const ofKind = statusRows.filter((row) => row.kind === kind)
      return {
        status_kind: kind,
        statuses: ofKind.map((row) => row.name),
        total: ofKind.reduce((sum, row) => sum + row.posts, 0),
        items: items.filter((post) => post.status_kind === kind),
      }
    }),
  }
}
