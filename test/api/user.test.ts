import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { users } from '../../server/db/schema/index.ts'
import { workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { signIn } from '../helpers/session.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

describe('user profile: happy paths', () => {
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

  test('an empty update changes nothing and answers the profile', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'empty-update@example.com')
    const res = await client.patch('/api/v1/user/profile', {})
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: user.id, name: null, locale: 'en' })
  })
})

describe('user profile: errors', () => {
  test('bad input changes nothing', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'strict@example.com')
    for (const body of [{ name: '' }, { name: 'x'.repeat(101) }, { locale: 'english' }, { name: 7 }, { email: 'new@example.com' }, { locale: null }]) {
      const res = await client.patch('/api/v1/user/profile', body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
      expect(Array.isArray(res.body.detail)).toBe(true)
      expect(res.body.detail[0].loc[0]).toBe('body')
    }
    const [row] = await h.db.select().from(users).where(eq(users.id, user.id))
    expect(row).toMatchObject({ name: null, locale: 'en', email: 'strict@example.com' })
  })

  test('a body that is not JSON is 400 and changes nothing', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'malformed@example.com')
    const res = await client.call('PATCH', '/api/v1/user/profile', { raw: '{"name": ', headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('BAD_REQUEST')
    const [row] = await h.db.select().from(users).where(eq(users.id, user.id))
    expect(row?.name).toBeNull()
  })
})

describe('user profile: security', () => {
  test('no session: 401; an API key header: 403 DASHBOARD_ONLY', async () => {
    expect((await h.client().get('/api/v1/user/profile')).status).toBe(401)
    const keyed = await h.client().get('/api/v1/user/profile', { headers: { authorization: 'Bearer chorus_sk_whatever' } })
    expect(keyed.status).toBe(403)
    expect(keyed.body.code).toBe('DASHBOARD_ONLY')
  })

  test('a real, valid API key cannot read or change anyone\'s profile', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key()
    const keyed = h.client({ authorization: `Bearer ${key}` })
    expect((await keyed.get('/api/v1/user/profile')).body.code).toBe('DASHBOARD_ONLY')
    const write = await keyed.patch('/api/v1/user/profile', { name: 'Mallory' })
    expect(write.status).toBe(403)
    const [owner] = await h.db.select().from(users).where(eq(users.id, ws.ownerId))
    expect(owner?.name).not.toBe('Mallory')
  })

  test('a cookie-authenticated update from a foreign origin is refused', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'csrf-profile@example.com')
    const res = await client.patch('/api/v1/user/profile', { name: 'Forged' }, { headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('CSRF_REJECTED')
    const [row] = await h.db.select().from(users).where(eq(users.id, user.id))
    expect(row?.name).toBeNull()
  })

  test('a forged access token is 401', async () => {
    const client = h.client()
    await signIn(h, client, 'forged-token@example.com')
    const forged = `${client.jar.get('access_token')!.slice(0, -4)}AAAA`
    const res = await h.client().get('/api/v1/user/profile', { headers: { cookie: `access_token=${forged}` } })
    expect(res.status).toBe(401)
  })
})
