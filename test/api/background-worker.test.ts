// The background worker thread (server/background/): a real Bun Worker started by the supervisor from
// the test's app, on PGlite (its statements through the main thread) and on PostgreSQL (a pool of its
// own). It delivers with Standard Webhooks signatures; killed right after a claim it loses and repeats
// nothing while HTTP answers; and a main thread kept busy by a CPU-bound request does not hold a delivery
// back on PostgreSQL (on PGlite, where the database is the main thread's, it goes out once the thread is free).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { startBackground, type Background } from '../../server/background/supervisor.ts'
import type { BackgroundState } from '../../server/context.ts'
import { rowsOf } from '../../server/db/client.ts'
import { webhookDeliveries, webhooks } from '../../server/db/schema/index.ts'
import type { Logger } from '../../server/lib/log.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { eventually, startReceiver } from '../helpers/receiver.ts'
import { startReceiverProcess } from '../helpers/receiver-process.ts'

let h: Harness
let ws: WorkspaceFixture
let api: ReturnType<Harness['client']>
let background: Background
const logged: { level: string; msg: string; fields?: Record<string, unknown> }[] = []
const log: Logger = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, (msg: string, fields?: Record<string, unknown>) => void logged.push({ level, msg, fields })])) as unknown as Logger
const onPostgres = () => h.database.driver === 'postgres'

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.001' })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  // As server/index.ts does, with the test's database (the harness's config names none) and a log the test reads.
  // `background` is the same object, so the app's /health sees the supervisor's state.
  background = startBackground({ ...h.ctx, log, config: { ...h.ctx.config, databaseUrl: h.databaseUrl } })
  await background.ready()
  // Migrating the embedded database for a test file took 70-90 s on a machine shared by eight agents.
}, 180_000)
afterAll(async () => {
  await background?.stop()
  await h?.close()
})

const newPost = async (title: string) => {
  const res = await api.post('/api/v1/boards/ideas/posts', { title })
  expect(res.status).toBe(201)
  return res.body as { id: string }
}
const hook = async (url: string) => {
  const res = await api.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url, events: ['post.created'] })
  expect(res.status).toBe(201)
  return res.body as { id: string; secret: string }
}
const postIdOf = (body: string) => JSON.parse(body).data.post.id as string

describe('the background worker', () => {
  test('runs in a worker thread and delivers, signed so standardwebhooks verifies it; /health says ok', async () => {
    expect(background.state).toBe('ok')
    expect((await h.client().get('/api/v1/health')).body.background).toBe('ok')
    const receiver = await startReceiver()
    try {
      const { id, secret } = await hook(receiver.url('/signed'))
      const post = await newPost('Signed in the worker')
      const [hit] = await receiver.waitFor('/signed', 1, 10_000)
      const verified = new Webhook(secret).verify(hit!.body, Object.fromEntries(hit!.headers)) as any
      expect(verified.data.post.id).toBe(post.id)
      // A wrong secret does not verify: the check can fail.
      expect(() => new Webhook(`whsec_${Buffer.from('another secret of 24 b!!').toString('base64')}`).verify(hit!.body, Object.fromEntries(hit!.headers))).toThrow()
      await h.db.delete(webhooks).where(eq(webhooks.id, id))
    } finally {
      receiver.stop()
    }
  }, 30_000)

  test('killed right after a claim, it is restarted (logged, /health: restarting) and every event goes out exactly once while HTTP answers', async () => {
    const receiver = await startReceiver()
    try {
      const { id } = await hook(receiver.url('/crash'))
      const states = new Set<BackgroundState>()
      const watching = setInterval(() => states.add(background.state), 2)
      background.exitOnNextClaim()
      const posts: string[] = []
      const healths: number[] = []
      // A burst first, so the claim the worker dies on can hold a batch of deliveries, not one.
      posts.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => newPost(`Burst ${i}`)))).map((post) => post.id))
      // Posts keep coming (and /health keeps answering) while the worker dies and comes back.
      for (let i = 0; i < 30; i++) {
        posts.push((await newPost(`Crash ${i}`)).id)
        const health = await h.client().get('/api/v1/health')
        healths.push(health.status)
        if (health.body.background === 'restarting') states.add('restarting')
      }
      await eventually(() => new Set(receiver.to('/crash').map((hit) => postIdOf(hit.body))).size === posts.length, 20_000, 'every post delivered')
      clearInterval(watching)
      expect(healths.every((status) => status === 200)).toBe(true)
      expect(states.has('restarting')).toBe(true)
      expect(logged.some((entry) => entry.level === 'error' && entry.msg === 'background worker exited' && entry.fields?.code === 70)).toBe(true)
      expect(logged.some((entry) => entry.msg === 'background worker restarting')).toBe(true)
      await background.ready()
      expect(background.state).toBe('ok')
      // Nothing lost, nothing sent twice: one request per post, one successful log per post, no delivery left.
      await Bun.sleep(300)
      const delivered = receiver.to('/crash').map((hit) => postIdOf(hit.body))
      expect(delivered.sort()).toEqual([...posts].sort())
      const [logs] = rowsOf<{ n: number; ok: number }>(await h.db.execute(sql`select count(*)::int as n, count(*) filter (where success)::int as ok from webhook_delivery_logs where webhook_id = ${id}`))
      expect(logs).toEqual({ n: posts.length, ok: posts.length })
      expect(await h.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, id))).toEqual([])
      await h.db.delete(webhooks).where(eq(webhooks.id, id))
    } finally {
      receiver.stop()
    }
  }, 60_000)

  test('a CPU-bound request on the main thread does not hold a delivery back (PostgreSQL); on PGlite it goes out once the thread is free', async () => {
    const receiver = await startReceiverProcess()
    try {
      const { id } = await hook(receiver.url('/busy'))
      // Normal latency first, with the thread free: the slowest of three idle deliveries on this (shared) machine.
      let idleLatency = 0
      for (let i = 0; i < 3; i++) {
        const idleStart = Date.now()
        const warm = await newPost(`Warm-up ${i}`)
        const idleHit = await eventually(async () => (await receiver.received()).find((hit) => postIdOf(hit.body) === warm.id), 10_000, 'warm-up delivered')
        idleLatency = Math.max(idleLatency, idleHit.at - idleStart)
      }

      const committed = Date.now()
      const post = await newPost('While the main thread is busy')
      // A request that keeps this (the server's main) thread busy for 1.5 s: nothing else runs on it meanwhile.
      const BLOCK_MS = 1500
      while (Date.now() - committed < BLOCK_MS);
      const freed = Date.now()
      const hit = await eventually(async () => (await receiver.received()).find((entry) => postIdOf(entry.body) === post.id), 10_000, 'busy-time post delivered')
      if (onPostgres()) {
        // Delivered during the block, at about the idle latency: a generous multiple of it, and far less than
        // the block (a delivery that waited for the main thread would come at least BLOCK_MS after the commit).
        expect(hit.at).toBeLessThan(freed)
        expect(hit.at - committed).toBeLessThan(Math.max(4 * idleLatency, BLOCK_MS / 3))
      } else {
        // The embedded database lives in the main thread: the worker's statements wait for it, then go at about the idle latency.
        expect(hit.at - freed).toBeLessThan(Math.max(4 * idleLatency, BLOCK_MS / 3))
      }
      await h.db.delete(webhooks).where(eq(webhooks.id, id))
    } finally {
      receiver.stop()
    }
  }, 60_000)

  test('a stop drains: the worker records what it sent and the state is off', async () => {
    await background.stop()
    expect(background.state).toBe('off')
    expect((await h.client().get('/api/v1/health')).body.background).toBe('off')
    // No lease is left behind by the stopped worker.
    const [left] = rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from webhook_deliveries where lease_owner is not null`))
    expect(left!.n).toBe(0)
  }, 30_000)
})
