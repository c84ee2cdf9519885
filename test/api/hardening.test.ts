// The audit's findings, one test (or a few) each: deep JSON, lost database connections, NUL and
// invalid text, idempotency leases, CSRF without Origin, 415, security headers, the DATA_DIR lock,
// billing off by default, and bidirectional controls in titles.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { and, eq, sql } from 'drizzle-orm'
import { DrizzleQueryError } from 'drizzle-orm/errors'
import { createApp } from '../../server/app.ts'
import { getConfig } from '../../server/config.ts'
import { describeError } from '../../server/db/errors.ts'
import { apiKeys, idempotencyKeys, posts } from '../../server/db/schema/index.ts'
import { lockDataDir } from '../../server/lib/data-dir-lock.ts'
import { requestFingerprint } from '../../server/plugins/idempotency.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, TEST_SECRET, TestClient, type Harness } from '../helpers/harness.ts'

const logged: string[] = []
let h: Harness
let ws: WorkspaceFixture
let api: TestClient
let key: string
let keyId: string

beforeAll(async () => {
  // Every log line is kept, to prove what is (not) logged.
  const capture = (level: 'debug' | 'info' | 'warn' | 'error') => (msg: string, fields: Record<string, unknown> = {}) => void logged.push(JSON.stringify({ level, msg, ...fields }))
  h = await startHarness({ TRUST_PROXY: 'true' }, { log: { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') } })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  key = await ws.key()
  api = h.client({ authorization: `Bearer ${key}` })
  const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, ws.id))
  keyId = row!.id
}, 120_000)
afterAll(() => h.close())

const postsPath = '/api/v1/boards/ideas/posts'
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)
const postCount = async () => (await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).length

describe('happy', () => {
  test('an ordinary JSON write still works, and a +json media type is JSON too', async () => {
    const created = await api.post(postsPath, { title: 'Plain post' })
    expect(created.status).toBe(201)
    const vendor = await api.call('POST', postsPath, { raw: JSON.stringify({ title: 'Vendor type' }), headers: { 'content-type': 'application/vnd.chorus+json; charset=utf-8' } })
    expect(vendor.status).toBe(201)
  })

  test('bidirectional override characters are stripped from titles (create and update)', async () => {
    const created = await api.post(postsPath, { title: 'Refund \u202Eevil\u202C policy\u2066' })
    expect(created.status).toBe(201)
    expect(created.body.title).toBe('Refund evil policy')
    const [row] = await h.db.select().from(posts).where(eq(posts.id, created.body.id))
    expect(row!.title).toBe('Refund evil policy')
    const updated = await api.patch(`/api/v1/posts/${created.body.id}`, { title: '\u202Dnew\u202A title' })
    expect(updated.status).toBe(200)
    expect(updated.body.title).toBe('new title')
    const onlyControls = await api.post(postsPath, { title: '\u202E\u202C' })
    expect(onlyControls.status).toBe(422)
    expect(onlyControls.body.detail[0].loc).toEqual(['body', 'title'])
  })

  test('health reads a real table: ok, then degraded (503) when the read fails', async () => {
    const ok = await h.client().get('/api/v1/health')
    expect(ok.status).toBe(200)
    expect(ok.body).toEqual({ status: 'ok', version: expect.any(String), server_version: expect.any(String), database: 'ok', background: 'off' })
    await h.db.execute(sql`alter table workspaces rename to workspaces_away`)
    try {
      const degraded = await h.client().get('/api/v1/health')
      expect(degraded.status).toBe(503)
      expect(degraded.body).toEqual({ status: 'degraded', version: expect.any(String), server_version: expect.any(String), database: 'unavailable', background: 'off' })
    } finally {
      await h.db.execute(sql`alter table workspaces_away rename to workspaces`)
    }
  })

  test('billing is off unless BILLING_WEBHOOK_SECRET is set (an explicit BILLING still wins)', () => {
    expect(getConfig({}).billing).toBe(false)
    expect(getConfig({ BILLING_WEBHOOK_SECRET: 'whsec_abc' }).billing).toBe(true)
    expect(getConfig({ BILLING_WEBHOOK_SECRET: 'whsec_abc', BILLING: 'off' }).billing).toBe(false)
    expect(getConfig({ BILLING: 'on' }).billing).toBe(true)
  })

  test('a self-hosted app (no billing secret) keeps serving keys after the trial ended', async () => {
    const config = getConfig({ SECRET_KEY: TEST_SECRET, LOG_LEVEL: 'silent', BASE_URL: BASE })
    const { app } = await createApp({ config, database: h.database })
    await h.db.execute(sql`update workspaces set current_period_end = now() - interval '30 days', subscription_status = 'trialing' where id = ${ws.id}`)
    try {
      const selfHosted = new TestClient((request) => app.handle(request), { authorization: `Bearer ${key}` })
      const write = await selfHosted.post(postsPath, { title: 'After the trial' })
      expect(write.status).toBe(201)
      const hosted = await api.post(postsPath, { title: 'Hosted product' })
      expect(hosted.status).toBe(403)
      expect(hosted.body.code).toBe('SUBSCRIPTION_INACTIVE')
    } finally {
      await h.db.execute(sql`update workspaces set current_period_end = now() + interval '14 days' where id = ${ws.id}`)
    }
  })
})

describe('errors', () => {
  test('deep JSON is refused at once, in constant stack, while health keeps answering', async () => {
    for (const levels of [20_000, 50_000]) {
      const started = performance.now()
      const [deep, health] = await Promise.all([
        h.client().call('POST', postsPath, { raw: nested(levels), headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } }),
        h.client().get('/api/v1/health'),
      ])
      const elapsed = performance.now() - started
      expect(deep.status).toBe(422)
      expect(deep.body.code).toBe('VALIDATION_ERROR')
      expect(deep.body.detail[0]).toMatchObject({ loc: ['body'], type: 'value_error.json_limit' })
      expect(health.status).toBe(200)
      expect(elapsed).toBeLessThan(1000)
    }
    // The same without credentials, on a public write route.
    const anonymous = await h.client().call('POST', `/api/v1/public/${ws.slug}/boards/ideas/posts`, { raw: `{"title":${nested(30_000)}}`, headers: { 'content-type': 'application/json' } })
    expect(anonymous.status).toBe(422)
  })

  test('huge arrays and strings are refused by the same scan', async () => {
    const wide = await api.call('POST', postsPath, { raw: `{"title":"x","labels":[${'1,'.repeat(20_000)}1]}`, headers: { 'content-type': 'application/json' } })
    expect(wide.status).toBe(422)
    expect(wide.body.detail[0].type).toBe('value_error.json_limit')
    const long = await api.call('POST', postsPath, { raw: JSON.stringify({ title: 'x', body: 'y'.repeat(300 * 1024) }), headers: { 'content-type': 'application/json' } })
    expect(long.status).toBe(422)
  })

  test('NUL in a query, a body string or a public query is 422, and nothing is logged with SQL', async () => {
    logged.length = 0
    const before = await postCount()
    const searched = await api.get(`${postsPath}?q=%00`)
    expect(searched.status).toBe(422)
    expect(searched.body.detail[0]).toMatchObject({ loc: ['query', 'q'], type: 'value_error.text' })
    expect((await api.get(`${postsPath}?status=a%00b`)).status).toBe(422)
    const titled = await api.post(postsPath, { title: 'bad\u0000title' })
    expect(titled.status).toBe(422)
    expect(titled.body.detail[0].loc).toEqual(['body', 'title'])
    const nestedKey = await api.post(postsPath, { title: 'ok', ['la\u0000bels']: [] })
    expect(nestedKey.status).toBe(422)
    const publicList = await h.client().get(`/api/v1/public/${ws.slug}/boards/ideas/posts?q=%00`)
    expect(publicList.status).toBe(422)
    expect(await postCount()).toBe(before)
    expect(logged.filter((line) => /Failed query|params:/.test(line))).toEqual([])
  })

  test('invalid UTF-8 and lone surrogates are 422, never stored as U+FFFD', async () => {
    const before = await postCount()
    const bytes = new Uint8Array([...new TextEncoder().encode('{"title":"caf'), 0xe9, ...new TextEncoder().encode('"}')])
    const latin1 = await api.call('POST', postsPath, { raw: bytes, headers: { 'content-type': 'application/json' } })
    expect(latin1.status).toBe(422)
    expect(latin1.body.detail[0]).toMatchObject({ loc: ['body'], type: 'value_error.utf8' })
    const surrogate = await api.call('POST', postsPath, { raw: '{"title":"half \\ud83d emoji"}', headers: { 'content-type': 'application/json' } })
    expect(surrogate.status).toBe(422)
    expect(surrogate.body.detail[0].loc).toEqual(['body', 'title'])
    const pair = await api.call('POST', postsPath, { raw: '{"title":"whole \\ud83d\\ude00 emoji"}', headers: { 'content-type': 'application/json' } })
    expect(pair.status).toBe(201)
    expect(pair.body.title).toBe('whole 😀 emoji')
    expect((await api.get(`${postsPath}?q=%FF`)).status).toBe(422)
    expect((await api.get(`${postsPath}?q=%ED%A0%80`)).status).toBe(422)
    expect(await postCount()).toBe(before + 1)
  })

  test('non-JSON bodies on JSON routes are 415 and write nothing', async () => {
    const before = await postCount()
    const form = await api.call('POST', postsPath, { raw: 'title=form', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(form.status).toBe(415)
    expect(form.body.code).toBe('UNSUPPORTED_MEDIA_TYPE')
    const data = new FormData()
    data.append('title', 'multipart')
    expect((await api.call('POST', postsPath, { raw: data })).status).toBe(415)
    expect((await api.call('POST', postsPath, { raw: '{"title":"text"}', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
    expect((await api.call('PATCH', '/api/v1/posts/post_x', { raw: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415)
    expect(await postCount()).toBe(before)
  })

  test('TRACE is 405 with Allow', async () => {
    const traced = await h.client().call('TRACE', '/api/v1/health')
    expect(traced.status).toBe(405)
    expect(traced.body.code).toBe('METHOD_NOT_ALLOWED')
    expect(traced.headers.get('allow')).toContain('GET')
  })

  test('SQL parameters never reach the log', () => {
    const error = new DrizzleQueryError('insert into api_keys (hash) values ($1)', ['secret-hash-value'], new Error('duplicate key'))
    const text = describeError(error)
    expect(text).toContain('insert into api_keys')
    expect(text).toContain('duplicate key')
    expect(text).not.toContain('secret-hash-value')
  })
})

describe('security', () => {
  test('anonymous writes are rate-limited per IP before their body is read', async () => {
    const limited = await startHarness({ TRUST_PROXY: 'true', RATE_LIMIT_PER_IP: '1' })
    try {
      const client = limited.client({ 'x-forwarded-for': '203.0.113.9' })
      const statuses: number[] = []
      // FLOOD_FACTOR (5) times the limit; then 429 whatever the body, even one that would take long to parse.
      for (let i = 0; i < 5; i++) statuses.push((await client.call('POST', '/api/v1/public/nowhere/boards/x/posts', { raw: nested(40_000), headers: { 'content-type': 'application/json' } })).status)
      expect(statuses.slice(0, 5)).toEqual([422, 422, 422, 422, 422])
      const last = await client.call('POST', '/api/v1/public/nowhere/boards/x/posts', { raw: nested(40_000), headers: { 'content-type': 'application/json' } })
      expect(last.status).toBe(429)
      expect(last.headers.get('retry-after')).toBeTruthy()
      // Another address has its own budget.
      expect((await limited.client({ 'x-forwarded-for': '203.0.113.10' }).post('/api/v1/public/nowhere/boards/x/posts', { title: 'x', email: 'a@example.com' })).status).toBe(404)
    } finally {
      await limited.close()
    }
  })

  test('a cookie write without Origin is decided by Sec-Fetch-Site, then Referer, else refused', async () => {
    const path = `/api/v1/workspaces/${ws.slug}/api-keys`
    const body = { name: 'csrf probe', scopes: ['posts:read'] }
    const refused = async (headers: Record<string, string>) => {
      const res = await ws.owner.post(path, body, { headers })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('CSRF_REJECTED')
    }
    await refused({ referer: 'https://evil.example/page' })
    await refused({ origin: 'https://evil.example' })
    await refused({ 'sec-fetch-site': 'cross-site', referer: `${BASE}/dashboard` })
    await refused({ 'sec-fetch-site': 'same-site' })
    await refused({ referer: 'not a url' })
    // No Origin, no Sec-Fetch-Site, no Referer: nothing proves the write is ours.
    await refused({ 'sec-fetch-site': 'none', origin: 'null' })
    await refused({ origin: 'null' })
    expect((await ws.owner.post(path, body, { headers: { 'sec-fetch-site': 'same-origin' } })).status).toBe(201)
    expect((await ws.owner.post(path, body, { headers: { referer: `${BASE}/settings/keys` } })).status).toBe(201)
    expect((await ws.owner.post(path, body, { headers: { origin: BASE } })).status).toBe(201)
    // A key request carries no ambient authority: no origin needed.
    expect((await api.post(postsPath, { title: 'key write' }, { headers: { referer: 'https://evil.example' } })).status).toBe(201)
  })

  test('security headers: nosniff everywhere, no-store with credentials, HSTS on https, CSP on HTML', async () => {
    const health = await h.client().get('/api/v1/health')
    expect(health.headers.get('x-content-type-options')).toBe('nosniff')
    expect(health.headers.get('strict-transport-security')).toBeNull()
    const missing = await h.client().get('/api/v1/nope')
    expect(missing.status).toBe(404)
    expect(missing.headers.get('x-content-type-options')).toBe('nosniff')
    const listed = await api.get(postsPath)
    expect(listed.headers.get('cache-control')).toBe('no-store')
    expect(listed.headers.get('x-content-type-options')).toBe('nosniff')
    const denied = await h.client({ authorization: 'Bearer chorus_sk_wrong' }).get(postsPath)
    expect(denied.status).toBe(401)
    expect(denied.headers.get('cache-control')).toBe('no-store')
    const session = await ws.owner.get('/api/v1/user')
    expect(session.headers.get('cache-control')).toBe('no-store')

    const docs = await h.client().get('/docs')
    const csp = docs.headers.get('content-security-policy') ?? ''
    expect(docs.headers.get('content-type')).toContain('text/html')
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain("script-src 'unsafe-inline'")
    expect(docs.headers.get('x-frame-options')).toBe('DENY')

    const config = getConfig({ SECRET_KEY: TEST_SECRET, LOG_LEVEL: 'silent', BASE_URL: 'https://feedback.example.com' })
    const { app } = await createApp({ config, database: h.database })
    const secure = await app.handle(new Request('https://feedback.example.com/api/v1/health'))
    expect(secure.headers.get('strict-transport-security')).toContain('max-age=')
  })

  test('an idempotency key abandoned by a killed request is taken over once its lease ran out', async () => {
    const body = { title: 'Leased post' }
    const scope = `${ws.id}:${keyId}`
    const requestHash = await requestFingerprint('POST', postsPath, body)
    // What a process killed mid-request leaves behind: a claim without an answer.
    await h.db.insert(idempotencyKeys).values({ scope, key: 'fresh', requestHash })
    await h.db.insert(idempotencyKeys).values({ scope, key: 'abandoned', requestHash, createdAt: new Date(Date.now() - 5 * 60_000) })
    const busy = await api.post(postsPath, body, { headers: { 'idempotency-key': 'fresh' } })
    expect(busy.status).toBe(409)
    const retried = await api.post(postsPath, body, { headers: { 'idempotency-key': 'abandoned' } })
    expect(retried.status).toBe(201)
    const replayed = await api.post(postsPath, body, { headers: { 'idempotency-key': 'abandoned' } })
    expect(replayed.status).toBe(201)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
    expect(replayed.body.id).toBe(retried.body.id)
    const [row] = await h.db.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, 'abandoned')))
    expect(row!.responseStatus).toBe(201)
    expect((await h.db.select().from(posts).where(and(eq(posts.workspaceId, ws.id), eq(posts.title, 'Leased post')))).length).toBe(1)
  })

  test('a second process cannot open the embedded data directory; a stale lock is taken over', async () => {
    const dir = await mkdtemp(`${tmpdir()}/chorus-lock-`)
    try {
      const release = lockDataDir(dir, 'server')
      const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: '', SECRET_KEY: TEST_SECRET, PORT: '0' }
      delete (env as Record<string, string | undefined>).DATABASE_URL
      for (const script of ['scripts/seed.ts', 'server/index.ts']) {
        const child = Bun.spawn([process.execPath, script], { env, stdout: 'pipe', stderr: 'pipe' })
        const code = await child.exited
        const stderr = (await new Response(child.stderr).text()).trim()
        // "Cannot start" is exit status 78 (EX_CONFIG, server/startup.ts) for the server and the seed script alike.
        expect(code).toBe(78)
        expect(stderr.split('\n')).toHaveLength(1)
        expect(stderr).toContain(`pid ${process.pid}`)
        expect(stderr).toContain('chorus server')
      }
      release()
      // A lock left by a process that no longer exists (kill -9) does not block the next start.
      await Bun.write(`${dir}/chorus.lock`, JSON.stringify({ pid: 2 ** 22 + 17, role: 'server', host: (await import('node:os')).hostname(), started_at: 'then' }))
      const again = lockDataDir(dir, 'server')
      expect(JSON.parse(await Bun.file(`${dir}/chorus.lock`).text()).pid).toBe(process.pid)
      again()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
