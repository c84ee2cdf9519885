import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import { endUsers, events, postLabels, posts, statusChanges } from '../../server/db/schema/index.ts'
import { boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let key: string
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'bugs')
  await labelFixture(h, ws.id, 'ux')
  await labelFixture(h, ws.id, 'api')
  key = await ws.key()
}, 60_000)
afterAll(() => h.close())

const auth = () => ({ headers: { authorization: `Bearer ${key}` } })
const api = () => h.client({ authorization: `Bearer ${key}` })
const eventsOf = async (type: string) => h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, type)))

describe('posts: happy paths', () => {
  test('a key creates a post under its name; the event is in the outbox', async () => {
    const res = await api().post('/api/v1/boards/ideas/posts', { title: '  Dark mode ', body: 'Please', labels: ['ux'] })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      board: 'ideas', title: 'Dark mode', body: 'Please', status: 'Open', status_kind: 'open', labels: ['ux'],
      votes: 0, comment_count: 0, merged_into: null, owner_user_id: null, author: { type: 'api_key', name: 'test key' },
    })
    expect(res.body.id).toMatch(/^post_[0-9a-z]{25}$/)
    const [row] = await h.db.select().from(posts).where(eq(posts.id, res.body.id))
    expect(row).toMatchObject({ title: 'Dark mode', workspaceId: ws.id })
    expect(await h.db.select().from(postLabels).where(eq(postLabels.postId, res.body.id))).toHaveLength(1)
    const created = (await eventsOf('post.created')).filter((e) => (e.data as any).post.id === res.body.id)
    expect(created).toHaveLength(1)
    expect((created[0]!.data as any).post.title).toBe('Dark mode')
    expect(await h.db.select().from(statusChanges).where(eq(statusChanges.postId, res.body.id))).toHaveLength(1)
  })

  test('labels and a status by name: the body is the read\'s, the event carries it, every row written', async () => {
    const res = await api().post('/api/v1/boards/bugs/posts', { title: 'Two labels', labels: ['ux', 'api'], status: 'planned' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ board: 'bugs', status: 'Planned', status_kind: 'planned', labels: ['api', 'ux'] })
    expect((await api().get(`/api/v1/posts/${res.body.id}`)).body).toEqual(res.body)
    const [event] = (await eventsOf('post.created')).filter((e) => (e.data as any).post.id === res.body.id)
    expect((event!.data as any).post).toEqual(res.body)
    const [row] = await h.db.select().from(posts).where(eq(posts.id, res.body.id))
    expect(row!.labelIds).toHaveLength(2)
    expect(await h.db.select().from(postLabels).where(eq(postLabels.postId, res.body.id))).toHaveLength(2)
    const [change] = await h.db.select().from(statusChanges).where(eq(statusChanges.postId, res.body.id))
    expect(change).toMatchObject({ fromStatusId: null, toStatusId: res.body.status_id, changedByKeyId: expect.stringMatching(/^key_/) })
  })

  test('on behalf of an end user by e-mail (created when new) and by id', async () => {
    const res = await api().post('/api/v1/boards/ideas/posts', { title: 'SSO', email: 'Ada@Customer.com' })
    expect(res.status).toBe(201)
    expect(res.body.author).toMatchObject({ type: 'end_user', email: 'ada@customer.com' })
    const [endUser] = await h.db.select().from(endUsers).where(eq(endUsers.email, 'ada@customer.com'))
    expect(endUser?.workspaceId).toBe(ws.id)
    const again = await api().post('/api/v1/boards/ideas/posts', { title: 'SAML', end_user_id: endUser!.id })
    expect(again.body.author.id).toBe(endUser!.id)
    expect(await h.db.select().from(endUsers).where(eq(endUsers.email, 'ada@customer.com'))).toHaveLength(1)
  })

  test('a member session creates with X-Workspace and is the author', async () => {
    const res = await ws.owner.post('/api/v1/boards/ideas/posts', { title: 'Member idea' }, { headers: { 'x-workspace': ws.slug } })
    expect(res.status).toBe(201)
    expect(res.body.author).toMatchObject({ type: 'member', id: ws.ownerId })
  })

  test('get, update (status history + status.changed), move board, delete', async () => {
    const created = (await api().post('/api/v1/boards/ideas/posts', { title: 'Lifecycle' })).body
    expect((await api().get(`/api/v1/posts/${created.id}`)).body.title).toBe('Lifecycle')

    const updated = await api().patch(`/api/v1/posts/${created.id}`, { status: 'planned', labels: ['api', 'ux'], title: 'Lifecycle 2', board: 'bugs', owner_user_id: ws.ownerId })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ status: 'Planned', status_kind: 'planned', labels: ['api', 'ux'], title: 'Lifecycle 2', board: 'bugs', owner_user_id: ws.ownerId })
    const history = await h.db.select().from(statusChanges).where(eq(statusChanges.postId, created.id))
    expect(history).toHaveLength(2)
    const changed = (await eventsOf('status.changed')).filter((e) => (e.data as any).post.id === created.id)
    expect(changed).toHaveLength(1)
    expect(changed[0]!.data).toMatchObject({ from_status: 'Open', to_status: 'Planned' })

    // Same status again: an update, not a status change.
    await api().patch(`/api/v1/posts/${created.id}`, { status: 'Planned' })
    expect((await eventsOf('status.changed')).filter((e) => (e.data as any).post.id === created.id)).toHaveLength(1)

    expect((await api().delete(`/api/v1/posts/${created.id}`)).status).toBe(204)
    expect((await api().get(`/api/v1/posts/${created.id}`)).status).toBe(404)
    expect((await eventsOf('post.deleted')).some((e) => (e.data as any).post.id === created.id)).toBe(true)
  })
})

describe('posts: lists', () => {
  let board: string
  beforeAll(async () => {
    board = 'list-board'
    await boardFixture(h, ws.id, board)
    const titles = ['Export to CSV', 'Slack integration', 'Dark theme for the widget', 'Keyboard shortcuts', 'CSV import']
    for (const title of titles) await api().post(`/api/v1/boards/${board}/posts`, { title, body: `About ${title.toLowerCase()}` })
  })

  test('the envelope, page/per_page and the limit alias', async () => {
    const first = await api().get(`/api/v1/boards/${board}/posts?per_page=2`)
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ page: 1, per_page: 2, total: 5, total_pages: 3 })
    expect(first.body.items).toHaveLength(2)
    const third = await api().get(`/api/v1/boards/${board}/posts?limit=2&page=3`)
    expect(third.body).toMatchObject({ page: 3, per_page: 2, total: 5, total_pages: 3 })
    expect(third.body.items).toHaveLength(1)
    const beyond = await api().get(`/api/v1/boards/${board}/posts?per_page=2&page=9`)
    expect(beyond.body).toMatchObject({ items: [], total: 5, total_pages: 3 })
    const ids = new Set([...first.body.items, ...(await api().get(`/api/v1/boards/${board}/posts?per_page=2&page=2`)).body.items, ...third.body.items].map((p: any) => p.id))
    expect(ids.size).toBe(5)
    expect((await api().get(`/api/v1/boards/${board}/posts`)).body.per_page).toBe(20)
  })

  test('full-text search, status and label filters, and sorts', async () => {
    const csv = await api().get(`/api/v1/boards/${board}/posts?q=csv`)
    expect(csv.body.items.map((p: any) => p.title).sort()).toEqual(['CSV import', 'Export to CSV'])
    const target = csv.body.items[0]
    await api().patch(`/api/v1/posts/${target.id}`, { status: 'In progress', labels: ['api'] })
    expect((await api().get(`/api/v1/boards/${board}/posts?status=in%20progress`)).body.items.map((p: any) => p.id)).toEqual([target.id])
    expect((await api().get(`/api/v1/boards/${board}/posts?label=api`)).body.items.map((p: any) => p.id)).toEqual([target.id])

    const all = (await api().get(`/api/v1/boards/${board}/posts`)).body.items
    const favourite = all[all.length - 1]
    await api().post(`/api/v1/posts/${favourite.id}/votes`, { email: 'v1@example.com' })
    await api().post(`/api/v1/posts/${favourite.id}/votes`, { email: 'v2@example.com' })
    expect((await api().get(`/api/v1/boards/${board}/posts?sort=top`)).body.items[0].id).toBe(favourite.id)
    expect((await api().get(`/api/v1/boards/${board}/posts?sort=trending`)).body.items[0].id).toBe(favourite.id)
    const newest = (await api().get(`/api/v1/boards/${board}/posts?sort=new`)).body.items
    expect(newest[0].created_at >= newest[newest.length - 1].created_at).toBe(true)
  })

  test('times are the stored ones in ISO form, to the millisecond, in lists and reads', async () => {
    const res = await api().post(`/api/v1/boards/${board}/posts`, { title: 'Timestamps' })
    // Microseconds past the millisecond are dropped as a Date drops them; a whole second gets ".000".
    await h.db.update(posts).set({ createdAt: sql`'2026-03-04 05:06:07.891999+00'::timestamptz`, updatedAt: sql`'2026-03-04 05:06:08+00'::timestamptz` }).where(eq(posts.id, res.body.id))
    const expected = { created_at: '2026-03-04T05:06:07.891Z', updated_at: '2026-03-04T05:06:08.000Z' }
    expect((await api().get(`/api/v1/posts/${res.body.id}`)).body).toMatchObject(expected)
    const listed = (await api().get(`/api/v1/boards/${board}/posts?sort=new&per_page=50`)).body.items.find((p: any) => p.id === res.body.id)
    expect(listed).toMatchObject(expected)
    await h.db.delete(posts).where(eq(posts.id, res.body.id))
  })

  test('an out-of-range page names its parameter', async () => {
    for (const [query, name] of [['page=0', 'page'], ['per_page=0', 'per_page'], ['per_page=101', 'per_page'], ['limit=500', 'limit']]) {
      const res = await api().get(`/api/v1/boards/${board}/posts?${query}`)
      expect(res.body.detail[0].loc).toEqual(['query', name])
    }
  })

  test('out-of-range paging and unknown filters are 422, never clamped', async () => {
    for (const query of ['page=0', 'per_page=0', 'per_page=101', 'limit=500', 'page=abc', 'sort=hot', 'per_page=10&limit=20', 'status=nope', 'label=nope', 'unknown=1']) {
      const res = await api().get(`/api/v1/boards/${board}/posts?${query}`)
      expect(`${query} ${res.status} ${res.body.code}`).toBe(`${query} 422 VALIDATION_ERROR`)
    }
  })
})

describe('posts: errors', () => {
  test('missing title, oversize title, unknown fields, unknown label or status: 422 and nothing written', async () => {
    const before = (await h.db.select().from(posts)).length
    const eventsBefore = (await h.db.select().from(events)).length
    for (const body of [{}, { title: '' }, { title: 'x'.repeat(201) }, { title: 7 }, { title: 'x', votes: 100 }, { title: 'x', labels: ['missing'] }, { title: 'x', labels: ['ux', 'missing'] }, { title: 'x', labels: ['ux'], status: 'Nope' }, { title: 'x', status: 'Nope' }, { title: 'x', email: 'bad' }]) {
      const res = await api().post('/api/v1/boards/ideas/posts', body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
    }
    expect((await h.db.select().from(posts)).length).toBe(before)
    expect((await h.db.select().from(events)).length).toBe(eventsBefore)
  })

  test('unknown board, post, end user: 404', async () => {
    expect((await api().post('/api/v1/boards/nope/posts', { title: 'x' })).status).toBe(404)
    expect((await api().get('/api/v1/boards/nope/posts')).status).toBe(404)
    expect((await api().get('/api/v1/posts/post_doesnotexist')).status).toBe(404)
    expect((await api().patch('/api/v1/posts/post_doesnotexist', { title: 'x' })).status).toBe(404)
    expect((await api().post('/api/v1/boards/ideas/posts', { title: 'x', end_user_id: 'eu_nobody' })).status).toBe(404)
    expect((await api().patch('/api/v1/posts/post_x', {})).status).toBe(422)
  })
})

describe('posts: security', () => {
  test("another workspace's posts and boards are 404 for keys and members", async () => {
    const other = await workspaceFixture(h)
    await boardFixture(h, other.id, 'ideas')
    const otherKey = await other.key()
    const mine = (await api().post('/api/v1/boards/ideas/posts', { title: 'Private to ws' })).body
    const theirs = h.client({ authorization: `Bearer ${otherKey}` })
    expect((await theirs.get(`/api/v1/posts/${mine.id}`)).status).toBe(404)
    expect((await theirs.patch(`/api/v1/posts/${mine.id}`, { title: 'hijack' })).status).toBe(404)
    expect((await theirs.delete(`/api/v1/posts/${mine.id}`)).status).toBe(404)
    expect((await other.owner.get(`/api/v1/posts/${mine.id}`, { headers: { 'x-workspace': ws.slug } })).status).toBe(404)
    expect((await other.owner.get(`/api/v1/posts/${mine.id}`, { headers: { 'x-workspace': other.slug } })).status).toBe(404)
    expect((await api().get(`/api/v1/posts/${mine.id}`)).body.title).toBe('Private to ws')
  })

  test('scopes: read-only keys cannot write; a session needs X-Workspace', async () => {
    const readOnly = await ws.key(['posts:read'])
    const res = await h.client({ authorization: `Bearer ${readOnly}` }).post('/api/v1/boards/ideas/posts', { title: 'nope' })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'posts:write' })
    const noHeader = await ws.owner.get('/api/v1/boards/ideas/posts')
    expect(noHeader.status).toBe(422)
    expect(noHeader.body.detail[0].loc).toEqual(['header', 'x-workspace'])
    expect((await h.client().get('/api/v1/boards/ideas/posts')).status).toBe(401)
  })
})
