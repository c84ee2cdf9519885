// Real server processes (`bun server/index.ts`) sharing one PostgreSQL database: crash recovery and
// shared work. These always run, on both CI passes, against the Postgres at 127.0.0.1:5432 (or
// TEST_POSTGRES_URL); without one they fail loudly rather than being skipped.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import { createApp } from '../../server/app.ts'
import { getConfig } from '../../server/config.ts'
import { rowsOf, type Database } from '../../server/db/client.ts'
import { webhookDeliveries, webhookDeliveryLogs } from '../../server/db/schema/index.ts'
import { LOCK_SPACE } from '../../server/background/leases.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, TestClient, TEST_SECRET, type Harness } from '../helpers/harness.ts'
import { eventually, startReceiver } from '../helpers/receiver.ts'
import { freshPostgresDatabase, startServerProcess } from '../helpers/server-process.ts'

let databaseUrl: string
let database: Database
let drop: () => Promise<void>
let h: Harness
let ws: WorkspaceFixture
let api: TestClient
let receiver: Awaited<ReturnType<typeof startReceiver>>
const children = new Set<ReturnType<typeof Bun.spawn>>()
/** Each started server's HTTP port. */
const ports = new Map<ReturnType<typeof Bun.spawn>, number>()

beforeAll(async () => {
  const fresh = await freshPostgresDatabase('chorus_p', 'The multi-process webhook tests')
  ;({ url: databaseUrl, database, drop } = fresh)
  // The test's own app (no delivery runner) makes the workspace, the webhooks and the posts; only the children deliver.
  const config = getConfig({ SECRET_KEY: TEST_SECRET, LOG_LEVEL: 'silent', BASE_URL: BASE, RATE_LIMIT_PER_IP: '100000', RATE_LIMIT_PER_KEY: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' })
  const { app, ctx } = await createApp({ config, database })
  h = { app, ctx, db: ctx.db, database, databaseUrl, queries: [], client: (defaults?: Record<string, string>) => new TestClient((request) => app.handle(request), defaults), close: async () => ctx.limiter.close() }
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  receiver = await startReceiver()
}, 60_000)

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  receiver?.stop()
  await h?.close()
  await drop?.()
})

/** Starts `bun server/index.ts` on the test database; resolves once its webhook delivery holds its owner lock. */
async function startServer() {
  const { child, stderr, port } = await startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.001' }, children)
  ports.set(child, port)
  void stderr.then((text) => { if (text.includes('"level":"error"')) console.error(text) })
  return child
}

async function createPosts(count: number, prefix: string) {
  const ids: string[] = []
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, count - i) }, (_, j) => api.post('/api/v1/boards/ideas/posts', { title: `${prefix} ${i + j}` })))
    for (const res of batch) {
      expect(res.status).toBe(201)
      ids.push(res.body.id)
    }
  }
  return ids
}

const postIdOf = (body: string) => JSON.parse(body).data.post.id as string

describe('several server processes on one PostgreSQL', () => {
  test('a server killed with SIGKILL mid-delivery: after a restart every pending event is delivered', async () => {
    const hook = await api.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: receiver.url('/crash'), events: ['post.created'] })
    expect(hook.status).toBe(201)
    const acked = new Set<string>()
    let hang = true
    receiver.respondWith(async (request, entry) => {
      if (hang) await Bun.sleep(30_000)
      acked.add(postIdOf(entry.body))
      return new Response('ok')
    })
    const first = await startServer()
    const before = await createPosts(20, 'Before crash')
    await receiver.waitFor('/crash', 1, 5000) // the first server has claimed and is sending (the receiver hangs)
    first.kill('SIGKILL')
    await first.exited
    hang = false
    const whileDown = await createPosts(5, 'While down')

    const started = Date.now()
    const second = await startServer()
    await eventually(() => [...before, ...whileDown].every((id) => acked.has(id)), 15_000, 'every event delivered after the restart')
    // The dead server's claims were taken over at once (its lock went with it), not after the 60 s lease.
    expect(Date.now() - started).toBeLessThan(15_000)
    // Each delivered row is deleted with its success; the logs keep one successful attempt per event.
    const left = () => h.db.select({ count: sql<number>`count(*)::int` }).from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.body.id))
    const succeeded = () => h.db.select({ count: sql<number>`count(distinct ${webhookDeliveryLogs.eventId})::int` }).from(webhookDeliveryLogs)
      .where(and(eq(webhookDeliveryLogs.webhookId, hook.body.id), eq(webhookDeliveryLogs.success, true)))
    await eventually(async () => (await left())[0]!.count === 0 && (await succeeded())[0]!.count === 25, 5000, 'all 25 deliveries done')
    second.kill('SIGTERM')
    expect(await second.exited).toBe(0)
    await api.delete(`/api/v1/workspaces/${ws.slug}/webhooks/${hook.body.id}`)
  }, 60_000)

  test('two servers share 200 events: none lost, none sent twice', async () => {
    const hook = await api.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: receiver.url('/shared'), events: ['post.created'] })
    receiver.respondWith(() => new Response('ok'))
    const servers = await Promise.all([startServer(), startServer()])
    // Each process delivers from its own background worker thread, which its /health reports running.
    for (const child of servers) {
      const background = async () => ((await (await fetch(`http://127.0.0.1:${ports.get(child)}/api/v1/health`)).json()) as { background: string }).background
      await eventually(async () => (await background()) === 'ok', 10_000, 'the background worker running')
    }
    const ids = await createPosts(200, 'Shared')
    await eventually(() => new Set(receiver.to('/shared').map((hit) => postIdOf(hit.body))).size >= 200, 20_000, '200 deliveries')
    await Bun.sleep(200)
    const delivered = receiver.to('/shared').map((hit) => postIdOf(hit.body))
    expect(new Set(delivered)).toEqual(new Set(ids))
    expect(delivered).toHaveLength(200)
    const senders = await h.db.selectDistinct({ sentBy: webhookDeliveryLogs.sentBy }).from(webhookDeliveryLogs).where(eq(webhookDeliveryLogs.webhookId, hook.body.id))
    expect(senders).toHaveLength(2)
    for (const child of servers) child.kill('SIGTERM')
    expect(await Promise.all(servers.map((child) => child.exited))).toEqual([0, 0])
  }, 60_000)

  test('a server whose owner-lock connection drops goes on under a new owner: deliveries continue, none twice', async () => {
    const hook = await api.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: receiver.url('/relock'), events: ['post.created'] })
    expect(hook.status).toBe(201)
    receiver.respondWith(() => new Response('ok'))
    const { child, stderr } = await startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, WEBHOOK_ALLOW_PRIVATE: 'true' }, children)
    /** The owner locks held by webhook delivery's lock connections: the backend and the owner number. */
    const owners = async () => rowsOf<{ pid: number; owner: number }>(await h.db.execute(sql`select a.pid, l.objid::int as owner from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and l.granted and l.classid::int = ${LOCK_SPACE} and a.application_name = 'chorus-webhooks-lock' and a.datname = current_database()`))
    const [before] = await eventually(async () => { const held = await owners(); return held.length === 1 && held }, 10_000, 'the owner lock')
    const early = await createPosts(3, 'Before the drop')
    await eventually(() => receiver.to('/relock').length >= 3, 10_000, 'deliveries before the drop')

    await h.db.execute(sql`select pg_terminate_backend(${before!.pid})`)
    const [after] = await eventually(async () => { const held = await owners(); return held.length === 1 && held[0]!.owner !== before!.owner && held }, 10_000, 'a new owner lock')
    expect(after!.pid).not.toBe(before!.pid)
    const late = await createPosts(5, 'After the drop')
    await eventually(() => receiver.to('/relock').length >= 8, 10_000, 'deliveries after the drop')
    await Bun.sleep(200)
    const delivered = receiver.to('/relock').map((hit) => postIdOf(hit.body))
    expect(delivered.sort()).toEqual([...early, ...late].sort())
    // The process never exited: the loop alone stopped and started again.
    expect(child.exitCode).toBeNull()
    child.kill('SIGTERM')
    expect(await child.exited).toBe(0)
    expect(await stderr).toContain('lost the webhook owner lock')
    await api.delete(`/api/v1/workspaces/${ws.slug}/webhooks/${hook.body.id}`)
  }, 60_000)
})
