import { describe, expect, test } from 'bun:test'
import { toHex } from '../../server/lib/secrets.ts'
import { ID_PREFIXES, isId, newId } from '../../server/lib/ids.ts'

describe('ids', () => {
  test('prefixed, lowercase base36, at most 32 characters, recognised by isId', () => {
    for (const kind of Object.keys(ID_PREFIXES) as (keyof typeof ID_PREFIXES)[]) {
      const id = newId(kind)
      expect(id).toMatch(new RegExp(`^${ID_PREFIXES[kind]}_[0-9a-z]{25}$`))
      expect(id.length).toBeLessThanOrEqual(32)
      expect(isId(kind, id)).toBe(true)
    }
  })

  test('time-sortable and unique', async () => {
    const first = newId('post')
    await Bun.sleep(2)
    const ids = Array.from({ length: 2000 }, () => newId('post'))
    expect(new Set(ids).size).toBe(2000)
    expect(ids.every((id) => id > first)).toBe(true)
  })

  test('the random part uses the whole alphabet', () => {
    const chars = new Set(Array.from({ length: 500 }, () => newId('vote').slice(-16)).join(''))
    expect(chars.size).toBe(36)
  })

  test('toHex', () => {
    expect(toHex(new Uint8Array([0, 1, 15, 16, 255]))).toBe('00010f10ff')
  })
})
