import type { AppContext } from '../../context.ts'
import { MAX_PAGE } from '../../lib/paging.ts'
import { notFound } from '../../errors.ts'
import { publicChangelog } from '../changelog/public.ts'
import type { PostFilters } from '../posts/queries.ts'
import { cachedWorkspace, publicRead } from '../public/cache.ts'
import { publicBoardPosts, publicPost, publicRoadmap, publicTopPosts } from '../public/service.ts'
import { votedBy } from '../votes/service.ts'
import type { PageContext, PortalWorkspace } from './layout.ts'
import { portalBoardPath, portalPath, portalPostPath } from './links.ts'
import type { Visitor } from './session.ts'
import { boardPage, changelogPage, homePage, postPage, roadmapPage, type FormState, type ListState } from './views.ts'

// Every page reads through the public services of the JSON routes (same visibility rules, same queries);
// this file only picks what a page shows and asks which of it the visitor has voted for.

export const PER_PAGE = 20
const TOP_POSTS = 10
const SORTS = new Set<string>(['top', 'new', 'trending'])

/** The workspace's branding, public boards and statuses, from the public cache; with its id. */
export const loadPortal = (ctx: AppContext, slug: string) => cachedWorkspace(ctx, slug)

async function listState(ctx: AppContext, visitor: Visitor | null, ids: string[], returnTo: string): Promise<ListState> {
  return { voted: visitor ? await votedBy(ctx.db, visitor.endUserId, ids) : new Set(), returnTo }
}

export async function home(ctx: AppContext, page: PageContext) {
  const slug = page.portal.workspace.slug
  const top = await publicRead(ctx, (db) => publicTopPosts(db, slug, TOP_POSTS))
  return homePage(page, top, await listState(ctx, page.visitor, top.map((post) => post.id), portalPath(slug)))
}

export interface BoardQuery { q?: string; status?: string; sort?: string; page?: string }

/** The board's filters as typed in the URL; a value the page cannot use is dropped and named, so the page can say so. */
export function readBoardQuery(portal: PortalWorkspace, query: BoardQuery) {
  const problems: string[] = []
  const q = (query.q ?? '').trim().slice(0, 200)
  const status = portal.statuses.find((candidate) => candidate.name.toLowerCase() === (query.status ?? '').trim().toLowerCase())?.name ?? ''
  if (query.status && !status) problems.push(`There is no status “${query.status}”`)
  const sort = SORTS.has(query.sort ?? '') ? query.sort! : ''
  if (query.sort && !sort) problems.push('Sort by most votes, newest or trending')
  const number = Number(query.page ?? '1')
  const page = Number.isInteger(number) && number >= 1 && number <= MAX_PAGE ? number : 1
  if (query.page && page !== number) problems.push('That page number does not exist')
  return { q, status, sort, page, problems }
}

export async function board(ctx: AppContext, page: PageContext, boardSlug: string, query: BoardQuery, state?: FormState) {
  const { portal } = page
  const found = portal.boards.find((candidate) => candidate.slug === boardSlug)
  // Private boards are not in the public list: they are as missing as a board that never existed.
  if (!found) throw notFound('Board')
  const filters = readBoardQuery(portal, query)
  if (filters.problems.length && !page.error) page.error = `${filters.problems.join('. ')}.`
  const list = await publicRead(ctx, (db) => publicBoardPosts(db, portal.workspace.slug, boardSlug, {
    q: filters.q || undefined,
    status: filters.status || undefined,
    sort: (filters.sort || 'top') as PostFilters['sort'],
  }, { page: filters.page, perPage: PER_PAGE, offset: (filters.page - 1) * PER_PAGE }))
  const base = portalBoardPath(portal.workspace.slug, boardSlug)
  const search = new URLSearchParams(Object.entries({ q: filters.q, status: filters.status, sort: filters.sort, page: filters.page > 1 ? String(filters.page) : '' }).filter(([, value]) => value))
  const returnTo = search.size ? `${base}?${search}` : base
  return boardPage(page, { board: found, list, query: filters, state }, await listState(ctx, page.visitor, list.items.map((post) => post.id), returnTo))
}

/** A post page, or where a merged post now lives. */
export async function post(ctx: AppContext, page: PageContext, postId: string, state?: FormState) {
  const found = await publicRead(ctx, (db) => publicPost(db, page.portal.workspace.slug, postId))
  if (found.merged_into) return { redirect: portalPostPath(page.portal.workspace.slug, found.merged_into) }
  const here = portalPostPath(page.portal.workspace.slug, found.id)
  return postPage(page, found, await listState(ctx, page.visitor, [found.id], here), state)
}

export async function roadmap(ctx: AppContext, page: PageContext) {
  return roadmapPage(page, await publicRead(ctx, (db) => publicRoadmap(db, page.portal.workspace.slug)))
}

const ENTRIES_PER_PAGE = 10

/** Published entries, newest first, through the changelog's public read; the page links its Atom feed. */
export async function changelog(ctx: AppContext, page: PageContext, query: { page?: string }) {
  const number = Number(query.page ?? '1')
  const current = Number.isInteger(number) && number >= 1 && number <= MAX_PAGE ? number : 1
  if (query.page && current !== number) page.error = 'That page number does not exist.'
  const slug = page.portal.workspace.slug
  const body = await publicRead(ctx, (db) => publicChangelog(db, slug, { page: current, perPage: ENTRIES_PER_PAGE, offset: (current - 1) * ENTRIES_PER_PAGE }))
  page.alternate = { href: `${ctx.config.baseUrl}/api/v1/public/${slug}/changelog/feed.atom`, title: `${page.portal.workspace.name} changelog` }
  return changelogPage(page, body)
}
