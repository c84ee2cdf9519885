import { describe, expect, test } from 'bun:test'
import { isoFromText } from '../../server/db/schema/columns.ts'

describe("PostgreSQL's timestamp text to the API's form", () => {
  test('UTC text with 0 to 6 fraction digits reads as a Date would print it', () => {
    for (const fraction of ['', '.1', '.12', '.123', '.1234', '.12345', '.123456', '.999999', '.000001']) {
      for (const time of ['2026-11-27 18:09:56', '1999-12-31 23:59:59', '2024-02-29 00:00:00']) {
        const text = `${time}${fraction}+00`
        expect(isoFromText(text)).toBe(new Date(text).toISOString())
      }
    }
  })

  test('other offsets, five-digit years and Dates go through a Date', () => {
    for (const text of ['2026-11-27 18:09:56.123456+05:30', '2026-11-27 18:09:56.5-03', '12026-11-27 18:09:56+00']) {
      expect(isoFromText(text)).toBe(new Date(text).toISOString())
    }
    expect(isoFromText('2026-11-27 23:30:00+01')).toBe('2026-11-27T22:30:00.000Z')
    const date = new Date('2026-11-27T18:09:56.123Z')
    expect(isoFromText(date)).toBe('2026-11-27T18:09:56.123Z')
  })
})
