// DATABASE_READ_URL over HTTP on a real server process: the public reads go through the second pool, every
// other read and every write through DATABASE_URL. The "replica" is the same database reached as a read-only
// role whose row-level security hides the posts it "has not replayed yet" (a streaming replica is not needed to
// show which pool a read used): what that role cannot see is missing from the public list but present in the
// team's list, and a public read of one such post falls back to the primary. Always on PostgreSQL (at
// TEST_POSTGRES_URL or 127.0.0.1:5432), on both CI passes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { createApp } from '../../server/app.ts'
import { getConfig } from '../../server/config.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, TestClient, TEST_SECRET, type Harness } from '../helpers/harness.ts'
import { freshPostgresDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

let drop: () => Promise<void>
let admin: postgres.Sql
let h: Harness
let ws: WorkspaceFixture
let server: ServerProcess
let readUrl: string
const reader = `chorus_reader_${Date.now().toString(36)}`
const children = new Set<ReturnType<typeof Bun.spawn>>()
const HIDDEN = 'Not replayed yet'

beforeAll(async () => {
  const fresh = await freshPostgresDatabase('chorus_r', 'The read-pool tests')
  drop = fresh.drop
  const config = getConfig({ SECRET_KEY: TEST_SECRET, LOG_LEVEL: 'silent', BASE_URL: BASE, RATE_LIMIT_PER_IP: '100000' })
  const { app, ctx } = await createApp({ config, database: fresh.database })
  h = { app, ctx, db: ctx.db, database: fresh.database, databaseUrl: fresh.url, queries: [], client: (defaults?: Record<string, string>) => new TestClient((request) => app.handle(request), defaults), close: async () => ctx.limiter.close() }
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  admin = postgres(fresh.url, { max: 1, onnotice: () => {} })
  // A replica refuses writes: so does this role. The table owner (the app's primary user) is not subject to the policy.
  await admin.unsafe(`create role ${reader} login`)
  await admin.unsafe(`alter role ${reader} set default_transaction_read_only = on`)
  await admin.unsafe(`grant usage on schema public to ${reader}`)
  await admin.unsafe(`grant select on all tables in schema public to ${reader}`)
  await admin.unsafe('alter table posts enable row level security')
  await admin.unsafe(`create policy replayed on posts for select to ${reader} using (title <> '${HIDDEN}')`)
  const url = new URL(fresh.url)
  url.username = reader
  readUrl = url.toString()
  server = await startServerProcess({ DATABASE_URL: fresh.url, DATABASE_READ_URL: readUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE }, children)
}, 60_000)

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await h?.close()
  if (admin) {
    await admin.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where usename = '${reader}'`)
    await admin.unsafe(`drop owned by ${reader}`).catch(() => {})
    await admin.end()
  }
  await drop?.()
  const cluster = postgres(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', { max: 1, onnotice: () => {} })
  await cluster.unsafe(`drop role if exists ${reader}`).catch(() => {})
  await cluster.end()
})

/** A client of the server process. */
function onServer(defaults: Record<string, string> = {}) {
  return new TestClient((request) => {
    const url = new URL(request.url)
    return fetch(`http://127.0.0.1:${server.port}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body: request.body })
  }, defaults)
}

describe('happy', () => {
  test('public reads go through DATABASE_READ_URL, the team\'s reads and every write through DATABASE_URL', async () => {
    const api = onServer({ authorization: `Bearer ${await ws.key()}` })
    // Writes succeed although the read pool refuses them: they went to the primary.
    expect((await api.post('/api/v1/boards/ideas/posts', { title: 'Replayed post' })).status).toBe(201)
    const hidden = await api.post('/api/v1/boards/ideas/posts', { title: HIDDEN })
    expect(hidden.status).toBe(201)
    const anon = onServer()
    const titles = (body: any) => body.items.map((post: { title: string }) => post.title)
    expect(titles((await api.get('/api/v1/boards/ideas/posts')).body).sort()).toEqual([HIDDEN, 'Replayed post'])
    const list = await anon.get(`/api/v1/public/${ws.slug}/boards/ideas/posts`)
    expect(list.status).toBe(200)
    expect(titles(list.body)).toEqual(['Replayed post'])
    const page = await anon.get(`/portal/${ws.slug}/boards/ideas`)
    expect(page.body).toContain('Replayed post')
    expect(page.body).not.toContain(HIDDEN)
    const [pool] = await admin`select count(*)::int as n from pg_stat_activity where usename = ${reader} and datname = current_database()`
    expect(pool!.n).toBeGreaterThan(0)
  })

  test('a post the read pool does not have yet is read from the primary, not a 404', async () => {
    const id = (await onServer({ authorization: `Bearer ${await ws.key()}` }).get('/api/v1/boards/ideas/posts')).body.items.find((post: any) => post.title === HIDDEN).id
    const json = await onServer().get(`/api/v1/public/${ws.slug}/posts/${id}`)
    expect([json.status, json.body.title]).toEqual([200, HIDDEN])
    const page = await onServer().get(`/portal/${ws.slug}/posts/${id}`)
    expect(page.status).toBe(200)
    expect(page.body).toContain(HIDDEN)
  })
})

describe('errors', () => {
  test('DATABASE_READ_URL with the embedded database stops start-up naming it', () => {
    expect(() => getConfig({ SECRET_KEY: TEST_SECRET, DATABASE_READ_URL: readUrl })).toThrow(/DATABASE_READ_URL/)
    expect(() => getConfig({ SECRET_KEY: TEST_SECRET, DATABASE_URL: 'postgres://x@127.0.0.1/db', DATABASE_READ_URL: 'mysql://x' })).toThrow(/DATABASE_READ_URL/)
  })
})
