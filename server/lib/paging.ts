// The one paging helper. The API speaks three dialects, all read into one `Page` (so services page
// the same way) and written back in the dialect's own shape:
// - `page` + `per_page` (alias `limit`) → `{items, page, per_page, total, total_pages}`: posts, comments, votes
// - `page` + `page_size` → `{items, page, page_size, total, total_pages}`: notification events
// - `limit` + `offset` → a bare array: webhook delivery logs
import { t, type TSchema } from 'elysia'
import { invalid } from '../errors.ts'
import { Integer } from './schema.ts'

export interface Page { page: number; perPage: number; offset: number }

/** Bounds the row offset a page number asks for (a huge page would overflow the database's 64-bit offset). */
export const MAX_PAGE = 100_000
export const MAX_OFFSET = 10_000_000

const PageNumber = t.Optional(t.Integer({ minimum: 1, maximum: MAX_PAGE, description: `Page number, from 1 (default 1) to ${MAX_PAGE}` }))

export const PagingQuery = {
  page: PageNumber,
  per_page: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1–100 (default 20)' })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: 'Alias of per_page' })),
}

export const PageSizeQuery = {
  page: PageNumber,
  page_size: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1–100 (default 50)' })),
}

export const OffsetQuery = {
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: '1–100 (default 50)' })),
  offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_OFFSET, description: 'Rows to skip (default 0, at most 10,000,000)' })),
}

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

// The envelopes use the plain JSON Integer: Elysia's t.Integer is a transform (it accepts "2"), which
// makes Elysia run TypeBox's interpreted Value.Encode over every item of every page it sends.

/** The `per_page` list envelope (docs/api.md#lists-and-paging), named `$id` in the document. */
export const pageEnvelope = <T extends TSchema>(item: T, $id: string, examples: unknown[] = []) =>
  t.Object({ items: t.Array(item), page: Integer(), per_page: Integer(), total: Integer(), total_pages: Integer() }, { $id, ...(examples.length > 0 && { examples }) })

/** The `page_size` list envelope, named `$id` in the document. */
export const pageSizeEnvelope = <T extends TSchema>(item: T, $id: string, examples: unknown[] = []) =>
  t.Object({ items: t.Array(item), page: Integer(), page_size: Integer(), total: Integer(), total_pages: Integer() }, { $id, ...(examples.length > 0 && { examples }) })

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
