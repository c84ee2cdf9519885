import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../../server/app.ts'
import { getConfig } from '../../server/config.ts'
import { workspaceFixture } from '../helpers/fixtures.ts'
import { BASE, freshRateWindow, startHarness, TEST_SECRET, type Harness } from '../helpers/harness.ts'
import { rowsOf } from '../../server/db/client.ts'
import { sql } from 'drizzle-orm'
import { counterKey } from '../../server/lib/rate-limit.ts'

let h: Harness
beforeAll(async () => (h = await startHarness({ RATE_LIMIT_PER_KEY: '3', RATE_LIMIT_PER_IP: '2', TRUST_PROXY: 'true' })), 60_000)
afterAll(() => h.close())

describe('happy', () => {
  test('with REDIS_URL, two app instances share one budget', async () => {
    const env = { SECRET_KEY: TEST_SECRET, LOG_LEVEL: 'silent', BASE_URL: BASE, RATE_LIMIT_PER_KEY: '3', REDIS_URL: 'redis://127.0.0.1:6379' } as const
    const first = await createApp({ config: getConfig(env), database: h.database })
    const second = await createApp({ config: getConfig(env), database: h.database })
    try {
      const ws = await workspaceFixture(h)
      const key = await ws.key(['workspace:read'])
      const call = (app: typeof first.app) => app.handle(new Request(`${BASE}/api/v1/workspaces/${ws.slug}`, { headers: { authorization: `Bearer ${key}` } }))
      expect((await call(first.app)).status).toBe(200)
      expect((await call(second.app)).status).toBe(200)
      expect((await call(first.app)).status).toBe(200)
      const fourth = await call(second.app)
      expect(fourth.status).toBe(429)
      expect(fourth.headers.get('retry-after')).not.toBeNull()
    } finally {
      first.ctx.limiter.close()
      second.ctx.limiter.close()
    }
  })
})

describe('errors', () => {
  test('per key: RateLimit-* headers count down, then 429 RATE_LIMITED with Retry-After', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['workspace:read'])
    const headers = { authorization: `Bearer ${key}` }
    for (let remaining = 2; remaining >= 0; remaining--) {
      const res = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers })
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-limit')).toBe('3')
      expect(res.headers.get('ratelimit-remaining')).toBe(String(remaining))
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0)
    }
    const limited = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers })
    expect(limited.status).toBe(429)
    expect(limited.body.code).toBe('RATE_LIMITED')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
    // Another key of the same workspace has its own budget.
    const other = await ws.key(['workspace:read'])
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: { authorization: `Bearer ${other}` } })).status).toBe(200)
  })
})

describe('the shared counter is claimed a share at a time', () => {
  let leased: Harness
  beforeAll(async () => (leased = await startHarness({ RATE_LIMIT_PER_KEY: '640' })), 60_000)
  afterAll(() => leased.close())

  test('a key claims 1/64 of its budget in one upsert, spends it hit by hit, and a revocation still refuses the next request', async () => {
    const ws = await workspaceFixture(leased)
    const key = await ws.key(['workspace:read'], 'leased')
    const [{ id }] = rowsOf<{ id: string }>(await leased.db.execute(sql`select id from api_keys where name = 'leased'`)) as [{ id: string }]
    await freshRateWindow(20)
    const headers = { authorization: `Bearer ${key}` }
    const remaining: string[] = []
    for (let i = 0; i < 5; i++) {
      const res = await leased.client().get(`/api/v1/workspaces/${ws.slug}`, { headers })
      expect(res.status).toBe(200)
      remaining.push(res.headers.get('ratelimit-remaining')!)
    }
    expect(remaining).toEqual(['639', '638', '637', '636', '635'])
    if (leased.database.driver === 'postgres') {
      // One claim of 640 / 64 = 10 hits covered the five requests: the row counts what was claimed.
      const rows = rowsOf<{ count: number }>(await leased.db.execute(sql`select count from rate_limit_counters where key = ${counterKey(`key:${id}`, 60)}`))
      expect(rows.map((row) => row.count)).toEqual([10])
    }
    const [listed] = (await ws.owner.get(`/api/v1/workspaces/${ws.slug}/api-keys`)).body.filter((item: any) => item.name === 'leased')
    expect((await ws.owner.delete(`/api/v1/workspaces/${ws.slug}/api-keys/${listed.id}`)).status).toBe(204)
    const refused = await leased.client().get(`/api/v1/workspaces/${ws.slug}`, { headers })
    expect(refused.status).toBe(401)
    expect(refused.body.code).toBe('INVALID_API_KEY')
  }, 60_000)
})

describe('security', () => {
  test('per IP on unauthenticated writes', async () => {
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } })
    expect((await h.client().post('/api/v1/auth/magic-link', { email: 'ip1@example.com' }, from('203.0.113.7'))).status).toBe(200)
    expect((await h.client().post('/api/v1/auth/magic-link', { email: 'ip2@example.com' }, from('203.0.113.7'))).status).toBe(200)
    const limited = await h.client().post('/api/v1/auth/magic-link', { email: 'ip3@example.com' }, from('203.0.113.7'))
    expect(limited.status).toBe(429)
    expect((await h.client().post('/api/v1/auth/magic-link', { email: 'ip4@example.com' }, from('198.51.100.9'))).status).toBe(200)
  })
})
