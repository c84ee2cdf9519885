import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { comments, endUsers, events, posts, statusChanges, votes } from '../../server/db/schema/index.ts'
import { configureHs256, customerToken, identify, nextIp } from '../helpers/end-users.ts'
import { boardFixture, setSubscription, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { freshRateWindow, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let secret: string
let session: string
let endUserId: string
let api: TestClient
beforeAll(async () => {
  h = await startHarness({ TRUST_PROXY: 'true' })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'internal', true)
  secret = await configureHs256(ws.owner, ws.slug)
  const identified = await identify(h, ws.slug, await customerToken(secret, { claims: { sub: 'cust-7', name: 'Grace Hopper', email: 'grace@example.com' } }))
  session = identified.body.session_token
  endUserId = identified.body.id
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
}, 60_000)
afterAll(() => h.close())

const base = (slug = ws.slug) => `/api/v1/public/${slug}`
const anonymous = (headers: Record<string, string> = {}) => h.client({ 'x-forwarded-for': nextIp(), ...headers })
const identified = (token = session) => h.client({ authorization: `Bearer ${token}` })
const keyPost = async (board = 'ideas') => (await api.post(`/api/v1/boards/${board}/posts`, { title: `Key post ${Math.random()}` })).body as { id: string }
const eventsOf = async (type: string, match: (data: any) => boolean) => (await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, type)))).filter((row) => match(row.data))

describe('happy', () => {
  test('an anonymous visitor posts with an e-mail address: the end user is created, post.created is written, the e-mail stays private', async () => {
    const res = await anonymous().post(`${base()}/boards/ideas/posts`, { title: 'Dark mode', body: 'Please', email: 'Visitor@Example.com' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ title: 'Dark mode', body: 'Please', board: 'ideas', votes: 1, author: { type: 'end_user', name: 'Anonymous', email: null } })
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const [row] = await h.db.select().from(posts).where(eq(posts.id, res.body.id))
    const [author] = await h.db.select().from(endUsers).where(eq(endUsers.id, row!.authorEndUserId!))
    expect(author).toMatchObject({ email: 'visitor@example.com', externalId: null, workspaceId: ws.id })
    expect(await eventsOf('post.created', (data) => data.post.id === res.body.id)).toHaveLength(1)
    const [history] = await h.db.select().from(statusChanges).where(eq(statusChanges.postId, res.body.id))
    expect(history).toMatchObject({ changedByUserId: null, changedByKeyId: null })
  })

  test('an identified end user posts as themselves with the session token', async () => {
    const res = await identified().post(`${base()}/boards/ideas/posts`, { title: 'SSO' })
    expect(res.status).toBe(201)
    expect(res.body.author).toEqual({ type: 'end_user', id: endUserId, name: 'Grace Hopper', email: null })
    expect(await eventsOf('post.created', (data) => data.post.id === res.body.id && data.post.author.id === endUserId)).toHaveLength(1)
  })

  test('Idempotency-Key replays the first response instead of posting twice', async () => {
    const client = identified()
    const headers = { 'idempotency-key': 'widget-retry-1' }
    const first = await client.post(`${base()}/boards/ideas/posts`, { title: 'Exactly once' }, { headers })
    const second = await client.post(`${base()}/boards/ideas/posts`, { title: 'Exactly once' }, { headers })
    expect(second.status).toBe(201)
    expect(second.body.id).toBe(first.body.id)
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect(await h.db.select().from(posts).where(eq(posts.title, 'Exactly once'))).toHaveLength(1)
    expect((await client.post(`${base()}/boards/ideas/posts`, { title: 'Another' }, { headers })).status).toBe(422)
  })

  test('votes toggle for anonymous and identified end users; the count follows', async () => {
    const post = await keyPost()
    const voter = anonymous()
    const cast = await voter.post(`${base()}/posts/${post.id}/votes`, { email: 'fan@example.com' })
    expect(cast.body).toEqual({ voted: true, votes: 1, verified: false })
    expect((await identified().post(`${base()}/posts/${post.id}/votes`, {})).body).toEqual({ voted: true, votes: 2, verified: true })
    // Without its session the address can only add a vote (docs/security.md#end-user-identity); the session that cast it takes it back.
    expect((await voter.post(`${base()}/posts/${post.id}/votes`, { email: 'FAN@example.com' })).body).toEqual({ voted: true, votes: 2, verified: false })
    const withSession = h.client({ authorization: `Bearer ${cast.headers.get('chorus-session-token')}` })
    expect((await withSession.post(`${base()}/posts/${post.id}/votes`, {})).body).toEqual({ voted: false, votes: 1, verified: false })
    const rows = await h.db.select().from(votes).where(eq(votes.postId, post.id))
    expect(rows.map((row) => row.endUserId)).toEqual([endUserId])
    expect((await anonymous().post(`${base()}/posts/${post.id}/votes`, {})).status).toBe(422)
  })

  test('CORS: preflight allows Authorization, Content-Type and Idempotency-Key from any origin', async () => {
    const res = await h.client().call('OPTIONS', `${base()}/boards/ideas/posts`, { headers: { origin: 'https://customer.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,idempotency-key' } })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    for (const header of ['Authorization', 'Content-Type', 'Idempotency-Key']) expect(res.headers.get('access-control-allow-headers')).toContain(header)
    // Non-public routes stay without CORS.
    expect((await h.client().call('OPTIONS', '/api/v1/workspaces', { headers: { origin: 'https://customer.example' } })).headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('errors', () => {
  test('validation: identified users send no email; anonymous ones must; unknown fields and bad values are 422', async () => {
    for (const [client, body] of [
      [identified(), { title: 'x', email: 'someone@example.com' }],
      [anonymous(), { title: 'x' }],
      [anonymous(), { title: 'x', email: 'nope' }],
      [anonymous(), { title: '', email: 'a@example.com' }],
      [anonymous(), { title: 'x', email: 'a@example.com', status: 'Planned' }],
      [anonymous(), { title: 'x', email: 'a@example.com', end_user_id: endUserId }],
    ] as const) {
      const res = await client.post(`${base()}/boards/ideas/posts`, body)
      expect(res.status, JSON.stringify(body)).toBe(422)
    }
  })

  test('comments are public, never internal; an `internal` field is refused', async () => {
    const post = await keyPost()
    const res = await identified().post(`${base()}/posts/${post.id}/comments`, { body: 'Me too' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ body: 'Me too', internal: false, post_id: post.id, author: { type: 'end_user', id: endUserId, email: null } })
    const reply = await anonymous().post(`${base()}/posts/${post.id}/comments`, { body: 'Same', parent_id: res.body.id, email: 'x@example.com' })
    expect(reply.body).toMatchObject({ parent_id: res.body.id, internal: false })
    const sneaky = await identified().post(`${base()}/posts/${post.id}/comments`, { body: 'secret?', internal: true })
    expect(sneaky.status).toBe(422)
    const note = (await api.post(`/api/v1/posts/${post.id}/comments`, { body: 'team only', internal: true })).body
    expect((await identified().post(`${base()}/posts/${post.id}/comments`, { body: 'reply', parent_id: note.id })).status).toBe(422)
    const stored = await h.db.select().from(comments).where(eq(comments.postId, post.id))
    expect(stored.filter((row) => row.internal).map((row) => row.body)).toEqual(['team only'])
    expect(await eventsOf('comment.created', (data) => data.post_id === post.id)).toHaveLength(3)
  })

  test('a lapsed subscription makes the public routes read-only', async () => {
    const lapsed = await workspaceFixture(h)
    await boardFixture(h, lapsed.id, 'ideas')
    await setSubscription(h, lapsed.id, { subscriptionStatus: 'canceled' })
    const res = await anonymous().post(`${base(lapsed.slug)}/boards/ideas/posts`, { title: 'x', email: 'a@example.com' })
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('SUBSCRIPTION_INACTIVE')
  })

  test('anonymous writes per IP, identified writes per end user: 429 RATE_LIMITED with Retry-After', async () => {
    const limited = await startHarness({ TRUST_PROXY: 'true', RATE_LIMIT_PER_IP: '3' })
    try {
      const w = await workspaceFixture(limited)
      await boardFixture(limited, w.id, 'ideas')
      const token = (await identify(limited, w.slug, await customerToken(await configureHs256(w.owner, w.slug)))).body.session_token
      const ip = nextIp()
      const visitor = limited.client({ 'x-forwarded-for': ip })
      await freshRateWindow()
      for (let i = 0; i < 3; i++) expect((await visitor.post(`${base(w.slug)}/boards/ideas/posts`, { title: `a${i}`, email: 'a@example.com' })).status).toBe(201)
      const refused = await visitor.post(`${base(w.slug)}/boards/ideas/posts`, { title: 'a4', email: 'b@example.com' })
      expect(refused.status).toBe(429)
      expect(refused.body.code).toBe('RATE_LIMITED')
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      // The identified end user has a budget of their own, even from the same address.
      const member = limited.client({ 'x-forwarded-for': ip, authorization: `Bearer ${token}` })
      for (let i = 0; i < 3; i++) expect((await member.post(`${base(w.slug)}/boards/ideas/posts`, { title: `i${i}` })).status).toBe(201)
      expect((await member.post(`${base(w.slug)}/boards/ideas/posts`, { title: 'i4' })).status).toBe(429)
    } finally {
      await limited.close()
    }
  }, 60_000)
})

describe('security', () => {
  test('private boards, unknown boards and unknown workspaces are 404', async () => {
    expect((await anonymous().post(`${base()}/boards/internal/posts`, { title: 'x', email: 'a@example.com' })).status).toBe(404)
    expect((await identified().post(`${base()}/boards/internal/posts`, { title: 'x' })).status).toBe(404)
    expect((await anonymous().post(`${base()}/boards/nope/posts`, { title: 'x', email: 'a@example.com' })).status).toBe(404)
    expect((await anonymous().post(`${base('no-such-ws')}/boards/ideas/posts`, { title: 'x', email: 'a@example.com' })).status).toBe(404)
    expect(await h.db.select().from(posts).where(eq(posts.title, 'x'))).toHaveLength(0)
  })

  test('posts on private boards and of other workspaces are 404; sessions of another workspace are 401', async () => {
    const hidden = await keyPost('internal')
    expect((await identified().post(`${base()}/posts/${hidden.id}/votes`, {})).status).toBe(404)
    expect((await identified().post(`${base()}/posts/${hidden.id}/comments`, { body: 'hi' })).status).toBe(404)

    const other = await workspaceFixture(h)
    await boardFixture(h, other.id, 'ideas')
    const theirs = (await h.client({ authorization: `Bearer ${await other.key()}` }).post('/api/v1/boards/ideas/posts', { title: 'Theirs' })).body
    expect((await anonymous().post(`${base()}/posts/${theirs.id}/votes`, { email: 'a@example.com' })).status).toBe(404)
    expect((await identified().post(`${base()}/posts/${theirs.id}/comments`, { body: 'hi' })).status).toBe(404)
    const crossed = await identified().post(`${base(other.slug)}/posts/${theirs.id}/votes`, {})
    expect(crossed.status).toBe(401)
    expect(crossed.body.message).toMatch(/another workspace/)
  })

  test('only widget sessions count: API keys, dashboard tokens, garbage and expired sessions are 401', async () => {
    const post = await keyPost()
    const key = await ws.key()
    for (const authorization of [`Bearer ${key}`, 'Bearer not-a-token', 'Basic abc', `Bearer ${session.slice(0, -2)}xx`]) {
      const res = await h.client({ authorization }).post(`${base()}/posts/${post.id}/votes`, {})
      expect(res.status, authorization).toBe(401)
      expect(res.body.code).toBe('UNAUTHENTICATED')
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
    }
    const { signJwt } = await import('../../server/lib/jwt.ts')
    const expired = await signJwt({ key: h.ctx.keys.widgetSession, issuer: h.ctx.config.baseUrl, audience: 'chorus:widget', typ: 'chorus-widget+jwt', subject: endUserId, expiresInSeconds: -60, claims: { ws: ws.id } })
    expect((await identified(expired).post(`${base()}/posts/${post.id}/votes`, {})).status).toBe(401)
    const dashboard = await signJwt({ key: h.ctx.keys.accessToken, issuer: h.ctx.config.baseUrl, audience: 'chorus:widget', typ: 'chorus-widget+jwt', subject: endUserId, expiresInSeconds: 60, claims: { ws: ws.id } })
    expect((await identified(dashboard).post(`${base()}/posts/${post.id}/votes`, {})).status).toBe(401)
  })

  test('with allow_anonymous off, anonymous writes are 401 and identified ones still work', async () => {
    const closed = await workspaceFixture(h)
    await boardFixture(h, closed.id, 'ideas')
    const key = await configureHs256(closed.owner, closed.slug)
    expect((await closed.owner.patch(`/api/v1/workspaces/${closed.slug}`, { settings: { allow_anonymous: false } })).status).toBe(200)
    const refused = await anonymous().post(`${base(closed.slug)}/boards/ideas/posts`, { title: 'x', email: 'a@example.com' })
    expect(refused.status).toBe(401)
    expect(refused.body.message).toMatch(/identified users only/)
    const token = (await identify(h, closed.slug, await customerToken(key))).body.session_token
    expect((await identified(token).post(`${base(closed.slug)}/boards/ideas/posts`, { title: 'Allowed' })).status).toBe(201)
  })
})
