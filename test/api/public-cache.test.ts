// The public cache (server/lib/public-cache.ts) in one process, over HTTP: a repeated public read costs no
// statement, every write that changes what the pages show is in the next read, nothing personal is ever kept
// or served to someone else, and the bounds hold against cache-busting. On PGlite the engine announces changes
// itself, before the writing statement returns, so the next read sees a write; on PostgreSQL this test listens
// as a server's background worker would, and a write is seen once its notification arrives (milliseconds:
// `seen` waits up to 100 ms there). The two-process cases are in test/api/processes.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { publicSlot } from '../../server/db/changes.ts'
import { endUsers } from '../../server/db/schema/index.ts'
import { publicAnswers } from '../../server/modules/public/cache.ts'
import { configureHs256, customerToken, identify, nextIp } from '../helpers/end-users.ts'
import { boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
let otherApi: TestClient
let anon: TestClient
let secret: string
const ENTRIES = 40

const list = () => `/api/v1/public/${ws.slug}/boards/ideas/posts?sort=top`
const page = () => `/portal/${ws.slug}/boards/ideas`

beforeAll(async () => {
  h = await startHarness({ CACHE_ENTRIES: String(ENTRIES), PUBLIC_CACHE_MB: '1', TRUST_PROXY: 'true' })
  if (h.database.driver === 'postgres') await h.database.listenForChanges(h.ctx.changes.changed, h.ctx.changes.setLive)
  ws = await workspaceFixture(h)
  do other = await workspaceFixture(h)
  while (publicSlot(other.id) === publicSlot(ws.id))
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, other.id, 'ideas')
  await labelFixture(h, ws.id, 'ux')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  otherApi = h.client({ authorization: `Bearer ${await other.key()}` })
  anon = h.client()
  secret = await configureHs256(ws.owner, ws.slug)
  for (const title of ['Dark mode', 'CSV export']) expect((await api.post('/api/v1/boards/ideas/posts', { title, email: 'ada@customer.example' })).status).toBe(201)
}, 60_000)
afterAll(() => h.close())

/** Statements the app sent while `read` ran. */
async function statementsOf(read: () => Promise<unknown>) {
  const before = h.queries.length
  await read()
  return h.queries.slice(before)
}

/**
 * Reads once to fill the cache, then proves the next read is served without a statement. On PostgreSQL the
 * notification of a write just before may still be on its way: an answer loaded while it arrives is not kept
 * (it may predate the change), so there the fill is tried again for up to a second.
 */
async function cached(path: string) {
  const deadline = Date.now() + (h.database.driver === 'pglite' ? 0 : 1000)
  for (;;) {
    const first = await anon.get(path)
    expect(first.status).toBe(200)
    const statements = await statementsOf(() => anon.get(path))
    if (!statements.length) return first
    if (Date.now() > deadline) expect(statements).toEqual([])
    await Bun.sleep(20)
  }
}

/**
 * The first read of `path` whose body passes `check`: on PGlite the very next one (changes are heard before
 * the write returns), on PostgreSQL within 100 ms (the notification's trip to the listening connection).
 */
async function seen(path: string, check: (body: any) => boolean) {
  const deadline = Date.now() + (h.database.driver === 'pglite' ? 0 : 100)
  for (;;) {
    const res = await anon.get(path)
    if (check(res.body)) return res
    if (Date.now() > deadline) throw new Error(`${path} did not show the change: ${JSON.stringify(res.body).slice(0, 300)}`)
    await Bun.sleep(5)
  }
}
const titles = (body: any): string[] => body.items.map((post: { title: string }) => post.title)
const postIn = (body: any, id: string) => body.items.find((post: any) => post.id === id)

describe('happy', () => {
  test('the widget\'s list, the board page and the public workspace: the second read sends no statement, same bytes and ETag', async () => {
    for (const path of [list(), page(), `/api/v1/public/${ws.slug}`]) {
      const first = await cached(path)
      const again = await anon.get(path)
      expect(again.headers.get('etag')).toBe(first.headers.get('etag'))
      expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body))
      expect(again.headers.get('cache-control')).toBe('public, max-age=30, stale-while-revalidate=60')
    }
  })

  test('each write that changes the pages is in the next read: post, vote, comment, status, label, board, branding, merge, delete', async () => {
    await cached(list())
    await cached(page())
    const created = await api.post('/api/v1/boards/ideas/posts', { title: 'Keyboard shortcuts', email: 'grace@customer.example' })
    await seen(list(), (body) => titles(body).includes('Keyboard shortcuts'))
    await seen(page(), (body) => body.includes('Keyboard shortcuts'))
    const id = created.body.id as string

    await api.post(`/api/v1/posts/${id}/votes`, { email: 'v1@customer.example' })
    await seen(list(), (body) => postIn(body, id).votes === 1)
    await api.post(`/api/v1/posts/${id}/comments`, { body: 'Yes please', email: 'carol@customer.example' })
    await seen(list(), (body) => postIn(body, id).comment_count === 1)
    await api.patch(`/api/v1/posts/${id}`, { status: 'Planned', labels: ['ux'] })
    await seen(list(), (body) => postIn(body, id).status === 'Planned' && postIn(body, id).labels.join() === 'ux')
    await seen(page(), (body) => /k-planned">Planned/.test(body))

    await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/boards/ideas`, { name: 'Feature ideas' })
    await seen(page(), (body) => body.includes('<h1>Feature ideas</h1>'))
    await seen(`/api/v1/public/${ws.slug}`, (body) => body.boards[0].name === 'Feature ideas')
    await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { brand_color: '#0f766e' } })
    await seen(page(), (body) => body.includes('--accent:#0f766e'))
    await seen(`/api/v1/public/${ws.slug}`, (body) => body.workspace.settings.brand_color === '#0f766e')

    const twin = await api.post('/api/v1/boards/ideas/posts', { title: 'Shortcut keys' })
    await seen(list(), (body) => titles(body).includes('Shortcut keys'))
    await api.post(`/api/v1/posts/${twin.body.id}/merge`, { into_post_id: id })
    await seen(list(), (body) => !titles(body).includes('Shortcut keys'))
    expect((await api.delete(`/api/v1/posts/${id}`)).status).toBe(204)
    await seen(list(), (body) => !titles(body).includes('Keyboard shortcuts'))
    await seen(page(), (body) => !body.includes('Keyboard shortcuts'))
  })

  test('an author who changes their name is renamed in the cached list (an end user by identify)', async () => {
    const token = (name: string) => customerToken(secret, { claims: { sub: 'cust-9', email: 'nine@customer.example', name } })
    const session = (await identify(h, ws.slug, await token('Nina'))).body.session_token as string
    const written = await h.client({ authorization: `Bearer ${session}` }).post(`/api/v1/public/${ws.slug}/boards/ideas/posts`, { title: 'Offline mode' })
    expect(written.status).toBe(201)
    const authorIs = (name: string) => (body: any) => body.items.find((post: any) => post.title === 'Offline mode')?.author.name === name
    await seen(list(), authorIs('Nina'))
    await cached(list())
    expect((await identify(h, ws.slug, await token('Nina Simone'))).status).toBe(200)
    await seen(list(), authorIs('Nina Simone'))
  })

  test('a write in another workspace leaves this one\'s cached answers in place', async () => {
    // Two workspaces whose ids share a counter slot (1 in 256) drop each other's pages: this test needs two that do not.
    expect(publicSlot(other.id)).not.toBe(publicSlot(ws.id))
    // On a loaded PostgreSQL an earlier test's notification can still arrive late and rightly drop the page:
    // three tries there, each a fresh fill and a write elsewhere. A write that dropped it would fail all three.
    for (let attempt = 1; ; attempt++) {
      await cached(list())
      await otherApi.post('/api/v1/boards/ideas/posts', { title: `Elsewhere ${attempt}` })
      await seen(`/api/v1/public/${other.slug}/boards/ideas/posts`, (body) => titles(body).includes(`Elsewhere ${attempt}`))
      const statements = await statementsOf(() => anon.get(list()))
      if (!statements.length) break
      if (h.database.driver === 'pglite' || attempt === 3) expect(statements).toEqual([])
    }
  })

  test('If-None-Match of a cached answer is an empty 304; HEAD carries the same ETag', async () => {
    for (const path of [list(), page()]) {
      const first = await cached(path)
      const etag = first.headers.get('etag')!
      const revalidated = await anon.get(path, { headers: { 'if-none-match': etag } })
      expect([revalidated.status, revalidated.body]).toEqual([304, null])
      const head = await anon.call('HEAD', path)
      expect([head.status, head.headers.get('etag')]).toEqual([200, etag])
    }
  })
})

describe('security', () => {
  test('a signed-in visitor gets their own votes over the cached list, and no one else ever sees them', async () => {
    await cached(list())
    const session = (await identify(h, ws.slug, await customerToken(secret, { claims: { sub: 'cust-1', email: 'one@customer.example', name: 'One' } }))).body.session_token as string
    const mine = h.client({ authorization: `Bearer ${session}` })
    const target = (await anon.get(list())).body.items[0].id as string
    expect((await mine.post(`/api/v1/public/${ws.slug}/posts/${target}/votes`, {})).status).toBeLessThan(300)
    const personal = await mine.get(list())
    expect(personal.headers.get('cache-control')).toBe('private, no-cache')
    expect(personal.body.items.find((post: any) => post.id === target).voted).toBe(true)
    expect(personal.body.items.every((post: any) => typeof post.voted === 'boolean')).toBe(true)
    const shared = await anon.get(list())
    expect(shared.body.items.some((post: any) => 'voted' in post)).toBe(false)
    // An invalid token reads the anonymous answer, privately.
    const bogus = await h.client({ authorization: 'Bearer nonsense' }).get(list())
    expect([bogus.headers.get('cache-control'), bogus.body.items.some((post: any) => 'voted' in post)]).toEqual(['private, no-cache', false])
  })

  test('a signed-in portal visitor\'s page (name, form tokens) is never kept nor served to anyone else; notices are never kept', async () => {
    await cached(page())
    const who = h.client({ 'x-forwarded-for': nextIp() })
    const token = await customerToken(secret, { claims: { sub: 'cust-2', email: 'two@customer.example', name: 'Private Person' } })
    expect((await who.get(`${page()}?sso_token=${token}`)).status).toBe(303)
    const theirs = await who.get(page())
    expect(theirs.body).toContain('Signed in as Private Person')
    expect(theirs.body).toMatch(/name="csrf"/)
    expect(theirs.headers.get('cache-control')).toBe('private, no-store')
    const everyone = await anon.get(page())
    expect(everyone.body).not.toContain('Private Person')
    expect(everyone.body).not.toMatch(/name="csrf"/)
    // A notice after a write is for the one who wrote: not kept, and the next plain read has none.
    expect((await anon.get(`${page()}?done=posted`)).body).toContain('Your idea is posted')
    expect((await anon.get(page())).body).not.toContain('Your idea is posted')
  })

  test('a board turned private after caching is a 404 on the next read, in JSON and HTML; a private board is never served', async () => {
    await boardFixture(h, ws.id, 'soon')
    await api.post('/api/v1/boards/soon/posts', { title: 'Secret roadmap item' })
    const path = `/api/v1/public/${ws.slug}/boards/soon/posts`
    await cached(path)
    await cached(`/portal/${ws.slug}/boards/soon`)
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/boards/soon`, { is_private: true })).status).toBe(200)
    await seen(path, (body) => body.code === 'NOT_FOUND')
    const html = await seen(`/portal/${ws.slug}/boards/soon`, (body) => !body.includes('Secret roadmap item'))
    expect(html.status).toBe(404)
    expect(JSON.stringify((await anon.get(`/api/v1/public/${ws.slug}`)).body)).not.toContain('soon')
  })

  test('a deleted workspace is a 404 at once, though its pages were cached', async () => {
    const gone = await workspaceFixture(h)
    await boardFixture(h, gone.id, 'ideas')
    const paths = [`/api/v1/public/${gone.slug}/boards/ideas/posts`, `/portal/${gone.slug}/boards/ideas`, `/api/v1/public/${gone.slug}`]
    for (const path of paths) await cached(path)
    expect((await gone.owner.delete(`/api/v1/workspaces/${gone.slug}`)).status).toBe(200)
    for (const path of paths) expect((await seen(path, (body) => typeof body === 'string' ? body.includes('Not found') : body.code === 'NOT_FOUND')).status).toBe(404)
  })

  test('cache-busting query strings: unknown parameters share one page; distinct searches stay within the configured entries and bytes', async () => {
    await cached(page())
    expect(await statementsOf(() => anon.get(`${page()}?utm_source=${Math.random()}`))).toEqual([])
    for (let i = 0; i < ENTRIES * 3; i++) expect((await anon.get(`${page()}?q=${'x'.repeat(150)}${i}`)).status).toBe(200)
    const { entries, bytes } = publicAnswers(h.ctx).stats
    expect(entries).toBeLessThanOrEqual(ENTRIES)
    expect(entries).toBeGreaterThan(ENTRIES / 2)
    expect(bytes).toBeLessThanOrEqual(1024 * 1024)
    // A query the page names as unusable is not kept either.
    expect(await statementsOf(() => anon.get(`${page()}?status=nope`))).not.toEqual([])
    expect(await statementsOf(() => anon.get(`${page()}?status=nope`))).not.toEqual([])
  })

  test('an end user\'s contact details changed in the database straight away (not through a route) still reach the list', async () => {
    const [row] = await h.db.select().from(endUsers).where(eq(endUsers.email, 'nine@customer.example'))
    await cached(list())
    await h.db.update(endUsers).set({ name: 'Renamed by SQL' }).where(eq(endUsers.id, row!.id))
    await seen(list(), (body) => JSON.stringify(body).includes('Renamed by SQL'))
  })
})
