import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, like } from 'drizzle-orm'
import { idempotencyKeys, posts } from '../../server/db/schema/index.ts'
import { configureHs256, customerToken, identify, nextIp } from '../helpers/end-users.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { eventually } from '../helpers/receiver.ts'
import { signIn } from '../helpers/session.ts'

// The `endUser` macro of the auth plugin: public writes go through the same Idempotency-Key and rate-limit
// code as key and dashboard writes (one claim table, one lifecycle, one limiter path).
let h: Harness
let ws: WorkspaceFixture
let session: string
beforeAll(async () => {
  h = await startHarness({ TRUST_PROXY: 'true' })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'internal', true)
  const secret = await configureHs256(ws.owner, ws.slug)
  session = (await identify(h, ws.slug, await customerToken(secret, { claims: { sub: 'macro-1' } }))).body.session_token
}, 60_000)
afterAll(() => h.close())

const base = `/api/v1/public`
const postsPath = () => `${base}/${ws.slug}/boards/ideas/posts`

describe('happy', () => {
  test('a widget-session write claims its Idempotency-Key in the shared table, scoped to the end user', async () => {
    const client = h.client({ authorization: `Bearer ${session}`, 'idempotency-key': 'macro-key-1' })
    const first = await client.post(postsPath(), { title: 'Once' })
    expect(first.status).toBe(201)
    const again = await client.post(postsPath(), { title: 'Once' })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
    const [claim] = await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'macro-key-1'))
    expect(claim).toMatchObject({ scope: expect.stringMatching(new RegExp(`^${ws.id}:eu:eu_`)), responseStatus: 201 })
    expect(await h.db.select().from(posts).where(and(eq(posts.workspaceId, ws.id), eq(posts.title, 'Once')))).toHaveLength(1)
  })

  test('anonymous writers are scoped by a hash of their address, never the address itself', async () => {
    const res = await h.client({ 'x-forwarded-for': nextIp(), 'idempotency-key': 'macro-anon-1' }).post(postsPath(), { title: 'Anon', email: 'Someone@Example.com' })
    expect(res.status).toBe(201)
    const [claim] = await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'macro-anon-1'))
    expect(claim!.scope).toMatch(new RegExp(`^${ws.id}:anon:[0-9a-f]{64}$`))
    expect(claim!.scope).not.toContain('example.com')
  })
})

describe('errors', () => {
  test('a failed write releases its key, so a retry with the same key runs', async () => {
    const client = h.client({ authorization: `Bearer ${session}`, 'idempotency-key': 'macro-private' })
    const hidden = await client.post(`${base}/${ws.slug}/boards/internal/posts`, { title: 'Hidden' })
    expect(hidden.status).toBe(404)
    // Released once the response is out.
    await eventually(async () => (await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'macro-private'))).length === 0)
    expect((await client.post(`${base}/${ws.slug}/boards/internal/posts`, { title: 'Hidden' })).status).toBe(404)
  })

  test('the same key with another body is 422 IDEMPOTENCY_MISMATCH, as on key routes', async () => {
    const client = h.client({ authorization: `Bearer ${session}`, 'idempotency-key': 'macro-key-2' })
    expect((await client.post(postsPath(), { title: 'First' })).status).toBe(201)
    const other = await client.post(postsPath(), { title: 'Second' })
    expect(other.status).toBe(422)
    expect(other.body.code).toBe('IDEMPOTENCY_MISMATCH')
    expect(await h.db.select().from(posts).where(and(eq(posts.workspaceId, ws.id), like(posts.title, 'Second')))).toHaveLength(0)
  })
})

describe('security', () => {
  test('credential-less routes are limited by the same macro path: resend-verification per user', async () => {
    const limited = await startHarness({ TRUST_PROXY: 'true', RATE_LIMIT_PER_IP: '1000' })
    try {
      const client = limited.client()
      await signIn(limited, client, `resend-${Date.now()}@example.com`)
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) statuses.push((await client.post('/api/v1/auth/resend-verification')).status)
      expect(statuses.slice(0, 5).every((status) => status === 200)).toBe(true)
      expect(statuses[5]).toBe(429)
    } finally {
      await limited.close()
    }
  })

  test('a widget session of another workspace does not write here, with or without a key', async () => {
    const other = await workspaceFixture(h)
    const secret = await configureHs256(other.owner, other.slug)
    const foreign = (await identify(h, other.slug, await customerToken(secret, { claims: { sub: 'macro-x' } }))).body.session_token
    const res = await h.client({ authorization: `Bearer ${foreign}`, 'idempotency-key': 'macro-foreign' }).post(postsPath(), { title: 'Foreign' })
    expect(res.status).toBe(401)
    expect(await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'macro-foreign'))).toHaveLength(0)
  })
})
