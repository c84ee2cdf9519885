import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { apiKeys } from '../../server/db/schema/index.ts'
import { sha256Hex } from '../../server/lib/secrets.ts'
import { workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
const logLines: string[] = []
beforeAll(async () => {
  const capture = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void logLines.push(JSON.stringify({ level, msg, ...fields }))
  h = await startHarness({ LOG_LEVEL: 'info' }, { log: { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') } })
}, 60_000)
afterAll(() => h.close())

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

describe('API keys: happy paths', () => {
  test('create returns the full key once; only its SHA-256 is stored', async () => {
    const ws = await workspaceFixture(h)
    const res = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/api-keys`, { name: 'CI', scopes: ['posts:read', 'workspace:read'] })
    expect(res.status).toBe(201)
    expect(res.body.key).toMatch(/^chorus_sk_[0-9A-Za-z]{32}$/)
    expect(res.body).toMatchObject({ name: 'CI', scopes: ['posts:read', 'workspace:read'], last_used_at: null, start: res.body.key.slice(0, 14) })
    expect(res.body.id).toMatch(/^key_/)
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.id, res.body.id))
    expect(row!.keyHash).toBe(await sha256Hex(res.body.key))
    expect(JSON.stringify(row)).not.toContain(res.body.key)

    const list = await ws.owner.get(`/api/v1/workspaces/${ws.slug}/api-keys`)
    expect(list.status).toBe(200)
    expect(list.body).toHaveLength(1)
    expect(list.body[0]).not.toHaveProperty('key')
    expect(JSON.stringify(list.body)).not.toContain(res.body.key)
  })

  test('both headers carry the key; last_used_at is recorded', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['workspace:read'])
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(key) })).status).toBe(200)
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: { 'x-api-key': key } })).status).toBe(200)
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.keyHash, await sha256Hex(key)))
    expect(row!.lastUsedAt).not.toBeNull()
    expect(Date.now() - row!.lastUsedAt!.getTime()).toBeLessThan(60_000)
  })

  test('scopes can be replaced; the change applies to the next request', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['posts:read'])
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(key) })).status).toBe(403)
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.keyHash, await sha256Hex(key)))
    const updated = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/api-keys/${row!.id}`, { scopes: ['workspace:read'] })
    expect(updated.status).toBe(200)
    expect(updated.body.scopes).toEqual(['workspace:read'])
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(key) })).status).toBe(200)
  })

  test('revocation is immediate: 204, then the very next request is 401', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['workspace:read'])
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(key) })).status).toBe(200)
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.keyHash, await sha256Hex(key)))
    const revoked = await ws.owner.delete(`/api/v1/workspaces/${ws.slug}/api-keys/${row!.id}`)
    expect(revoked.status).toBe(204)
    const after = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(key) })
    expect(after.status).toBe(401)
    expect(after.body.code).toBe('INVALID_API_KEY')
    expect((await ws.owner.get(`/api/v1/workspaces/${ws.slug}/api-keys`)).body).toEqual([])
    expect((await ws.owner.delete(`/api/v1/workspaces/${ws.slug}/api-keys/${row!.id}`)).status).toBe(404)
  })
})

describe('API keys: errors', () => {
  test('unknown scopes, empty or duplicate scope lists, missing name: 422 and no key made', async () => {
    const ws = await workspaceFixture(h)
    const path = `/api/v1/workspaces/${ws.slug}/api-keys`
    for (const body of [{ name: 'x', scopes: ['posts:admin'] }, { name: 'x', scopes: [] }, { name: 'x', scopes: ['posts:read', 'posts:read'] }, { scopes: ['posts:read'] }, { name: 'x', scopes: 'posts:read' }]) {
      const res = await ws.owner.post(path, body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
    }
    expect(await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, ws.id))).toHaveLength(0)
  })

  test("another workspace's key id is 404", async () => {
    const a = await workspaceFixture(h)
    const b = await workspaceFixture(h)
    await a.key()
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, a.id))
    expect((await b.owner.patch(`/api/v1/workspaces/${b.slug}/api-keys/${row!.id}`, { scopes: ['posts:read'] })).status).toBe(404)
    expect((await b.owner.delete(`/api/v1/workspaces/${b.slug}/api-keys/${row!.id}`)).status).toBe(404)
    const [still] = await h.db.select().from(apiKeys).where(eq(apiKeys.id, row!.id))
    expect(still!.revokedAt).toBeNull()
  })
})

describe('credentials: security', () => {
  test('unknown and malformed keys are 401 INVALID_API_KEY', async () => {
    const ws = await workspaceFixture(h)
    for (const key of ['chorus_sk_' + 'A'.repeat(32), 'chorus_sk_short', 'sk_live_123', '']) {
      const res = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: { 'x-api-key': key } })
      expect(res.status).toBe(401)
      expect(res.body.code).toBe('INVALID_API_KEY')
    }
  })

  test('a missing scope is 403 INSUFFICIENT_SCOPE naming the scope', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['posts:read'])
    const res = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(key) })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'workspace:read' })
  })

  test('key + cookie is a key request: the owner cookie does not widen the key', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['posts:read'])
    const scoped = await ws.owner.get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(key) })
    expect(scoped.status).toBe(403)
    expect(scoped.body.code).toBe('INSUFFICIENT_SCOPE')
    const dashboardOnly = await ws.owner.get(`/api/v1/workspaces/${ws.slug}/api-keys`, { headers: bearer(key) })
    expect(dashboardOnly.status).toBe(403)
    expect(dashboardOnly.body.code).toBe('DASHBOARD_ONLY')
    const personal = await ws.owner.get('/api/v1/auth/me', { headers: { 'x-api-key': key } })
    expect(personal.status).toBe(403)
  })

  test('every dashboard-only area refuses a key with all scopes', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key()
    const calls: [string, string, unknown?][] = [
      ['GET', `/api/v1/workspaces/${ws.slug}/members`],
      ['POST', `/api/v1/workspaces/${ws.slug}/members`, { email: 'z@example.com', role: 'member' }],
      ['GET', `/api/v1/workspaces/${ws.slug}/api-keys`],
      ['POST', `/api/v1/workspaces/${ws.slug}/api-keys`, { name: 'k', scopes: ['posts:read'] }],
      ['PATCH', `/api/v1/workspaces/${ws.slug}`, { name: 'settings' }],
      ['DELETE', `/api/v1/workspaces/${ws.slug}`],
    ]
    for (const [method, path, body] of calls) {
      const res = await h.client().call(method, path, { headers: bearer(key), body })
      expect(`${method} ${path} ${res.status} ${res.body.code}`).toBe(`${method} ${path} 403 DASHBOARD_ONLY`)
    }
    expect(await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, ws.id))).toHaveLength(1)
  })

  test('keys never appear in logs', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['workspace:read'])
    logLines.length = 0
    await h.client().get(`/api/v1/workspaces/${ws.slug}?api_key=${key}`, { headers: bearer(key) })
    await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: { 'x-api-key': key.slice(0, -1) + 'x' } })
    await Bun.sleep(50) // access-log lines are written after the response is sent
    expect(logLines.length).toBeGreaterThan(0)
    expect(logLines.join('\n')).not.toContain(key.slice(10))
  })
})
