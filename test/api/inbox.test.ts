import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { events, idempotencyKeys, postLabels, posts, savedViews } from '../../server/db/schema/index.ts'
import { addMember, boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
let readKey: TestClient
let owner: TestClient
let member: TestClient
let memberId: string
let foreignPost: string
const ids: Record<string, string> = {}
const base = () => `/api/v1/workspaces/${ws.slug}`
const session = (client: TestClient) => ({
  get: (path: string) => client.get(path, { headers: { 'x-workspace': ws.slug } }),
  post: (path: string, body: unknown, headers: Record<string, string> = {}) => client.post(path, body, { headers: { 'x-workspace': ws.slug, ...headers } }),
})

beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'bugs', true)
  await boardFixture(h, other.id, 'ideas')
  await labelFixture(h, ws.id, 'ui')
  await labelFixture(h, ws.id, 'mobile')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  readKey = h.client({ authorization: `Bearer ${await ws.key(['posts:read'])}` })
  owner = ws.owner
  const added = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
  member = added.client
  memberId = added.userId
  const make = async (name: string, board: string, body: Record<string, unknown>) => {
    const res = await api.post(`/api/v1/boards/${board}/posts`, body)
    if (res.status !== 201) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body)}`)
    ids[name] = res.body.id
  }
  await make('alpha', 'ideas', { title: 'Alpha dark mode', email: 'a@customer.example', labels: ['ui'] })
  await make('beta', 'ideas', { title: 'Beta export', status: 'Planned' })
  await make('gamma', 'bugs', { title: 'Gamma crash', email: 'g@customer.example' })
  await make('delta', 'ideas', { title: 'Delta dark theme', email: 'd@customer.example' })
  await make('epsilon', 'ideas', { title: 'Epsilon', email: 'e@customer.example' })
  await api.post(`/api/v1/posts/${ids.alpha}/votes`, { email: 'v1@customer.example' })
  await api.post(`/api/v1/posts/${ids.alpha}/votes`, { email: 'v2@customer.example' })
  await api.post(`/api/v1/posts/${ids.delta}/votes`, { email: 'v1@customer.example' })
  await api.post(`/api/v1/posts/${ids.beta}/comments`, { body: 'We are on it' })
  await api.patch(`/api/v1/posts/${ids.gamma}`, { owner_user_id: memberId })
  // Epsilon has been quiet for 10 days, and is the oldest.
  await h.db.update(posts).set({ createdAt: sql`now() - interval '10 days'`, updatedAt: sql`now() - interval '10 days'` }).where(eq(posts.id, ids.epsilon!))
  const foreign = await h.client({ authorization: `Bearer ${await other.key()}` }).post('/api/v1/boards/ideas/posts', { title: 'Foreign' })
  foreignPost = foreign.body.id
}, 180_000)
afterAll(() => h.close())

const titles = (res: { body: { items: { title: string }[] } }) => res.body.items.map((post) => post.title)

describe('GET /workspaces/{slug}/inbox', () => {
  test('every board, private ones too, newest first, with the posts envelope', async () => {
    const res = await api.get(`${base()}/inbox`)
    expect(res.status).toBe(200)
    expect(titles(res)).toEqual(['Delta dark theme', 'Gamma crash', 'Beta export', 'Alpha dark mode', 'Epsilon'])
    expect(res.body).toMatchObject({ page: 1, per_page: 20, total: 5, total_pages: 1 })
    expect(res.body.items[0].unread).toBeNull()
  })

  test('filters: board, status, label, owner, unanswered, stale_days, verified, q', async () => {
    const list = async (query: string) => titles(await api.get(`${base()}/inbox?${query}`))
    expect(await list('board=bugs')).toEqual(['Gamma crash'])
    expect(await list('status=planned')).toEqual(['Beta export'])
    expect(await list('label=ui')).toEqual(['Alpha dark mode'])
    expect(await list(`owner=${memberId}`)).toEqual(['Gamma crash'])
    expect(await list('owner=unassigned')).toEqual(['Delta dark theme', 'Beta export', 'Alpha dark mode', 'Epsilon'])
    expect(await list('unanswered=false')).toEqual(['Beta export'])
    expect(await list('stale_days=5')).toEqual(['Epsilon'])
    expect(await list('q=dark')).toEqual(['Delta dark theme', 'Alpha dark mode'])
    expect(await list('verified=false')).toEqual([])
    expect(await list('board=ideas&status=open&sort=top')).toEqual(['Alpha dark mode', 'Delta dark theme', 'Epsilon'])
  })

  test('sorts: top, trending, oldest_unanswered', async () => {
    expect(titles(await api.get(`${base()}/inbox?sort=top`)).slice(0, 2)).toEqual(['Alpha dark mode', 'Delta dark theme'])
    expect(titles(await api.get(`${base()}/inbox?sort=trending`)).slice(0, 2)).toEqual(['Alpha dark mode', 'Delta dark theme'])
    expect(titles(await api.get(`${base()}/inbox?sort=oldest_unanswered`))).toEqual(['Epsilon', 'Alpha dark mode', 'Gamma crash', 'Delta dark theme'])
  })

  test('pages: per_page and page walk the list without overlap, totals exact or bounded', async () => {
    const first = await api.get(`${base()}/inbox?per_page=2`)
    const second = await api.get(`${base()}/inbox?per_page=2&page=2`)
    const third = await api.get(`${base()}/inbox?per_page=2&page=3`)
    expect([...titles(first), ...titles(second), ...titles(third)]).toEqual(['Delta dark theme', 'Gamma crash', 'Beta export', 'Alpha dark mode', 'Epsilon'])
    expect(first.body).toMatchObject({ total: 5, total_pages: 3 })
    const filtered = await api.get(`${base()}/inbox?per_page=1&page=2&unanswered=true`)
    expect(filtered.body).toMatchObject({ total: 4, total_pages: 4 })
    expect((await api.get(`${base()}/inbox?per_page=2&page=9&q=dark`)).body).toMatchObject({ items: [], total: 2 })
  })

  test('past 200 posts: the total is exact with paging and board/status only, from one statement; bounded with other filters', async () => {
    const big = await workspaceFixture(h)
    const board = await boardFixture(h, big.id, 'ideas')
    await h.db.execute(sql`insert into posts (id, workspace_id, board_id, title, body, status_id, author_name, created_at)
      select 'post_total' || lpad(n::text, 16, '0'), ${big.id}, ${board.id}, 'Idea number ' || n, '', (select id from statuses where workspace_id = ${big.id} and is_default), 'Someone', now() - (n || ' minutes')::interval
      from generate_series(1, 250) n`)
    const key = h.client({ authorization: `Bearer ${await big.key(['posts:read'])}` })
    const at = `/api/v1/workspaces/${big.slug}/inbox`
    // `per_page` and `page` are paging, not filters: the maintained counts still give the exact total.
    const first = await key.get(`${at}?per_page=50`)
    expect(first.body).toMatchObject({ total: 250, total_pages: 5, per_page: 50 })
    expect(first.body.items).toHaveLength(50)
    expect(first.body.items[0].title).toBe('Idea number 1')
    const last = await key.get(`${at}?per_page=50&page=5&board=ideas`)
    expect(last.body).toMatchObject({ total: 250, total_pages: 5 })
    expect(last.body.items.at(-1).title).toBe('Idea number 250')
    // A page past the end still carries the exact total (the statement answers one row with no post).
    h.queries.length = 0
    expect((await key.get(`${at}?per_page=50&page=9&status=Open`)).body).toMatchObject({ items: [], total: 250, total_pages: 5 })
    expect(h.queries.filter((query) => /board_post_counts/.test(query))).toHaveLength(1)
    // q is not a maintained count: bounded to 200 matches past the start of the page, as documented.
    expect((await key.get(`${at}?per_page=50&q=idea`)).body).toMatchObject({ total: 200 })
    const page = await big.owner.get(`/dashboard/${big.slug}`)
    expect(page.status).toBe(200)
    expect(page.body).toContain('<p id="inbox-count">250 posts.</p>')
  })

  test('a member sees unread markers; opening (read state) clears them; a change makes it unread again', async () => {
    const m = session(member)
    const before = await m.get(`${base()}/inbox`)
    expect(before.status).toBe(200)
    expect(before.body.items.every((post: any) => post.unread === true)).toBe(true)
    const marked = await m.post(`${base()}/inbox/read`, { post_ids: [ids.alpha, ids.beta], read: true })
    expect(marked.status).toBe(200)
    expect(marked.body.items).toEqual([{ post_id: ids.alpha, unread: false }, { post_id: ids.beta, unread: false }])
    const after = await m.get(`${base()}/inbox`)
    expect(after.body.items.filter((post: any) => !post.unread).map((post: any) => post.id).sort()).toEqual([ids.alpha, ids.beta].sort())
    // The owner's read state is their own.
    expect((await session(owner).get(`${base()}/inbox`)).body.items.every((post: any) => post.unread)).toBe(true)
    await h.db.update(posts).set({ updatedAt: sql`now() + interval '1 second'` }).where(eq(posts.id, ids.alpha!))
    const changed = await m.get(`${base()}/inbox?label=ui`)
    expect(changed.body.items[0].unread).toBe(true)
    expect((await m.post(`${base()}/inbox/read`, { post_ids: [ids.beta], read: false })).body.items).toEqual([{ post_id: ids.beta, unread: true }])
    expect((await session(member).get(`${base()}/inbox?owner=me`)).body.items.map((p: any) => p.title)).toEqual(['Gamma crash'])
  })

  test('4xx: unknown board, status, label or owner are 422; bad values 422; owner=me with a key 422', async () => {
    for (const [query, field] of [['board=nope', 'board'], ['status=Nope', 'status'], ['label=nope', 'label'], ['owner=usr_nobody', 'owner'], ['owner=me', 'owner'], [`owner=${other.ownerId}`, 'owner']] as const) {
      const res = await api.get(`${base()}/inbox?${query}`)
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['query', field])
    }
    for (const query of ['sort=hot', 'per_page=101', 'stale_days=0', 'unanswered=yes', 'extra=1']) expect((await api.get(`${base()}/inbox?${query}`)).status).toBe(422)
  })

  test('security: scope, another workspace, no credential, read state of foreign posts, keys have none', async () => {
    expect((await h.client({ authorization: `Bearer ${await ws.key(['boards:read'])}` }).get(`${base()}/inbox`)).body.code).toBe('INSUFFICIENT_SCOPE')
    expect((await api.get(`/api/v1/workspaces/${other.slug}/inbox`)).status).toBe(404)
    expect((await h.client().get(`${base()}/inbox`)).status).toBe(401)
    expect((await other.owner.get(`${base()}/inbox`, { headers: { 'x-workspace': ws.slug } })).status).toBe(404)
    const foreign = await session(member).post(`${base()}/inbox/read`, { post_ids: [ids.alpha, foreignPost], read: true })
    expect(foreign.status).toBe(404)
    expect((await api.post(`${base()}/inbox/read`, { post_ids: [ids.alpha], read: true })).body.code).toBe('FORBIDDEN')
    expect((await readKey.get(`${base()}/inbox`)).status).toBe(200)
  })
})

describe('saved views', () => {
  test('a member saves private and shared views; others see only the shared ones', async () => {
    const m = session(member)
    const mine = await m.post(`${base()}/views`, { name: 'My bugs', filters: { board: 'bugs', owner: 'me' } })
    expect(mine.status).toBe(201)
    expect(mine.body).toMatchObject({ name: 'My bugs', shared: false, owner_user_id: memberId, filters: { board: 'bugs', owner: 'me' } })
    expect(mine.body.id).toMatch(/^view_/)
    const shared = await m.post(`${base()}/views`, { name: 'Unanswered', filters: { unanswered: 'true', sort: 'oldest_unanswered' }, shared: true })
    expect(shared.status).toBe(201)
    expect((await m.get(`${base()}/views`)).body.items.map((v: any) => v.name)).toEqual(['My bugs', 'Unanswered'])
    expect((await session(owner).get(`${base()}/views`)).body.items.map((v: any) => v.name)).toEqual(['Unanswered'])
    expect((await api.get(`${base()}/views`)).body.items.map((v: any) => v.name)).toEqual(['Unanswered'])
    expect((await session(owner).get(`${base()}/views/${mine.body.id}`)).status).toBe(404)
    // Only the maker changes a view; an admin or the owner may tidy up a shared one.
    const rename = await member.call('PATCH', `${base()}/views/${mine.body.id}`, { body: { name: 'Bugs of mine' }, headers: { 'x-workspace': ws.slug } })
    expect(rename.status).toBe(200)
    expect(rename.body.name).toBe('Bugs of mine')
    const keyEdit = await api.call('PATCH', `${base()}/views/${shared.body.id}`, { body: { name: 'Hijack' } })
    expect(keyEdit.status).toBe(403)
    const ownerEdit = await owner.call('PATCH', `${base()}/views/${shared.body.id}`, { body: { name: 'Oldest unanswered' }, headers: { 'x-workspace': ws.slug } })
    expect(ownerEdit.status).toBe(200)
    expect((await owner.call('DELETE', `${base()}/views/${mine.body.id}`, { headers: { 'x-workspace': ws.slug } })).status).toBe(404)
    expect((await member.call('DELETE', `${base()}/views/${mine.body.id}`, { headers: { 'x-workspace': ws.slug } })).status).toBe(204)
    expect(await h.db.select().from(savedViews).where(eq(savedViews.id, mine.body.id))).toEqual([])
  })

  test('a key makes shared views only; filters are checked like the inbox query', async () => {
    const made = await api.post(`${base()}/views`, { name: 'Top ideas', filters: { board: 'ideas', sort: 'top' } })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({ shared: true, owner_user_id: null })
    expect((await api.post(`${base()}/views`, { name: 'Private', shared: false })).status).toBe(422)
    const unknown = await api.post(`${base()}/views`, { name: 'Bad', filters: { board: 'nope' } })
    expect(unknown.status).toBe(422)
    expect(unknown.body.detail[0].loc).toEqual(['body.filters', 'board'])
    expect((await api.post(`${base()}/views`, { name: 'Bad', filters: { colour: 'red' } })).status).toBe(422)
    expect((await api.post(`${base()}/views`, { name: '' })).status).toBe(422)
    expect((await readKey.post(`${base()}/views`, { name: 'No scope' })).body.code).toBe('INSUFFICIENT_SCOPE')
    expect((await h.client({ authorization: `Bearer ${await other.key()}` }).get(`${base()}/views/${made.body.id}`)).status).toBe(404)
    expect((await h.client({ authorization: `Bearer ${await other.key()}` }).get(`/api/v1/workspaces/${other.slug}/views/${made.body.id}`)).status).toBe(404)
  })
})

describe('POST /workspaces/{slug}/posts/bulk', () => {
  const bulk = (body: unknown, headers: Record<string, string> = {}) => api.post(`${base()}/posts/bulk`, body, { headers })
  const eventCount = async () => (await h.db.select({ n: sql<number>`count(*)::int` }).from(events).where(eq(events.workspaceId, ws.id)))[0]!.n

  test('labels, status with a message and owner on several posts; one result each; events as single changes', async () => {
    const before = await eventCount()
    const res = await bulk({ post_ids: [ids.alpha, ids.delta, ids.epsilon], add_labels: ['mobile'], remove_labels: ['ui'], status: 'Planned', status_message: 'Coming in Q1', owner_user_id: memberId })
    expect(res.status).toBe(200)
    expect(res.body.results).toEqual([ids.alpha, ids.delta, ids.epsilon].map((post_id) => ({ post_id, ok: true, error: null })))
    const rows = await h.db.select().from(posts).where(inArray(posts.id, [ids.alpha!, ids.delta!, ids.epsilon!]))
    expect(rows.every((row) => row.ownerUserId === memberId)).toBe(true)
    const labelRows = await h.db.select().from(postLabels).where(inArray(postLabels.postId, [ids.alpha!, ids.delta!, ids.epsilon!]))
    expect(labelRows).toHaveLength(3)
    const changed = await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'status.changed')))
    expect(changed.filter((event) => (event.data as any).message === 'Coming in Q1')).toHaveLength(3)
    expect(await eventCount()).toBe(before + 6)
  })

  test('all or nothing: a foreign or unknown post fails the call with every result, nothing applied', async () => {
    const before = await eventCount()
    const res = await bulk({ post_ids: [ids.beta, foreignPost, 'post_nope'], status: 'Closed' })
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('VALIDATION_ERROR')
    expect(res.body.results).toEqual([
      { post_id: ids.beta, ok: true, error: null },
      { post_id: foreignPost, ok: false, error: { code: 'NOT_FOUND', message: 'Post not found' } },
      { post_id: 'post_nope', ok: false, error: { code: 'NOT_FOUND', message: 'Post not found' } },
    ])
    expect(res.body.detail.map((issue: any) => issue.loc)).toEqual([['body', 'post_ids', 1], ['body', 'post_ids', 2]])
    const [beta] = await h.db.select().from(posts).where(eq(posts.id, ids.beta!))
    expect((await api.get(`/api/v1/posts/${beta!.id}`)).body.status).toBe('Planned')
    expect(await eventCount()).toBe(before)
  })

  test('Idempotency-Key: a replay answers the first response and records no second event', async () => {
    const body = { post_ids: [ids.beta, ids.gamma], add_labels: ['ui'] }
    const first = await bulk(body, { 'idempotency-key': 'bulk-label-1' })
    expect(first.status).toBe(200)
    const after = await eventCount()
    const replay = await bulk(body, { 'idempotency-key': 'bulk-label-1' })
    expect(replay.status).toBe(200)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body).toEqual(first.body)
    expect(await eventCount()).toBe(after)
    expect((await bulk({ ...body, add_labels: ['mobile'] }, { 'idempotency-key': 'bulk-label-1' })).body.code).toBe('IDEMPOTENCY_MISMATCH')
  })

  test('merge into a target and delete, each alone', async () => {
    const dupes = await Promise.all(['Dup one', 'Dup two'].map(async (title) => (await api.post('/api/v1/boards/ideas/posts', { title, email: `${title.replace(' ', '')}@customer.example` })).body.id))
    const merged = await bulk({ post_ids: dupes, merge_into_post_id: ids.alpha })
    expect(merged.status).toBe(200)
    const rows = await h.db.select().from(posts).where(inArray(posts.id, dupes))
    expect(rows.map((row) => row.mergedIntoId)).toEqual([ids.alpha!, ids.alpha!])
    expect((await bulk({ post_ids: dupes, merge_into_post_id: ids.alpha })).status).toBe(422)
    const doomed = (await api.post('/api/v1/boards/ideas/posts', { title: 'Doomed' })).body.id
    expect((await bulk({ post_ids: [doomed], delete: true })).status).toBe(200)
    expect(await h.db.select().from(posts).where(eq(posts.id, doomed))).toEqual([])
  })

  test('4xx: nothing to do, mixed merge, message without status, too many, target among the posts, unknown names', async () => {
    const cases: [unknown, string][] = [
      [{ post_ids: [ids.beta] }, 'body'],
      [{ post_ids: [ids.beta], delete: true, status: 'Open' }, 'delete'],
      [{ post_ids: [ids.beta], merge_into_post_id: ids.alpha, add_labels: ['ui'] }, 'merge_into_post_id'],
      [{ post_ids: [ids.beta], status_message: 'Hi' }, 'status_message'],
      [{ post_ids: [ids.beta, ids.alpha], merge_into_post_id: ids.alpha }, 'merge_into_post_id'],
      [{ post_ids: [ids.beta], merge_into_post_id: foreignPost }, 'merge_into_post_id'],
      [{ post_ids: [ids.beta], status: 'Nope' }, 'status'],
      [{ post_ids: [ids.beta], add_labels: ['nope'] }, 'add_labels'],
      [{ post_ids: [ids.beta], board_slug: 'nope' }, 'board_slug'],
    ]
    for (const [body, field] of cases) {
      const res = await bulk(body)
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc.at(-1)).toBe(field)
    }
    expect((await bulk({ post_ids: Array.from({ length: 501 }, (_, i) => `post_${i}`), status: 'Open' })).status).toBe(422)
    expect((await bulk({ post_ids: [], status: 'Open' })).status).toBe(422)
    expect((await bulk({ post_ids: [ids.beta, ids.beta], status: 'Open' })).status).toBe(422)
    expect((await bulk({ post_ids: [ids.beta], delete: false })).status).toBe(422)
  })

  test('security: read-only key, other workspace, signed-out; a member may bulk-triage', async () => {
    expect((await readKey.post(`${base()}/posts/bulk`, { post_ids: [ids.beta], status: 'Open' })).body.code).toBe('INSUFFICIENT_SCOPE')
    expect((await api.post(`/api/v1/workspaces/${other.slug}/posts/bulk`, { post_ids: [ids.beta], status: 'Open' })).status).toBe(404)
    expect((await h.client().post(`${base()}/posts/bulk`, { post_ids: [ids.beta], status: 'Open' })).status).toBe(401)
    expect((await other.owner.post(`${base()}/posts/bulk`, { post_ids: [ids.beta], status: 'Open' })).status).toBe(404)
    const res = await session(member).post(`${base()}/posts/bulk`, { post_ids: [ids.beta], status: 'In progress' })
    expect(res.status).toBe(200)
    expect((await api.get(`/api/v1/posts/${ids.beta}`)).body.status).toBe('In progress')
  })
})

describe('SDK: chorus.inbox and chorus.views', () => {
  test('list walks pages, bulk changes, views round-trip, a failed bulk throws with the results', async () => {
    const { Chorus, ValidationError } = await import('../../sdk/src/index.ts')
    const chorus = new Chorus({ apiKey: await ws.key(), baseUrl: 'http://localhost:3000/api/v1', workspace: ws.slug, maxRetries: 0, fetch: (input, init) => h.app.handle(new Request(input, init)) })
    const seen: string[] = []
    for await (const post of chorus.inbox.list({ per_page: 2, board: 'ideas' })) seen.push(post.id)
    const listed = await api.get(`${base()}/inbox?board=ideas&per_page=100`)
    expect(seen).toEqual(listed.body.items.map((post: any) => post.id))
    const done = await chorus.inbox.bulk({ post_ids: seen.slice(0, 2), add_labels: ['mobile'] })
    expect(done.results.every((result) => result.ok)).toBe(true)
    const failure = await chorus.inbox.bulk({ post_ids: [seen[0]!, foreignPost], status: 'Open' }, { idempotencyKey: 'sdk-failed-bulk' }).catch((error) => error)
    expect(failure).toBeInstanceOf(ValidationError)
    expect(failure.status).toBe(422)
    // A failed request gives its Idempotency-Key back after the response: wait for that, so a retry may use it.
    for (let i = 0; i < 100 && (await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'sdk-failed-bulk'))).length > 0; i++) await Bun.sleep(20)
    expect(await h.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'sdk-failed-bulk'))).toEqual([])
    const view = await chorus.views.create({ name: 'SDK view', filters: { label: 'mobile' } })
    expect((await chorus.views.get(view.id)).name).toBe('SDK view')
    expect((await chorus.views.update(view.id, { name: 'Renamed' })).name).toBe('Renamed')
    expect((await chorus.views.list()).items.some((item) => item.id === view.id)).toBe(true)
    await chorus.views.delete(view.id)
  })
})
