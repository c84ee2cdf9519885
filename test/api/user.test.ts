import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { users } from '../../server/db/schema/index.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { signIn } from '../helpers/session.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

describe('user profile', () => {
  test('read and update name and locale', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'profile@example.com')
    const read = await client.get('/api/v1/user/profile')
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ id: user.id, email: 'profile@example.com', name: null, locale: 'en' })

    const updated = await client.patch('/api/v1/user/profile', { name: '  Ada Lovelace ', locale: 'pt-BR' })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ name: 'Ada Lovelace', locale: 'pt-BR' })
    const [row] = await h.db.select().from(users).where(eq(users.id, user.id))
    expect(row).toMatchObject({ name: 'Ada Lovelace', locale: 'pt-BR' })
  })

  test('bad input changes nothing', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'strict@example.com')
    for (const body of [{ name: '' }, { name: 'x'.repeat(101) }, { locale: 'english' }, { name: 7 }, { email: 'new@example.com' }]) {
      const res = await client.patch('/api/v1/user/profile', body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
    }
    const [row] = await h.db.select().from(users).where(eq(users.id, user.id))
    expect(row).toMatchObject({ name: null, locale: 'en', email: 'strict@example.com' })
  })

  test('no session: 401; an API key header: 403 DASHBOARD_ONLY', async () => {
    expect((await h.client().get('/api/v1/user/profile')).status).toBe(401)
    const keyed = await h.client().get('/api/v1/user/profile', { headers: { authorization: 'Bearer chorus_sk_whatever' } })
    expect(keyed.status).toBe(403)
    expect(keyed.body.code).toBe('DASHBOARD_ONLY')
  })
})
