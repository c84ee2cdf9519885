import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let key: string
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'small')
  await boardFixture(h, ws.id, 'large')
  await labelFixture(h, ws.id, 'tag')
  key = await ws.key()
  const api = h.client({ authorization: `Bearer ${key}` })
  await api.post('/api/v1/boards/small/posts', { title: 'Only one', labels: ['tag'], email: 'one@example.com' })
  const first = (await api.post('/api/v1/boards/large/posts', { title: 'Post 0', labels: ['tag'] })).body
  for (let i = 0; i < 20; i++) {
    await api.post(`/api/v1/posts/${first.id}/votes`, { email: `voter${i}@example.com` })
    await api.post(`/api/v1/posts/${first.id}/comments`, { body: 'hi', email: `commenter${i}@example.com` })
  }
  for (let i = 1; i < 30; i++) await api.post('/api/v1/boards/large/posts', { title: `Post ${i}`, labels: ['tag'], email: `author${i}@example.com` })
}, 120_000)
afterAll(() => h.close())

/**
 * The statements a keyed GET sends for the route itself. Apart: the key's look-up (answered from the
 * per-process cache when the process hears changes: PGlite always, an in-process app on PostgreSQL never,
 * since it holds no LISTEN connection) and the rate-limit statement: on PostgreSQL at most one per request,
 * the counter's upsert or, while the process holds a lease on the key's budget, the read of the
 * credential change count (server/lib/rate-limit.ts), which the posts' list and post read in their own
 * statement instead (`changesInStatement`); none on PGlite (counted in memory). One claim in
 * a thousand also purges expired counters, which is not the route's.
 */
const isKeyLookup = (statement: string) => statement.includes('"api_keys"."key_hash"')
/** A key's last use is written at most once a minute: not the route's either. */
const isLastUse = (statement: string) => statement.startsWith('update "api_keys" set "last_used_at"')
const isRateLimit = (statement: string) => statement.startsWith('insert into "rate_limit_counters"') || statement.startsWith('select (select n from cache_changes where id = 1)')

async function countQueries(path: string) {
  h.queries.length = 0
  const res = await h.client({ authorization: `Bearer ${key}` }).get(path)
  expect(res.status).toBe(200)
  // The posts' list and post read the change count in their own statement while a lease serves the hit (none then).
  expect(h.queries.filter(isRateLimit).length).toBeLessThanOrEqual(h.database.driver === 'postgres' ? 1 : 0)
  expect(h.queries.filter(isKeyLookup)).toHaveLength(h.database.driver === 'postgres' ? 1 : 0)
  return h.queries.filter((statement) => !isRateLimit(statement) && !isKeyLookup(statement) && !isLastUse(statement) && !statement.startsWith('delete from "rate_limit_counters"')).length
}

describe('lists cost a constant number of queries', () => {
  test('posts: one item and thirty items take the same number of queries', async () => {
    const one = await countQueries('/api/v1/boards/small/posts')
    const thirty = await countQueries('/api/v1/boards/large/posts?per_page=30')
    // One query: board, filters, page, labels and total together.
    expect(thirty).toBe(one)
    expect(thirty).toBe(1)
  })

  test('posts: every sort and filter, public or not, is the same single query at any page size', async () => {
    for (const query of ['sort=top', 'sort=trending', 'sort=new', 'q=post', 'q=post&sort=top', 'status=open', 'label=tag', 'label=tag&q=post&status=open&sort=trending']) {
      const one = await countQueries(`/api/v1/boards/large/posts?per_page=1&${query}`)
      const thirty = await countQueries(`/api/v1/boards/large/posts?per_page=30&${query}`)
      expect(`${query}: ${thirty}`).toBe(`${query}: ${one}`)
      expect(`${query}: ${thirty}`).toBe(`${query}: 1`)
      // The public workspace (boards, statuses) is read once and kept by the public cache (docs/scaling.md):
      // a first public read warms it, then each new list costs its one statement.
      await h.client().get(`/api/v1/public/${ws.slug}/boards/large/posts?per_page=1&${query}`)
      h.queries.length = 0
      const res = await h.client().get(`/api/v1/public/${ws.slug}/boards/large/posts?per_page=30&${query}`)
      expect(res.status).toBe(200)
      expect(res.body.items.length).toBeGreaterThan(0)
      expect(`${query}: ${h.queries.length}`).toBe(`${query}: 1`)
    }
  })

  test('a post is one query: the post with its board, status, author and labels', async () => {
    const [post] = (await h.client({ authorization: `Bearer ${key}` }).get('/api/v1/boards/small/posts')).body.items
    expect(await countQueries(`/api/v1/posts/${post.id}`)).toBe(1)
  })

  test('votes and comments lists too', async () => {
    const [popular] = (await h.client({ authorization: `Bearer ${key}` }).get('/api/v1/boards/large/posts?sort=top&per_page=1')).body.items
    expect(popular.votes).toBe(20)
    const votes = await countQueries(`/api/v1/posts/${popular.id}/votes`)
    const comments = await countQueries(`/api/v1/posts/${popular.id}/comments`)
    expect(votes).toBeLessThanOrEqual(4)
    expect(comments).toBeLessThanOrEqual(4)
  })
})

describe('the credential cache', () => {
  const keyLookups = () => h.queries.filter((statement) => statement.includes('"api_keys"."key_hash"')).length

  test('a key is looked up once, then answered from memory while changes are heard; a revocation is looked up again and refused', async () => {
    const fresh = await ws.key(['posts:read'], 'cached')
    const api = h.client({ authorization: `Bearer ${fresh}` })
    h.queries.length = 0
    for (let i = 0; i < 3; i++) expect((await api.get('/api/v1/boards/small/posts')).status).toBe(200)
    // PGlite announces changes in this process, so its caches are on; an in-process app on PostgreSQL runs no
    // background worker, holds no LISTEN connection, and so reads the key every time.
    expect(keyLookups()).toBe(h.database.driver === 'pglite' ? 1 : 3)
    const [listed] = (await ws.owner.get(`/api/v1/workspaces/${ws.slug}/api-keys`)).body.filter((item: any) => item.name === 'cached')
    expect((await ws.owner.delete(`/api/v1/workspaces/${ws.slug}/api-keys/${listed.id}`)).status).toBe(204)
    h.queries.length = 0
    const refused = await api.get('/api/v1/boards/small/posts')
    expect(refused.status).toBe(401)
    expect(keyLookups()).toBe(1)
  })
})
