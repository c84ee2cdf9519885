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

  test('event ids sort in the order this thread minted them, also within one millisecond', () => {
    const ids = Array.from({ length: 5000 }, () => newId('event'))
    expect(new Set(ids).size).toBe(5000)
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true)
    for (const id of ids) expect(isId('event', id)).toBe(true)
    // Other kinds keep a random suffix: a later id of the same millisecond may sort first.
    const posts = Array.from({ length: 5000 }, () => newId('post'))
    expect(posts.every((id, i) => i === 0 || id > posts[i - 1]!)).toBe(false)
  })

  test('the random part uses the whole alphabet', () => {
    const chars = new Set(Array.from({ length: 500 }, () => newId('vote').slice(-16)).join(''))
    expect(chars.size).toBe(36)
  })

  test('toHex', () => {
    expect(toHex(new Uint8Array([0, 1, 15, 16, 255]))).toBe('00010f10ff')
  })
})
