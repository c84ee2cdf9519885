import { and, asc, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { boards, posts, statuses, workspaces } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { listComments } from '../comments/service.ts'
import { resolveLabels, resolveStatus } from '../feedback/lookups.ts'
import type { Page } from '../feedback/paging.ts'
import { findPosts, getPost, listPosts, type PostFilters } from '../posts/queries.ts'
import { toWorkspaceResponse } from '../workspaces/model.ts'
import { ROADMAP_KINDS } from './model.ts'

// Every read here is a fixed number of queries, and only public boards are ever visible: a private
// board, or a post on one, is indistinguishable from one that does not exist.
// The subscription is deliberately not checked: a lapsed workspace loses its API keys (SPEC 3), but its
// customers' portal and widget keep reading, so end users are not punished for a billing problem.

const notMerged = isNull(posts.mergedIntoId)
const publicBoard = eq(boards.isPrivate, false)

async function findWorkspace(db: Db, slug: string) {
  const [workspace] = await db.select().from(workspaces).where(eq(workspaces.slug, slug))
  if (!workspace) throw notFound('Workspace')
  return workspace
}

/** The portal's front page: branding, public boards with their post counts, and the workflow. */
export async function publicWorkspace(db: Db, slug: string, baseUrl: string) {
  const workspace = await findWorkspace(db, slug)
  const [boardRows, statusRows] = await Promise.all([
    db.select({ id: boards.id, slug: boards.slug, name: boards.name, description: boards.description, post_count: count(posts.id) })
      .from(boards)
      .leftJoin(posts, and(eq(posts.boardId, boards.id), notMerged))
      .where(and(eq(boards.workspaceId, workspace.id), publicBoard))
      .groupBy(boards.id)
      .orderBy(asc(boards.name), asc(boards.slug)),
    db.select({ id: statuses.id, name: statuses.name, kind: statuses.kind, color: statuses.color, position: statuses.position })
      .from(statuses).where(eq(statuses.workspaceId, workspace.id)).orderBy(asc(statuses.position), asc(statuses.name)),
  ])
  const { logo_url, favicon_url } = toWorkspaceResponse(workspace, null, baseUrl)
  const settings = workspace.settings
  return {
    workspace: {
      slug: workspace.slug,
      name: workspace.name,
      logo_url,
      favicon_url,
      // An allow-list: settings may gain private fields, and only these are meant for visitors.
      settings: {
        allow_anonymous: settings.allow_anonymous !== false,
        brand_color: typeof settings.brand_color === 'string' ? settings.brand_color : null,
      },
    },
    boards: boardRows,
    statuses: statusRows,
  }
}

export interface PublicListQuery {
  status?: string
  label?: string
  q?: string
  sort?: PostFilters['sort']
}

/** A public board's posts, with the same filters, sorts and envelope as the private list. */
export async function publicBoardPosts(db: Db, workspaceSlug: string, boardSlug: string, query: PublicListQuery, page: Page) {
  const [row] = await db.select({ workspaceId: workspaces.id, boardId: boards.id })
    .from(workspaces)
    .leftJoin(boards, and(eq(boards.workspaceId, workspaces.id), eq(boards.slug, boardSlug), publicBoard))
    .where(eq(workspaces.slug, workspaceSlug))
  if (!row) throw notFound('Workspace')
  if (!row.boardId) throw notFound('Board')
  const status = query.status !== undefined ? await resolveStatus(db, row.workspaceId, query.status, ['query', 'status']) : undefined
  const [label] = query.label !== undefined ? await resolveLabels(db, row.workspaceId, [query.label], ['query', 'label']) : []
  return listPosts(db, row.boardId, { status, labelId: label?.id, q: query.q, sort: query.sort }, page, true)
}

export const PUBLIC_COMMENTS_INLINE = 100

/**
 * A post of a public board with its first public comments inline (one request for a post page).
 * A merged post still answers, with `merged_into` for the portal to follow, unless its target is not public.
 */
export async function publicPost(db: Db, workspaceSlug: string, postId: string) {
  const workspace = await findWorkspace(db, workspaceSlug)
  const post = await getPost(db, workspace.id, postId, { publicView: true })
  if (post.merged_into) await getPost(db, workspace.id, post.merged_into, { publicView: true })
  const comments = await listComments(db, workspace.id, post.id, { page: 1, perPage: PUBLIC_COMMENTS_INLINE, offset: 0 }, { internal: false, publicView: true })
  return { ...post, comments: comments.items }
}

const ROADMAP_LIMIT = 50

/** Public posts in planned, in-progress and complete statuses: the top 50 of each kind by votes, in four queries. */
export async function publicRoadmap(db: Db, workspaceSlug: string) {
  const workspace = await findWorkspace(db, workspaceSlug)
  const visible = and(eq(posts.workspaceId, workspace.id), notMerged, publicBoard, inArray(statuses.kind, [...ROADMAP_KINDS]))
  // Rank inside each kind first, so a busy "complete" column cannot crowd out the others.
  const ranked = sql`${posts.id} in (
    select id from (
      select p.id, row_number() over (partition by s.kind order by p.vote_count desc, p.created_at desc, p.id desc) as rank
      from ${posts} p join ${statuses} s on s.id = p.status_id join ${boards} b on b.id = p.board_id
      where p.workspace_id = ${workspace.id} and p.merged_into_id is null and not b.is_private
    ) ranked where rank <= ${ROADMAP_LIMIT})`
  const [items, statusRows] = await Promise.all([
    findPosts(db, and(visible, ranked), [desc(posts.voteCount), desc(posts.createdAt)], ROADMAP_LIMIT * ROADMAP_KINDS.length, true),
    db.select({ name: statuses.name, kind: statuses.kind, posts: sql<number>`count(${posts.id}) filter (where ${boards.id} is not null)`.mapWith(Number) })
      .from(statuses)
      .leftJoin(posts, and(eq(posts.statusId, statuses.id), notMerged))
      .leftJoin(boards, and(eq(boards.id, posts.boardId), publicBoard))
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
