import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { eq, inArray, sql } from 'drizzle-orm'
import { rowsOf } from '../../server/db/client.ts'
import { sql as text, type SqlRunner } from '../../server/db/sql-text.ts'
import { eventDispatch, events, notificationEvents, webhookDeliveries, webhookDispatch, webhooks } from '../../server/db/schema/index.ts'
import { dispatchEvents } from '../../server/events/dispatch.ts'
import type { EventSubscriber } from '../../server/events/subscriber.ts'
import { SUBSCRIBERS } from '../../server/events/subscribers.ts'
import { newId } from '../../server/lib/ids.ts'
import { queueWebhookEvents } from '../../server/modules/webhooks/queue.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let webhookId: string
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/notifications/subscriptions`, { events: ['post.created'], channel: 'in_app' })).status).toBe(201)
  webhookId = newId('webhook')
  await h.db.insert(webhooks).values({ id: webhookId, workspaceId: ws.id, url: 'https://hooks.example.com/in', events: ['post.created'], secret: await h.ctx.secrets.seal('whsec_x', `webhook:${webhookId}`) })
}, 60_000)
afterAll(() => h.close())

async function newPost(title: string) {
  const res = await h.client({ authorization: `Bearer ${await ws.key()}` }).post('/api/v1/boards/ideas/posts', { title })
  expect(res.status).toBe(201)
  const event = (await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).find((row) => (row.data as any).post.id === res.body.id)
  expect(event?.type).toBe('post.created')
  return event!
}

describe('happy', () => {
  test('notifications, chat, post subscribers and duplicate checks are the subscribers, listed once; webhooks have a lane of their own', () => {
    expect(SUBSCRIBERS.map((subscriber) => subscriber.name)).toEqual(['notifications', 'chat', 'post-subscribers', 'duplicate-checks'])
  })

  test('one dispatch hands a queued event to every subscriber in one transaction and dequeues it; the webhook lane takes it apart', async () => {
    const event = await newPost('Dispatched')
    expect(await h.db.select().from(eventDispatch).where(eq(eventDispatch.eventId, event.id))).toHaveLength(1)
    expect(await h.db.select().from(webhookDispatch).where(eq(webhookDispatch.eventId, event.id))).toHaveLength(1)
    const seen: string[] = []
    const spy: EventSubscriber = { name: 'spy', fanOut: async (_tx, rows) => void seen.push(...rows.map((row) => row.id)) }
    expect(await dispatchEvents(h.database.sql, 500, [...SUBSCRIBERS, spy])).toBeGreaterThanOrEqual(1)
    expect(seen).toContain(event.id)
    // The fixture's in-app subscription, and the owner's default daily e-mail digest.
    const notified = await h.db.select().from(notificationEvents).where(eq(notificationEvents.eventId, event.id))
    expect(notified.map((row) => `${row.channel}/${row.digest ? 'daily' : 'instant'}/${row.eventType}`).sort()).toEqual(['email/daily/post.created', 'in_app/instant/post.created'])
    expect(await h.db.select().from(eventDispatch).where(eq(eventDispatch.eventId, event.id))).toHaveLength(0)
    expect(await dispatchEvents(h.database.sql)).toBe(0)
    // The webhook's delivery is the lane's: still queued for it, and inserted (unleased, for a loop's claim) once taken.
    expect(await h.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, event.id))).toEqual([])
    expect(await queueWebhookEvents(h.database.sql, 500)).toBeGreaterThanOrEqual(1)
    expect(await h.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, event.id))).toMatchObject([{ webhookId, status: 'pending', leaseOwner: null }])
    expect(await h.db.select().from(webhookDispatch).where(eq(webhookDispatch.eventId, event.id))).toHaveLength(0)
    expect(await queueWebhookEvents(h.database.sql, 500)).toBe(0)
  })

  test('an event is queued for the lane only when an enabled endpoint of its workspace hears its kind', async () => {
    const [vote] = await h.db.insert(events).values({ id: newId('event'), workspaceId: ws.id, type: 'vote.created', data: { post: { id: 'post_none' } } }).returning()
    expect(await h.db.select().from(webhookDispatch).where(eq(webhookDispatch.eventId, vote!.id))).toEqual([])
    expect(await h.db.select().from(eventDispatch).where(eq(eventDispatch.eventId, vote!.id))).toHaveLength(1)
    await h.db.update(webhooks).set({ enabled: false }).where(eq(webhooks.id, webhookId))
    try {
      const event = await newPost('No endpoint on')
      expect(await h.db.select().from(webhookDispatch).where(eq(webhookDispatch.eventId, event.id))).toEqual([])
    } finally {
      await h.db.update(webhooks).set({ enabled: true }).where(eq(webhooks.id, webhookId))
    }
    const other = await workspaceFixture(h)
    const [foreign] = await h.db.insert(events).values({ id: newId('event'), workspaceId: other.id, type: 'post.created', data: {} }).returning()
    expect(await h.db.select().from(webhookDispatch).where(eq(webhookDispatch.eventId, foreign!.id))).toEqual([])
    while (await dispatchEvents(h.database.sql));
  })
})

describe('size', () => {
  test('a dispatch reads the queue and the events by their keys, however large both are and whatever the planner settings', async () => {
    // 3,000 queued events at once: a burst arrives faster than autoanalyze, and the take must not scan
    // the queue or every event ever recorded for each batch (nor under the delivery claim's settings).
    await h.db.execute(sql`insert into events (id, workspace_id, type, data)
      select 'evt_size_' || g, ${ws.id}, 'post.updated', '{}'::jsonb from generate_series(1, 3000) g`)
    try {
      h.queries.length = 0
      // The take is planned for today's table sizes, never by a generic plan cached while the queue was small
      // (postgres.js prepares every statement); the subscribers' statements after it read no queue and keep
      // their cached plans (planning each again cost more than running it); the settings end with the transaction.
      const planning: string[] = []
      const setting = async (db: SqlRunner) =>
        (await db.rows<{ mode: string; sort: string }>(text`select current_setting('plan_cache_mode') as mode, current_setting('enable_sort') as sort`))[0]!
      const spy: EventSubscriber = { name: 'spy', fanOut: async (tx) => { const now = await setting(tx); planning.push(now.mode, now.sort) } }
      expect(await dispatchEvents(h.database.sql, 1, [spy])).toBe(1)
      expect(planning).toEqual(['auto', 'off'])
      expect(await setting(h.database.sql)).toEqual({ mode: 'auto', sort: 'on' })
      expect(await dispatchEvents(h.database.sql, 1)).toBe(1)
      const take = h.queries.find((query) => query.includes('delete from event_dispatch'))!
      expect(take).toBeDefined()
      for (const settings of [sql`select 1`, sql`select set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true)`]) {
        const plan = await h.db.transaction(async (tx) => {
          await tx.execute(settings)
          return JSON.stringify(rowsOf(await tx.execute(sql.raw(`explain (format json) ${take.replace('$1', '500')}`))))
        })
        expect(plan).not.toContain('Seq Scan')
        expect(plan).toContain('Tid Scan')
      }
    } finally {
      await h.db.execute(sql`delete from events where id like 'evt_size_%'`)
    }
  })
})

describe('errors', () => {
  test('a failing subscriber rolls the whole batch back: nothing half-written, the event stays queued, and its webhook is not held back', async () => {
    const event = await newPost('Rolled back')
    const broken: EventSubscriber = { name: 'broken', fanOut: async () => { throw new Error('subscriber down') } }
    await expect(dispatchEvents(h.database.sql, 500, [...SUBSCRIBERS, broken])).rejects.toThrow('subscriber down')
    expect(await h.db.select().from(notificationEvents).where(eq(notificationEvents.eventId, event.id))).toHaveLength(0)
    expect(await h.db.select().from(eventDispatch).where(eq(eventDispatch.eventId, event.id))).toHaveLength(1)
    // The webhook lane is its own queue: the delivery goes ahead while the subscribers' batch waits.
    expect(await queueWebhookEvents(h.database.sql, 500)).toBeGreaterThanOrEqual(1)
    expect(await h.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, event.id))).toHaveLength(1)
    // The next dispatch notifies once; the delivery is not written again.
    await dispatchEvents(h.database.sql)
    expect(await h.db.select().from(notificationEvents).where(eq(notificationEvents.eventId, event.id))).toHaveLength(2)
    expect(await h.db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, [event.id]))).toHaveLength(1)
  })
})

describe('security', () => {
  test('no feature module imports another feature to deliver an event; only server/events lists subscribers', async () => {
    const offenders: string[] = []
    for await (const file of new Glob('server/modules/{webhooks,notifications}/*.ts').scan('.')) {
      const source = await Bun.file(file).text()
      const own = file.split('/')[2]
      const other = own === 'webhooks' ? 'notifications' : 'webhooks'
      if (source.includes(`../${other}/`)) offenders.push(file)
    }
    expect(offenders).toEqual([])
  })
})
