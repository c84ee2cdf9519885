// The paging dialects of server/lib/paging.ts as route schemas: the query parameters and the list envelopes.
// Apart from the helper so that services which only page (the delivery loop among them, which reads posts)
// do not load Elysia's schema builder.
import { t, type TSchema } from 'elysia'
import { MAX_OFFSET, MAX_PAGE } from './paging.ts'
import { Integer } from './schema.ts'

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

// The envelopes use the plain JSON Integer: Elysia's t.Integer is a transform (it accepts "2"), which
// makes Elysia run TypeBox's interpreted Value.Encode over every item of every page it sends.

/** The `per_page` list envelope (docs/api.md#lists-and-paging), named `$id` in the document. */
export const pageEnvelope = <T extends TSchema>(item: T, $id: string, examples: unknown[] = []) =>
  t.Object({ items: t.Array(item), page: Integer(), per_page: Integer(), total: Integer(), total_pages: Integer() }, { $id, ...(examples.length > 0 && { examples }) })

/** The `page_size` list envelope, named `$id` in the document. */
export const pageSizeEnvelope = <T extends TSchema>(item: T, $id: string, examples: unknown[] = []) =>
  t.Object({ items: t.Array(item), page: Integer(), page_size: Integer(), total: Integer(), total_pages: Integer() }, { $id, ...(examples.length > 0 && { examples }) })
