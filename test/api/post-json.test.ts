// The keyed reads GET /posts/{id} and GET /boards/{slug}/posts send JSON written by PostgreSQL
// (posts/queries.ts `postJson`); every other post response is rendered in the process (toPostResponse).
// Both must give the same body: every author kind, labels, demand with and without revenue, scores,
// factors, a tracker link, sub-millisecond times, paging, filters and an empty page.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { events, posts } from '../../server/db/schema/index.ts'
import { getPost, listPosts } from '../../server/modules/posts/queries.ts'
import { withoutRevenue } from '../../server/modules/companies/demand.ts'
import { readPage } from '../../server/lib/paging.ts'

let h: Harness
let ws: WorkspaceFixture
let full: string
let noRevenue: string
const ids: string[] = []

beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await labelFixture(h, ws.id, 'api')
  await labelFixture(h, ws.id, 'ux')
  full = await ws.key()
  noRevenue = await ws.key(['posts:read', 'posts:write'], 'no revenue')
  const api = h.client({ authorization: `Bearer ${full}` })
  const made = [
    await api.post('/api/v1/boards/ideas/posts', { title: 'By the key', body: 'Line\nbreak "quoted" \u00e9 \u{1F600}', labels: ['ux', 'api'] }),
    await api.post('/api/v1/boards/ideas/posts', { title: 'By an end user', email: 'someone@example.com' }),
    await ws.owner.post('/api/v1/boards/ideas/posts', { title: 'By the owner' }, { headers: { 'x-workspace': ws.slug } }),
    await api.post('/api/v1/boards/ideas/posts', { title: 'Author deleted', labels: ['api'] }),
  ]
  for (const res of made) {
    expect(res.status).toBe(201)
    ids.push(res.body.id)
  }
  await h.db.execute(sql`update posts set author_key_id = null, author_user_id = null, author_end_user_id = null where id = ${ids[3]!}`)
  await h.db.execute(sql`update posts set demand_mrr = 123456, demand_weighted = 1.23456789, demand_companies = 2, demand_verified_voters = 1, score = 2.5,
    factors = '{"reach": 3, "impact": 0.5}', tracker_issue = '{"provider": "linear", "id": "ISS-1", "url": "https://linear.app/x/ISS-1"}',
    created_at = '2026-01-02 03:04:05.678901+00', updated_at = '2026-01-02 03:04:05+00', vote_count = 7 where id = ${ids[0]!}`)
}, 60_000)
afterAll(() => h.close())

describe('happy', () => {
  test('GET /posts/{id}: the same body as the process renders, revenue shown or hidden', async () => {
    for (const id of ids) {
      const expected = await getPost(h.db, ws.id, id)
      const res = await h.client({ authorization: `Bearer ${full}` }).get(`/api/v1/posts/${id}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toStartWith('application/json')
      expect(res.body).toEqual(expected)
      const hidden = await h.client({ authorization: `Bearer ${noRevenue}` }).get(`/api/v1/posts/${id}`)
      expect(hidden.body).toEqual(withoutRevenue(expected))
    }
    const first = (await h.client({ authorization: `Bearer ${full}` }).get(`/api/v1/posts/${ids[0]}`)).body
    expect(first).toMatchObject({ labels: ['api', 'ux'], created_at: '2026-01-02T03:04:05.678Z', updated_at: '2026-01-02T03:04:05.000Z', demand: { mrr: 123456, weighted: 1.234568 }, score: 2.5, factors: { reach: 3, impact: 0.5 } })
    expect(first.tracker_issue).toEqual({ provider: 'linear', id: 'ISS-1', url: 'https://linear.app/x/ISS-1' })
    // A session reads the same body.
    expect((await ws.owner.get(`/api/v1/posts/${ids[0]}`, { headers: { 'x-workspace': ws.slug } })).body).toEqual(await getPost(h.db, ws.id, ids[0]!))
  })

  test('GET /boards/{slug}/posts: the same envelope as the process renders, for sorts, filters and pages', async () => {
    for (const query of ['', 'sort=top', 'sort=new&per_page=2&page=2', 'label=api', 'q=owner', 'per_page=2&page=9', 'status=open&sort=trending']) {
      const params = new URLSearchParams(query)
      const page = readPage({ page: params.has('page') ? Number(params.get('page')) : undefined, per_page: params.has('per_page') ? Number(params.get('per_page')) : undefined } as never)
      const filters = { sort: (params.get('sort') ?? undefined) as never, label: params.get('label') ?? undefined, q: params.get('q') ?? undefined, status: params.get('status') ?? undefined }
      const expected = await listPosts(h.db, { workspace: { id: ws.id }, board: 'ideas' }, filters, page)
      const res = await h.client({ authorization: `Bearer ${full}` }).get(`/api/v1/boards/ideas/posts?${query}`)
      expect({ query, status: res.status }).toEqual({ query, status: 200 })
      expect({ query, body: res.body }).toEqual({ query, body: expected })
      const hidden = await h.client({ authorization: `Bearer ${noRevenue}` }).get(`/api/v1/boards/ideas/posts?${query}`)
      expect({ query, body: hidden.body }).toEqual({ query, body: { ...expected, items: expected.items.map(withoutRevenue) } })
    }
  })
})

// A create writes its `post.created` event from the post as PostgreSQL renders it (postJson), in the same
// pipelined group as its inserts: the event's post must be the body the create answered.
const eventsOf = async (postId: string) => (await h.db.select().from(events).where(eq(events.workspaceId, ws.id)))
  .filter((row) => (row.data as any).post?.id === postId || (row.data as any).vote?.post_id === postId)

describe('post.created', () => {
  test('the event carries the body the create answered: a key with labels, a member, on behalf of an end user', async () => {
    const api = h.client({ authorization: `Bearer ${full}` })
    const made = [
      await api.post('/api/v1/boards/ideas/posts', { title: 'Event body', body: 'Tab\there \u202eRTL\u202c \u{1F600}', labels: ['ux', 'api'], status: 'Planned' }),
      await ws.owner.post('/api/v1/boards/ideas/posts', { title: 'Event by the owner' }, { headers: { 'x-workspace': ws.slug } }),
      await api.post('/api/v1/boards/ideas/posts', { title: 'Event on behalf', email: 'behalf@example.com', locale: 'de' }),
    ]
    for (const res of made) {
      expect(res.status).toBe(201)
      const announced = await eventsOf(res.body.id)
      expect(announced.map((row) => row.type)).toEqual(['post.created'])
      expect((announced[0]!.data as any).post).toEqual(res.body)
    }
    expect(made[0]!.body).toMatchObject({ labels: ['api', 'ux'], status: 'Planned', author: { type: 'api_key' } })
    expect(made[2]!.body).toMatchObject({ language: 'de', author: { type: 'end_user', email: 'behalf@example.com' } })
  })

  test("an anonymous visitor's post: post.created with the author's first vote counted, and vote.created", async () => {
    const res = await h.client().post(`/api/v1/public/${ws.slug}/boards/ideas/posts`, { title: 'Event from the widget', email: 'visitor@example.com' })
    expect(res.status).toBe(201)
    const announced = await eventsOf(res.body.id)
    expect(announced.map((row) => row.type).sort()).toEqual(['post.created', 'vote.created'])
    const created = announced.find((row) => row.type === 'post.created')!.data as any
    expect(created.post).toEqual(await getPost(h.db, ws.id, res.body.id))
    expect(created.post).toMatchObject({ votes: 1, author: { type: 'end_user', email: 'visitor@example.com' }, moderation: null })
  })

  test("a visitor's post.created sorts before the vote.created the same request writes (event ids count up within a millisecond)", async () => {
    // Both ids are minted within microseconds of each other; with random suffixes, about half of these
    // pairs sorted the vote first, and the dispatcher takes events in id order.
    for (let i = 0; i < 12; i++) {
      const res = await h.client().post(`/api/v1/public/${ws.slug}/boards/ideas/posts`, { title: `Ordered events ${i}`, email: `order-${i}@example.com` })
      expect(res.status).toBe(201)
      const announced = (await eventsOf(res.body.id)).sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(announced.map((row) => row.type)).toEqual(['post.created', 'vote.created'])
    }
  })

  test('a create refused (unknown board, status or label) leaves no post and no event', async () => {
    const api = h.client({ authorization: `Bearer ${full}` })
    const before = (await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).length
    const postsBefore = (await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).length
    expect((await api.post('/api/v1/boards/nope/posts', { title: 'Nowhere' })).status).toBe(404)
    expect((await api.post('/api/v1/boards/ideas/posts', { title: 'Bad status', status: 'nope' })).status).toBe(422)
    expect((await api.post('/api/v1/boards/ideas/posts', { title: 'Bad label', labels: ['nope'] })).status).toBe(422)
    expect((await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).length).toBe(before)
    expect((await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).length).toBe(postsBefore)
  })
})

describe('errors', () => {
  test('unknown post, board, label and status keep their errors', async () => {
    const api = h.client({ authorization: `Bearer ${full}` })
    expect((await api.get('/api/v1/posts/post_unknown')).body.code).toBe('NOT_FOUND')
    expect((await api.get('/api/v1/boards/nope/posts')).body.code).toBe('NOT_FOUND')
    const label = await api.get('/api/v1/boards/ideas/posts?label=nope')
    expect(label.status).toBe(422)
    const other = await workspaceFixture(h)
    const foreign = h.client({ authorization: `Bearer ${await other.key()}` })
    expect((await foreign.get(`/api/v1/posts/${ids[0]}`)).status).toBe(404)
  })
})
