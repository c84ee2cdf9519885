// The one paging helper. The API speaks three dialects, all read into one `Page` (so services page
// the same way) and written back in the dialect's own shape:
// - `page` + `per_page` (alias `limit`) → `{items, page, per_page, total, total_pages}`: posts, comments, votes
// - `page` + `page_size` → `{items, page, page_size, total, total_pages}`: notification events
// - `limit` + `offset` → a bare array: webhook delivery logs
// Their route schemas (query parameters, envelopes) are in paging-schema.ts.
import { invalid } from '../errors.ts'

export interface Page { page: number; perPage: number; offset: number }

/** Bounds the row offset a page number asks for (a huge page would overflow the database's 64-bit offset). */
export const MAX_PAGE = 100_000
export const MAX_OFFSET = 10_000_000

/** `per_page` and its alias `limit`; sending both with different values is a 422, never a silent pick. */
export function readPage(query: { page?: number; per_page?: number; limit?: number }, fallback = 20): Page {
  if (query.per_page !== undefined && query.limit !== undefined && query.per_page !== query.limit) {
    throw invalid(['query', 'limit'], 'limit is an alias of per_page; send one of them (or the same value)')
  }
  const page = query.page ?? 1
  const perPage = query.per_page ?? query.limit ?? fallback
  return { page, perPage, offset: (page - 1) * perPage }
}

export function readPageSize(query: { page?: number; page_size?: number }, fallback = 50): Page {
  const page = query.page ?? 1
  const perPage = query.page_size ?? fallback
  return { page, perPage, offset: (page - 1) * perPage }
}

export function readOffset(query: { limit?: number; offset?: number }, fallback = 50): Page {
  const perPage = query.limit ?? fallback
  const offset = query.offset ?? 0
  return { page: Math.floor(offset / perPage) + 1, perPage, offset }
}

const counts = (page: Page, total: number) => ({ total, total_pages: Math.ceil(total / page.perPage) })

/** The `per_page` body. */
export const envelope = <T>(items: T[], page: Page, total: number) => ({ items, page: page.page, per_page: page.perPage, ...counts(page, total) })

/** The `page_size` body. */
export const pageSizeBody = <T>(items: T[], page: Page, total: number) => ({ items, page: page.page, page_size: page.perPage, ...counts(page, total) })

/**
 * The total rides along with the page as `count(*) over()`; only a page past the end (no rows) needs
 * its own count query.
 */
export async function totalOf(rows: { total: number }[], page: Page, count: () => Promise<number>) {
  if (rows[0]) return rows[0].total
  return page.offset === 0 ? 0 : count()
}
