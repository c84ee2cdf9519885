import { t, type TSchema } from 'elysia'
import { invalid } from '../../errors.ts'

export const PagingQuery = {
  page: t.Optional(t.Integer({ minimum: 1, description: 'Page number, from 1 (default 1)' })),
  per_page: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1–100 (default 20)' })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: 'Alias of per_page' })),
}

/** The list envelope of posts, comments and votes (CONTRACT §6). */
export const pageEnvelope = <T extends TSchema>(item: T, description: string) =>
  t.Object({ items: t.Array(item), page: t.Integer(), per_page: t.Integer(), total: t.Integer(), total_pages: t.Integer() }, { description })

export interface Page { page: number; perPage: number; offset: number }

/** `per_page` and its alias `limit`; sending both with different values is a 422, never a silent pick. */
export function readPage(query: { page?: number; per_page?: number; limit?: number }, fallback = 20): Page {
  if (query.per_page !== undefined && query.limit !== undefined && query.per_page !== query.limit) {
    throw invalid(['query', 'limit'], 'limit is an alias of per_page; send one of them (or the same value)')
  }
  const page = query.page ?? 1
  const perPage = query.per_page ?? query.limit ?? fallback
  return { page, perPage, offset: (page - 1) * perPage }
}

export const envelope = <T>(items: T[], page: Page, total: number) => ({
  items,
  page: page.page,
  per_page: page.perPage,
  total,
  total_pages: Math.ceil(total / page.perPage),
})

/**
 * The total rides along with the page as `count(*) over()`; only a page past the end (no rows) needs
 * its own count query.
 */
export async function totalOf(rows: { total: number }[], page: Page, count: () => Promise<number>) {
  if (rows[0]) return rows[0].total
  return page.offset === 0 ? 0 : count()
}
