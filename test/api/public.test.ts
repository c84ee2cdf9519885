import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { posts, statuses } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { boardFixture, labelFixture, setSubscription, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
let anon: TestClient
const ids: Record<string, string> = {}

const base = () => `/api/v1/public/${ws.slug}`

beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'bugs')
  await boardFixture(h, ws.id, 'secret', true)
  await boardFixture(h, other.id, 'ideas')
  await labelFixture(h, ws.id, 'ux')
  await labelFixture(h, ws.id, 'api')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  anon = h.client()
  const post = async (name: string, board: string, body: Record<string, unknown>) => {
    const res = await api.post(`/api/v1/boards/${board}/posts`, body)
    if (res.status !== 201) throw new Error(`post ${name}: ${res.status} ${JSON.stringify(res.body)}`)
    ids[name] = res.body.id
  }
  await post('dark', 'ideas', { title: 'Dark mode', body: 'Night shifts', labels: ['ux'], status: 'Planned', email: 'ada@customer.example' })
  await post('csv', 'ideas', { title: 'CSV export', status: 'In progress', labels: ['api'] })
  await post('open', 'ideas', { title: 'Keyboard shortcuts', email: 'grace@customer.example' })
  await post('crash', 'bugs', { title: 'Crash on save', status: 'Complete', email: 'bob@customer.example' })
  await post('secret', 'secret', { title: 'Acquisition plan', status: 'Planned' })
  await post('dupe', 'ideas', { title: 'Night theme', status: 'Planned' })
  await post('intoSecret', 'ideas', { title: 'Folded into a private post' })
  for (const email of ['v1@customer.example', 'v2@customer.example', 'v3@customer.example']) await api.post(`/api/v1/posts/${ids.dark}/votes`, { email })
  await api.post(`/api/v1/posts/${ids.csv}/votes`, { email: 'v1@customer.example' })
  await api.post(`/api/v1/posts/${ids.dupe}/merge`, { into_post_id: ids.dark })
  await api.post(`/api/v1/posts/${ids.intoSecret}/merge`, { into_post_id: ids.secret })
  await api.post(`/api/v1/posts/${ids.dark}/comments`, { body: 'Me too', email: 'carol@customer.example' })
  await api.post(`/api/v1/posts/${ids.dark}/comments`, { body: 'INTERNAL-NOTE: big customer', internal: true })
  await ws.owner.post(`/api/v1/posts/${ids.dark}/comments`, { body: 'On the roadmap' }, { headers: { 'x-workspace': ws.slug } })
  const otherKey = await other.key()
  ids.theirs = (await h.client({ authorization: `Bearer ${otherKey}` }).post('/api/v1/boards/ideas/posts', { title: 'Other workspace post' })).body.id
}, 60_000)
afterAll(() => h.close())

const titles = (items: { title: string }[]) => items.map((item) => item.title).sort()

describe('public reads: happy paths', () => {
  test('the portal: branding, public boards with counts, statuses in order', async () => {
    const res = await anon.get(base())
    expect(res.status).toBe(200)
    expect(res.body.workspace).toEqual({ slug: ws.slug, name: `Workspace ${ws.slug}`, logo_url: null, favicon_url: null, settings: { allow_anonymous: true, brand_color: null, accent_color: null, default_board: 'ideas', proof_of_work: false } })
    expect(res.body.boards.map((b: any) => [b.slug, b.post_count])).toEqual([['bugs', 1], ['ideas', 3]])
    expect(res.body.boards[0]).toMatchObject({ id: expect.stringMatching(/^brd_/), name: 'Bugs', description: null })
    expect(res.body.statuses.map((s: any) => s.name)).toEqual(['Open', 'Under review', 'Planned', 'In progress', 'Complete', 'Closed'])
    expect(res.body.statuses[2]).toMatchObject({ kind: 'planned', position: 2, color: expect.any(String) })
  })

  test('only the allowed settings are published', async () => {
    const patched = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { brand_color: '#112233', allow_anonymous: false, default_board: 'secret' } })
    expect(patched.status).toBe(200)
    const res = await anon.get(base())
    expect(res.body.workspace.settings).toEqual({ allow_anonymous: false, brand_color: '#112233', accent_color: '#112233', default_board: 'ideas', proof_of_work: false })
    await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { brand_color: null, allow_anonymous: true, default_board: null } })
  })

  test("a public board's posts: the private list's envelope, filters, sorts and limit alias", async () => {
    const res = await anon.get(`${base()}/boards/ideas/posts`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ page: 1, per_page: 20, total: 3, total_pages: 1 })
    expect(titles(res.body.items)).toEqual(['CSV export', 'Dark mode', 'Keyboard shortcuts'])
    const dark = res.body.items.find((p: any) => p.id === ids.dark)
    expect(dark).toMatchObject({ board: 'ideas', status: 'Planned', status_kind: 'planned', labels: ['ux'], votes: 3, comment_count: 2, merged_into: null, owner_user_id: null })
    expect(dark.author).toEqual({ type: 'end_user', id: expect.stringMatching(/^eu_/), name: 'Anonymous', email: null })

    const paged = await anon.get(`${base()}/boards/ideas/posts?limit=2&page=2&sort=new`)
    expect(paged.body).toMatchObject({ page: 2, per_page: 2, total: 3, total_pages: 2 })
    expect(paged.body.items).toHaveLength(1)
    expect((await anon.get(`${base()}/boards/ideas/posts?sort=top`)).body.items[0].id).toBe(ids.dark)
    expect((await anon.get(`${base()}/boards/ideas/posts?status=in%20progress`)).body.items.map((p: any) => p.id)).toEqual([ids.csv])
    expect((await anon.get(`${base()}/boards/ideas/posts?label=ux`)).body.items.map((p: any) => p.id)).toEqual([ids.dark])
    expect((await anon.get(`${base()}/boards/ideas/posts?q=keyboard`)).body.items.map((p: any) => p.id)).toEqual([ids.open])
  })

  test('a post with its public comments inline, oldest first', async () => {
    const res = await anon.get(`${base()}/posts/${ids.dark}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: ids.dark, title: 'Dark mode', comment_count: 2, votes: 3, owner_user_id: null })
    expect(res.body.comments.map((c: any) => c.body)).toEqual(['Me too', 'On the roadmap'])
    expect(res.body.comments.map((c: any) => c.author.type)).toEqual(['end_user', 'team'])
    // A member without a name is known by e-mail; in public no part of it shows (docs/security.md#end-user-identity).
    expect(res.body.comments[1].author.name).toBe('Team member')
    expect(res.body.comments.every((c: any) => c.internal === false && c.author.email === null)).toBe(true)
  })

  test('a merged post answers with merged_into, so the portal can follow it', async () => {
    const res = await anon.get(`${base()}/posts/${ids.dupe}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ merged_into: ids.dark, votes: 0, comments: [] })
  })

  test('the roadmap: three groups by kind, public posts only, top by votes', async () => {
    const res = await anon.get(`${base()}/roadmap`)
    expect(res.status).toBe(200)
    expect(res.body.groups.map((g: any) => [g.status_kind, g.statuses, g.total, g.items.map((p: any) => p.id)])).toEqual([
      ['planned', ['Planned'], 1, [ids.dark]],
      ['in_progress', ['In progress'], 1, [ids.csv]],
      ['complete', ['Complete'], 1, [ids.crash]],
    ])
    expect(res.body.groups[0].items[0].author.email).toBeNull()
  })

  test('the roadmap keeps 50 items per group, so one busy kind cannot crowd out the others', async () => {
    const busy = await workspaceFixture(h)
    const board = await boardFixture(h, busy.id, 'ideas')
    const statusOf = async (name: string) => (await h.db.select().from(statuses).where(and(eq(statuses.workspaceId, busy.id), eq(statuses.name, name))))[0]!.id
    const [planned, doing] = [await statusOf('Planned'), await statusOf('In progress')]
    await h.db.insert(posts).values(Array.from({ length: 55 }, (_, i) => ({ id: newId('post'), workspaceId: busy.id, boardId: board.id, title: `Planned ${i}`, statusId: planned, voteCount: 100 + i })))
    await h.db.insert(posts).values({ id: newId('post'), workspaceId: busy.id, boardId: board.id, title: 'Quiet one', statusId: doing, voteCount: 0 })
    const { groups } = (await anon.get(`/api/v1/public/${busy.slug}/roadmap`)).body
    expect(groups.map((g: any) => [g.status_kind, g.total, g.items.length])).toEqual([['planned', 55, 50], ['in_progress', 1, 1], ['complete', 0, 0]])
    expect(groups[0].items[0].votes).toBe(154)
    expect(groups[0].items[49].votes).toBe(105)
  })

  test('every read also answers under /api', async () => {
    for (const path of ['', '/boards/ideas/posts', `/posts/${ids.dark}`, '/roadmap']) {
      expect((await anon.get(`/api/public/${ws.slug}${path}`)).status).toBe(200)
    }
  })

  test('a lapsed subscription keeps the portal up (only keys are gated)', async () => {
    await setSubscription(h, ws.id, { subscriptionStatus: 'canceled' })
    try {
      expect((await api.get('/api/v1/boards/ideas/posts')).body.code).toBe('SUBSCRIPTION_INACTIVE')
      for (const path of ['', '/boards/ideas/posts', `/posts/${ids.dark}`, '/roadmap']) expect((await anon.get(`${base()}${path}`)).status).toBe(200)
    } finally {
      await setSubscription(h, ws.id, { subscriptionStatus: 'trialing' })
    }
  })
})

describe('public reads: caching and CORS', () => {
  test('Cache-Control and a weak ETag on every read; If-None-Match gives an empty 304', async () => {
    for (const path of ['', '/boards/ideas/posts?sort=top', `/posts/${ids.dark}`, '/roadmap']) {
      const first = await anon.get(`${base()}${path}`)
      expect(first.headers.get('cache-control')).toBe('public, max-age=30, stale-while-revalidate=60')
      const etag = first.headers.get('etag')!
      expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/)
      expect(first.headers.get('content-type')).toContain('application/json')
      expect((await anon.get(`${base()}${path}`)).headers.get('etag')).toBe(etag)

      const cached = await anon.get(`${base()}${path}`, { headers: { 'if-none-match': etag } })
      expect(cached.status).toBe(304)
      expect(cached.body).toBeNull()
      expect(cached.headers.get('etag')).toBe(etag)
      expect(cached.headers.get('cache-control')).toBe('public, max-age=30, stale-while-revalidate=60')
      expect(cached.headers.get('access-control-allow-origin')).toBe('*')
      expect(cached.headers.get('x-request-id')).toMatch(/^req_/)
      // A list of tags, and the strong form of the same tag, match too (weak comparison).
      expect((await anon.get(`${base()}${path}`, { headers: { 'if-none-match': `W/"nope", ${etag.slice(2)}` } })).status).toBe(304)
      expect((await anon.get(`${base()}${path}`, { headers: { 'if-none-match': 'W/"stale"' } })).status).toBe(200)
    }
  })

  test('the ETag changes when the content does', async () => {
    const before = await anon.get(`${base()}/posts/${ids.open}`)
    await api.post(`/api/v1/posts/${ids.open}/votes`, { email: 'late@customer.example' })
    const after = await anon.get(`${base()}/posts/${ids.open}`, { headers: { 'if-none-match': before.headers.get('etag')! } })
    expect(after.status).toBe(200)
    expect(after.body.votes).toBe(before.body.votes + 1)
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'))
  })

  test('open CORS on reads and on errors of public routes', async () => {
    const headers = { origin: 'https://customer.example' }
    const ok = await anon.get(`${base()}/roadmap`, { headers })
    expect(ok.headers.get('access-control-allow-origin')).toBe('*')
    expect(ok.headers.get('access-control-expose-headers')).toContain('ETag')
    expect(ok.headers.get('access-control-allow-credentials')).toBeNull()
    const missing = await anon.get('/api/v1/public/no-such-workspace', { headers })
    expect(missing.status).toBe(404)
    expect(missing.headers.get('access-control-allow-origin')).toBe('*')
    const invalid = await anon.get(`${base()}/boards/ideas/posts?per_page=0`, { headers })
    expect(invalid.status).toBe(422)
    expect(invalid.headers.get('access-control-allow-origin')).toBe('*')
  })

  test('the preflight: 204 allowing GET and POST with the widget headers, under both prefixes', async () => {
    for (const path of [`${base()}/boards/ideas/posts`, `/api/public/${ws.slug}/posts/${ids.dark}/votes`, `${base()}`]) {
      const res = await anon.call('OPTIONS', path, { headers: { origin: 'https://customer.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' } })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST')
      const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/)
      for (const header of ['authorization', 'content-type', 'idempotency-key']) expect(allowed).toContain(header)
      expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0)
      expect(res.headers.get('x-request-id')).toMatch(/^req_/)
    }
  })

  test('CORS stays closed on the private API', async () => {
    const res = await api.get('/api/v1/boards/ideas/posts', { headers: { origin: 'https://customer.example' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    expect(res.headers.get('cache-control')).toBe('no-store')
    const preflight = await anon.call('OPTIONS', '/api/v1/boards/ideas/posts', { headers: { origin: 'https://customer.example', 'access-control-request-method': 'GET' } })
    expect(preflight.status).toBe(405)
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('public reads: errors', () => {
  test('unknown workspace: 404 on every read', async () => {
    for (const path of ['', '/boards/ideas/posts', `/posts/${ids.dark}`, '/roadmap']) {
      const res = await anon.get(`/api/v1/public/no-such-workspace${path}`)
      expect(`${path} ${res.status} ${res.body.code}`).toBe(`${path} 404 NOT_FOUND`)
      expect(res.headers.get('etag')).toBeNull()
    }
  })

  test('unknown and private boards are the same 404', async () => {
    const unknown = await anon.get(`${base()}/boards/nope/posts`)
    const hidden = await anon.get(`${base()}/boards/secret/posts`)
    expect(unknown.status).toBe(404)
    expect(hidden.status).toBe(404)
    expect(hidden.body.message).toBe(unknown.body.message)
  })

  test("unknown posts, posts of a private board, of another workspace, or merged into a private one: 404", async () => {
    for (const id of ['post_doesnotexist', ids.secret, ids.theirs, ids.intoSecret]) {
      const res = await anon.get(`${base()}/posts/${id}`)
      expect(`${id} ${res.status} ${res.body.code}`).toBe(`${id} 404 NOT_FOUND`)
      expect(res.body.message).toBe('Post not found')
    }
    expect((await anon.get(`/api/v1/public/${other.slug}/posts/${ids.dark}`)).status).toBe(404)
    expect((await anon.get(`/api/v1/public/${other.slug}/posts/${ids.theirs}`)).status).toBe(200)
  })

  test('out-of-range paging and unknown filters are 422, never clamped', async () => {
    for (const query of ['page=0', 'per_page=0', 'per_page=101', 'limit=500', 'page=abc', 'sort=hot', 'per_page=10&limit=20', 'status=nope', 'label=nope', 'unknown=1']) {
      const res = await anon.get(`${base()}/boards/ideas/posts?${query}`)
      expect(`${query} ${res.status} ${res.body.code}`).toBe(`${query} 422 VALIDATION_ERROR`)
    }
  })

  test('writes are not part of these routes: 405 naming the methods there are', async () => {
    for (const method of ['PATCH', 'DELETE']) {
      const res = await anon.call(method, `${base()}/posts/${ids.dark}`, { body: method === 'PATCH' ? { title: 'x' } : undefined })
      expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, HEAD, OPTIONS'])
    }
  })
})

describe('public reads: security', () => {
  const everything = async () => {
    const paths = ['', '/boards/ideas/posts', '/boards/bugs/posts', '/roadmap', ...['dark', 'csv', 'open', 'crash', 'dupe'].map((name) => `/posts/${ids[name]}`)]
    return Promise.all(paths.map(async (path) => JSON.stringify((await anon.get(`${base()}${path}`)).body)))
  }

  test('no e-mail address, internal note, private board or private post anywhere', async () => {
    for (const body of await everything()) {
      expect(body).not.toContain('@')
      expect(body).not.toContain('INTERNAL-NOTE')
      expect(body).not.toContain('Acquisition plan')
      expect(body).not.toContain('secret')
      expect(body).not.toContain(ids.secret!)
      expect(body).not.toContain('"internal":true')
      expect(body).not.toMatch(/subscription_status|comped|"role"/)
    }
  })

  test('merged posts stay out of lists and the roadmap', async () => {
    const lists = [await anon.get(`${base()}/boards/ideas/posts`), await anon.get(`${base()}/roadmap`)]
    for (const res of lists) {
      expect(JSON.stringify(res.body)).not.toContain(ids.dupe!)
      expect(JSON.stringify(res.body)).not.toContain(ids.intoSecret!)
    }
  })

  test('comment counts leave internal notes out', async () => {
    const internalCount = (await api.get(`/api/v1/posts/${ids.dark}/comments`)).body.total
    expect(internalCount).toBe(3)
    expect((await anon.get(`${base()}/posts/${ids.dark}`)).body.comment_count).toBe(2)
  })

  test('credentials are ignored: a bogus bearer token, an API key or a session reads the same public view', async () => {
    const reference = await anon.get(`${base()}/posts/${ids.dark}`)
    for (const client of [h.client({ authorization: 'Bearer end-user-token-from-the-widget' }), api, ws.owner]) {
      const res = await client.get(`${base()}/posts/${ids.dark}`)
      expect(res.status).toBe(200)
      expect(res.body).toEqual(reference.body)
      expect(res.headers.get('set-cookie')).toBeNull()
    }
  })

  test('another workspace slug never serves this workspace', async () => {
    const res = await anon.get(`/api/v1/public/${other.slug}/boards/ideas/posts`)
    expect(res.body.items.map((p: any) => p.id)).toEqual([ids.theirs])
    expect((await anon.get(`/api/v1/public/${other.slug}/roadmap`)).body.groups.every((g: any) => g.items.length === 0)).toBe(true)
  })
})
