import { describe, expect, test } from 'bun:test'
import { envelope, pageSizeBody, readOffset, readPage, readPageSize } from '../../server/lib/paging.ts'

describe('happy', () => {
  test('the three dialects read into one Page', () => {
    expect(readPage({ page: 3, per_page: 10 })).toEqual({ page: 3, perPage: 10, offset: 20 })
    expect(readPage({ limit: 5 })).toEqual({ page: 1, perPage: 5, offset: 0 })
    expect(readPage({})).toEqual({ page: 1, perPage: 20, offset: 0 })
    expect(readPageSize({ page: 2, page_size: 3 })).toEqual({ page: 2, perPage: 3, offset: 3 })
    expect(readPageSize({})).toEqual({ page: 1, perPage: 50, offset: 0 })
    expect(readOffset({ limit: 2, offset: 4 })).toEqual({ page: 3, perPage: 2, offset: 4 })
    expect(readOffset({})).toEqual({ page: 1, perPage: 50, offset: 0 })
  })

  test('each envelope speaks its dialect', () => {
    expect(envelope(['a'], readPage({ page: 2, per_page: 1 }), 3)).toEqual({ items: ['a'], page: 2, per_page: 1, total: 3, total_pages: 3 })
    expect(pageSizeBody(['a'], readPageSize({ page_size: 2 }), 3)).toEqual({ items: ['a'], page: 1, page_size: 2, total: 3, total_pages: 2 })
    expect(envelope([], readPage({}), 0).total_pages).toBe(0)
  })
})

describe('errors', () => {
  test('per_page and limit that disagree are a 422 naming limit', () => {
    expect(() => readPage({ per_page: 10, limit: 20 })).toThrow(/alias of per_page/)
    expect(readPage({ per_page: 10, limit: 10 }).perPage).toBe(10)
  })
})
