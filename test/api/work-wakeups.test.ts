// The background loops (event dispatch, webhook delivery, e-mail) sleep until committed work wakes
// them (server/db/work.ts): an idle server sends no SQL, new work is picked up at once, a retry runs at
// its time. Every loop here sleeps on a 10-minute backstop, so anything that arrives in time was woken.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import { rowsOf } from '../../server/db/client.ts'
import { emailOutbox, webhookDeliveries, webhooks } from '../../server/db/schema/index.ts'
import { duePending, drizzleQueueTransaction as queueTransaction } from '../../server/db/leased-queue.ts'
import { startEventDispatcher, type EventDispatcher } from '../../server/background/dispatcher.ts'
import { CHANGELOG_MAIL_QUEUE } from '../../server/modules/changelog/mail.ts'
import { NOTIFICATION_MAIL_QUEUE } from '../../server/modules/notifications/mail-queue.ts'
import { startMailer } from '../../server/background/mailer.ts'
import { startWebhookRunner, type WebhookRunner } from '../../server/background/delivery-runner.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { eventually, startReceiver } from '../helpers/receiver.ts'

const BACKSTOP = 10 * 60_000

let h: Harness
let ws: WorkspaceFixture
let api: TestClient
let runner: WebhookRunner
let dispatcher: EventDispatcher
let mailer: ReturnType<typeof startMailer>
let receiver: Awaited<ReturnType<typeof startReceiver>>

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.001' })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  receiver = await startReceiver()
  expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/notifications/subscriptions`, { events: ['post.created'], channel: 'email' })).status).toBe(201)
  dispatcher = startEventDispatcher({ db: h.database.sql, log: h.ctx.log, listenForWork: h.database.listenForWork, pollMs: BACKSTOP })
  mailer = startMailer(h.ctx, { pollMs: BACKSTOP })
  runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl, pollMs: BACKSTOP })
  await runner.ready()
}, 60_000)
afterEach(async () => {
  await h.db.delete(webhooks).where(eq(webhooks.workspaceId, ws.id))
  receiver.respondWith(() => new Response('ok'))
})
afterAll(async () => {
  await runner?.stop()
  await mailer?.stop()
  await dispatcher?.stop()
  receiver?.stop()
  await h.close()
})

const hook = async (path: string) => {
  const res = await api.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: receiver.url(path), events: ['post.created'] })
  expect(res.status).toBe(201)
  return res.body as { id: string }
}
const newPost = async (title: string) => {
  const res = await api.post('/api/v1/boards/ideas/posts', { title })
  expect(res.status).toBe(201)
  return res.body as { id: string }
}
/** The SQL the loops sharing the app's connection send (all of them on PGlite; on Postgres the delivery loop has its own). */
const statementsDuring = async (ms: number) => {
  h.queries.length = 0
  await Bun.sleep(ms)
  return [...h.queries]
}
/**
 * Waits for a 300 ms window in which the loops send nothing: a round the previous test started (its
 * mail, its next due time) may still be running on a busy machine. A loop that never falls quiet fails here.
 */
const settle = async () => {
  const deadline = Date.now() + 5000
  while ((await statementsDuring(300)).length) {
    if (Date.now() > deadline) throw new Error('the loops did not fall quiet within 5 s')
  }
}

describe('happy', () => {
  test('a new post reaches its webhook and its subscriber\'s e-mail within a second, with every loop asleep', async () => {
    await hook('/wake')
    await Bun.sleep(200)
    const started = Date.now()
    const post = await newPost('Wake the loops')
    const [hit] = await receiver.waitFor('/wake', 1, 1000)
    expect(JSON.parse(hit!.body).data.post.id).toBe(post.id)
    expect(hit!.at - started).toBeLessThan(1000)
    const mail = await eventually(async () => (await h.db.select().from(emailOutbox)
      .where(and(eq(emailOutbox.to, `owner-${ws.slug}@example.com`), eq(emailOutbox.subject, `[Workspace ${ws.slug}] New post: Wake the loops`))))[0], 1000, 'the notification e-mail')
    expect(mail.text).toContain('post.created')
  })

  test('idle: the loops send no SQL at all', async () => {
    await settle()
    expect(await statementsDuring(1500)).toEqual([])
  })

  test('a failed attempt is retried at its due time without any new work to announce it', async () => {
    let calls = 0
    receiver.respondWith(() => new Response(++calls === 1 ? 'busy' : 'ok', { status: calls === 1 ? 503 : 200 }))
    await hook('/retry')
    await newPost('Retry me')
    // The first retry is 5 s × WEBHOOK_RETRY_SCALE (0.001) later: only the loop's own due-time sleep can catch it in time.
    const hits = await receiver.waitFor('/retry', 2, 1500)
    expect(hits.map((entry) => JSON.parse(entry.body).id)).toEqual([JSON.parse(hits[0]!.body).id, JSON.parse(hits[0]!.body).id])
  })

  test('an e-mail claim walks its queue index in order, with no sort of the pending e-mails', async () => {
    for (const [queue, index] of [[NOTIFICATION_MAIL_QUEUE, 'notification_events_email_due_at_idx'], [CHANGELOG_MAIL_QUEUE, 'changelog_emails_due_at_idx']] as const) {
      const result = await queueTransaction(h.db, (tx) => tx.execute(sql`explain (format json) ${duePending(queue, 20)}`))
      const plan = JSON.stringify(rowsOf<{ 'QUERY PLAN': unknown }>(result)[0]!['QUERY PLAN'])
      expect(plan).toContain(`"Index Name":"${index}"`)
      expect(plan).not.toContain('"Node Type":"Sort"')
    }
  })

  test('an e-mail claim reads only due rows: the ones waiting for a later time (a digest for its hour, a retry backing off) are never read', async () => {
    // 300 rows waiting for tomorrow, as the mailer leaves each daily-digest row until its hour, created before one due row.
    await h.db.execute(sql`insert into notification_events (id, workspace_id, user_id, event_id, event_type, channel, subject, data, email_status, digest, digest_at, email_lease_until, created_at)
      select 'ntf_later_' || g, ${ws.id}, ${ws.ownerId}, 'evt_later_' || g, 'post.created', 'email', 'Later', '{}', 'pending', true, now() + interval '1 day', now() + interval '1 day', now() - interval '1 hour'
      from generate_series(1, 300) g`)
    await h.db.execute(sql`insert into notification_events (id, workspace_id, user_id, event_id, event_type, channel, subject, data, email_status)
      values ('ntf_due_now', ${ws.id}, ${ws.ownerId}, 'evt_due_now', 'post.created', 'email', 'Now', '{}', 'pending')`)
    try {
      const result = await queueTransaction(h.db, (tx) => tx.execute(sql`explain (analyze, format json) ${duePending(NOTIFICATION_MAIL_QUEUE, 20)}`))
      const plan = JSON.stringify(rowsOf<{ 'QUERY PLAN': unknown }>(result)[0]!['QUERY PLAN'])
      const scan = JSON.parse(plan)[0].Plan as { Plans?: unknown[] }
      const nodes: Record<string, unknown>[] = []
      const walk = (node: any) => { nodes.push(node); for (const child of node.Plans ?? []) walk(child) }
      walk(scan)
      const index = nodes.find((node) => node['Index Name'] === 'notification_events_email_due_at_idx')!
      expect(index).toBeDefined()
      // Before the due-time index (created_at order, filtered) the scan read and dropped all 300 waiting rows;
      // now its range ends at now(): it reads due rows only (this file's earlier ones and the new one, unless claimed).
      expect(index['Rows Removed by Filter'] ?? 0).toBe(0)
      expect(index['Actual Rows']).toBeLessThan(20)
    } finally {
      await h.db.execute(sql`delete from notification_events where id like 'ntf_later_%' or id = 'ntf_due_now'`)
    }
  })

  test('a statement estimated past jit_above_cost is planned without JIT compilation (a queue claim spent 230-370 ms in it)', async () => {
    const [row] = rowsOf<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number }, JIT?: unknown }] }>(await h.db.execute(sql`
      explain (format json) select count(*) from generate_series(1, 10000000)`))
    const [limit] = rowsOf<{ cost: string }>(await h.db.execute(sql`select current_setting('jit_above_cost') as cost`))
    const plan = row!['QUERY PLAN'][0]
    expect(plan.Plan['Total Cost']).toBeGreaterThan(Number(limit!.cost))
    expect(plan.JIT).toBeUndefined()
  })
})

describe('errors', () => {
  test('a write that fails validation commits nothing and wakes nothing', async () => {
    await settle()
    h.queries.length = 0
    const res = await api.post('/api/v1/boards/ideas/posts', { title: '' })
    expect(res.status).toBe(422)
    const during = await statementsDuring(500)
    expect(during.filter((statement) => /event_dispatch|webhook_deliveries|notification_events/.test(statement))).toEqual([])
  })

  test('while a slow receiver holds an attempt, the loop waits for it instead of spinning', async () => {
    receiver.respondWith(async () => (await Bun.sleep(1500), new Response('ok')))
    await hook('/slow')
    await newPost('Slow receiver')
    await receiver.waitFor('/slow', 1, 1000)
    // The wake-ups of its own post (event, then delivery) may still run a round or two; a polling loop would send hundreds of claims meanwhile.
    const during = await statementsDuring(1000)
    expect(during.filter((statement) => /for update of d skip locked/.test(statement)).length).toBeLessThanOrEqual(6)
  })
})

describe('empty inserts', () => {
  test('an insert that adds no row wakes nobody (migration 0056); one that adds a row does', async () => {
    const heard: string[] = []
    // `*` is what a listener hears once when it (re)connects ("anything may be due"), not a table's trigger.
    const unlisten = await h.database.listenForWork(['webhook_deliveries', 'chat_deliveries', 'duplicate_checks'], (table) => table !== '*' && heard.push(table))
    try {
      await h.db.execute(sql`insert into webhook_deliveries select * from webhook_deliveries where false`)
      await h.db.execute(sql`insert into chat_deliveries select * from chat_deliveries where false`)
      await h.db.execute(sql`insert into duplicate_checks select * from duplicate_checks where false`)
      await Bun.sleep(300)
      expect(heard).toEqual([])
      // The same listener hears a real insert: the silence above is the trigger's, not a deaf listener's.
      const { id } = await hook('/wake')
      await newPost('Wakes the delivery loop')
      const [hit] = await receiver.waitFor('/wake', 1, 5000)
      await eventually(() => heard.includes('duplicate_checks'), 5000, 'the duplicate check wake-up')
      // The delivery loop inserted that post's delivery leased to itself (migration 0065): no one else was woken for it.
      expect(heard).not.toContain('webhook_deliveries')
      // A delivery queued for anyone to claim (as a round beyond its room, or an older process, leaves it) wakes the loops.
      await h.db.execute(sql`insert into webhook_deliveries (webhook_id, event_id) values (${id}, ${JSON.parse(hit!.body).id})`)
      await eventually(() => heard.includes('webhook_deliveries'), 5000, 'the webhook_deliveries wake-up')
      await receiver.waitFor('/wake', 2, 5000)
    } finally {
      await unlisten()
    }
  })

  test('a notification row wakes the mailer only when it has an e-mail to send now (migration 0065)', async () => {
    const heard: string[] = []
    const unlisten = await h.database.listenForWork(['notification_events'], (table) => table !== '*' && heard.push(table))
    const row = (id: string, rest: ReturnType<typeof sql>) => h.db.execute(sql`insert into notification_events (id, workspace_id, user_id, event_id, event_type, channel, subject, data, email_status, digest, digest_at, email_lease_until)
      values (${id}, ${ws.id}, ${ws.ownerId}, ${`evt_${id}`}, 'post.created', ${rest})`)
    try {
      // Tomorrow's digest (written scheduled, as the fan-out writes it) and an in-app row: nothing to send now.
      await row('ntf_wake_digest', sql`'email', 'Later', '{}', 'pending', true, now() + interval '1 day', now() + interval '1 day'`)
      await row('ntf_wake_in_app', sql`'in_app', 'In the app', '{}', null, false, null, null`)
      await Bun.sleep(300)
      expect(heard).toEqual([])
      // A digest row written unscheduled (an older process) must be scheduled: it wakes the mailer.
      await row('ntf_wake_unscheduled', sql`'email', 'Unscheduled', '{}', 'pending', true, null, now() + interval '1 day'`)
      await eventually(() => heard.length === 1, 3000, 'the unscheduled digest wake-up')
      // An e-mail to send now wakes it.
      await row('ntf_wake_now', sql`'email', 'Now', '{}', 'pending', false, null, null`)
      await eventually(() => heard.length === 2, 3000, 'the instant e-mail wake-up')
      expect(heard).toEqual(['notification_events', 'notification_events'])
    } finally {
      await unlisten()
      await h.db.execute(sql`delete from notification_events where id like 'ntf_wake_%'`)
    }
  })
})

describe('security', () => {
  test('a notification sent on this database by anyone else only wakes the loops; they find nothing to do and deliver nothing', async () => {
    const spoof = await hook('/spoof')
    await h.db.execute(sql`select pg_notify('chorus_work_webhook_deliveries', '')`)
    await h.db.execute(sql`select pg_notify('chorus_work_not_a_table', '')`)
    await Bun.sleep(300)
    expect(receiver.to('/spoof')).toEqual([])
    expect(await h.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, spoof.id))).toEqual([])
  })
})
