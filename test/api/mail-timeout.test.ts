// A mail server that stops answering in the middle of a send (a real `smtp-server` that reads the message and
// never confirms it). Each send gives up after SMTP_SEND_TIMEOUT_SECONDS: a sign-in request answers 503 instead
// of waiting, and a queued e-mail's attempt fails and is retried later instead of holding the mailer, and the
// lease of its batch, for nodemailer's own limit (10 minutes without an answer).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import { rowsOf } from '../../server/db/client.ts'
import { notificationEvents } from '../../server/db/schema/index.ts'
import { groupBy } from '../../server/lib/concurrency.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { eventually } from '../helpers/receiver.ts'
import { startMailLoops } from '../helpers/mail-loops.ts'
import { startSmtp } from '../helpers/smtp.ts'

let smtp: Awaited<ReturnType<typeof startSmtp>>
let h: Harness
let ws: WorkspaceFixture
let loops: ReturnType<typeof startMailLoops>

beforeAll(async () => {
  smtp = await startSmtp()
  h = await startHarness({ SMTP_URL: smtp.url, SMTP_SEND_TIMEOUT_SECONDS: '1' })
  ws = await workspaceFixture(h, undefined, smtp)
  await boardFixture(h, ws.id, 'ideas')
  loops = startMailLoops(h)
}, 60_000)
afterAll(async () => {
  await loops?.stop()
  await h?.close()
  await smtp?.close()
})

describe('a mail server that stops answering', () => {
  test('a sign-in link is 503 SERVICE_UNAVAILABLE with Retry-After within the send timeout, and works once the server answers', async () => {
    const email = `stalled-${ws.slug}@example.com`
    smtp.stalled.add(email)
    const started = performance.now()
    const refused = await h.client().post('/api/v1/auth/magic-link', { email })
    expect(performance.now() - started).toBeLessThan(5000)
    expect(refused.status).toBe(503)
    expect(refused.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('mail server') })
    expect(refused.headers.get('retry-after')).toBe('30')
    smtp.stalled.delete(email)
    expect((await h.client().post('/api/v1/auth/magic-link', { email })).status).toBe(200)
    expect((await smtp.waitFor(email)).decoded).toContain('auth/magic-link?token=')
  })

  test("a queued e-mail's attempt fails within the send timeout and waits for its retry; the mailer goes on", async () => {
    const owner = `owner-${ws.slug}@example.com`
    expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/notifications/subscriptions`, { events: ['post.created'], channel: 'email' })).status).toBe(201)
    smtp.stalled.add(owner)
    const api = h.client({ authorization: `Bearer ${await ws.key()}` })
    const started = Date.now()
    const post = await api.post('/api/v1/boards/ideas/posts', { title: 'Sent to a stalled server' })
    expect(post.status).toBe(201)
    const instant = () => h.db.select().from(notificationEvents)
      .where(and(sql`${notificationEvents.data} -> 'post' ->> 'id' = ${post.body.id}`, eq(notificationEvents.channel, 'email'), eq(notificationEvents.digest, false)))
    // Without the timeout the attempt would still be waiting for the server's answer (nodemailer: 10 minutes).
    const [row] = await eventually(async () => {
      const rows = await instant()
      // Claimed, its lease runs 60 s; failed, its retry is 30 s away.
      const retryIn = (rows[0]?.emailLeaseUntil?.getTime() ?? 0) - Date.now()
      return rows[0]?.emailAttempts === 1 && retryIn > 20_000 && retryIn < 40_000 && rows
    }, 10_000, 'the attempt to fail and be scheduled again')
    expect(row).toMatchObject({ emailStatus: 'pending', sentAt: null })
    expect(Date.now() - started).toBeLessThan(10_000)
    // The next e-mail, to an address that answers, goes out: nothing holds the mailer.
    smtp.stalled.delete(owner)
    const member = `reader-${ws.slug}@example.com`
    expect((await h.client().post('/api/v1/auth/magic-link', { email: member })).status).toBe(200)
    await smtp.waitFor(member)
  })
})

// A slow server behind one pooled connection (`pool=true&maxConnections=1`), each send given 25 s: a send of a batch
// may begin until 30 s after its claim (60 s lease - 5 s to mark the batch - 25 s). A send that waits for the
// connection past that goes back to its queue untried, due again at once and its attempt not counted, instead of
// being sent after another process may have claimed it. Two queues side by side, each with its own server.
describe('a slow mail server behind one connection', () => {
  const started: { h: Harness; smtp: Awaited<ReturnType<typeof startSmtp>>; loops?: ReturnType<typeof startMailLoops> }[] = []
  afterAll(async () => {
    for (const { h, smtp, loops } of started) {
      await loops?.stop()
      await h.close()
      await smtp.close()
    }
  })

  async function slowServer() {
    const smtp = await startSmtp()
    const h = await startHarness({ SMTP_URL: `${smtp.url}/?pool=true&maxConnections=1`, SMTP_SEND_TIMEOUT_SECONDS: '25', NOTIFY_BATCH_SECONDS: '0' })
    const team = await workspaceFixture(h, undefined, smtp)
    await boardFixture(h, team.id, 'ideas')
    const entry: (typeof started)[number] = { h, smtp }
    started.push(entry)
    return { ...entry, team, api: h.client({ authorization: `Bearer ${await team.key()}` }), start: () => void (entry.loops = startMailLoops(h)) }
  }

  /** Rows of a queue, once all are sent: each tried once, and how many each marking statement marked, in order. */
  async function markedOnce(read: () => Promise<{ status: string | null; attempts: number; sent: Date | string | null }[]>, count: number) {
    const rows = await eventually(async () => {
      const found = await read()
      return found.length === count && found.every((row) => row.status === 'sent') && found
    }, 50_000, 'every e-mail sent')
    expect(rows.map((row) => row.attempts)).toEqual(rows.map(() => 1))
    return [...groupBy(rows, (row) => new Date(row.sent!).getTime())].sort(([a], [b]) => a - b).map(([, group]) => group.length)
  }

  test('the e-mail that would start past its batch\'s deadline goes back untried and is sent by the next claim, once', async () => {
    const [updates, notifications] = await Promise.all([slowServer(), slowServer()])

    // Post updates: three subscribers of a post whose status changes.
    const post = (await updates.api.post('/api/v1/boards/ideas/posts', { title: 'Slow news' })).body
    const readers = [0, 1, 2].map((i) => `slow-reader-${i}-${updates.team.slug}@example.com`)
    for (const [i, email] of readers.entries()) {
      const id = `eu_slow_${updates.team.slug}_${i}`
      await updates.h.db.execute(sql`insert into end_users (id, workspace_id, email, verified_at, locale) values (${id}, ${updates.team.id}, ${email}, now(), 'en')`)
      await updates.h.db.execute(sql`insert into post_subscriptions (post_id, end_user_id, workspace_id, reason) values (${post.id}, ${id}, ${updates.team.id}, 'voter')`)
      updates.smtp.slow.set(email, 16_000)
    }
    // Member notifications: the owner's instant e-mail of three new posts, fanned out in one batch.
    const owner = `owner-${notifications.team.slug}@example.com`
    expect((await notifications.team.owner.post(`/api/v1/workspaces/${notifications.team.slug}/notifications/subscriptions`, { events: ['post.created'], channel: 'email' })).status).toBe(201)
    const posts: string[] = []
    for (const title of ['Slow one', 'Slow two', 'Slow three']) posts.push((await notifications.api.post('/api/v1/boards/ideas/posts', { title })).body.id as string)
    notifications.smtp.slow.set(owner, 16_000)

    // The first e-mail holds the connection 0-16 s, the second 16-32 s; the third's turn comes past 30 s.
    updates.start()
    expect((await updates.api.patch(`/api/v1/posts/${post.id}`, { status: 'Planned' })).status).toBe(200)
    notifications.start()
    // Sent again (at 32 s or later), it is answered at once.
    setTimeout(() => [updates, notifications].forEach(({ smtp }) => smtp.slow.clear()), 20_000)

    const [updatesMarked, notificationsMarked] = await Promise.all([
      markedOnce(async () => rowsOf<{ status: string; attempts: number; sent: string }>(await updates.h.db.execute(sql`
        select status, attempts, sent_at as sent from subscriber_updates where post_id = ${post.id}`)), 3),
      markedOnce(async () => (await notifications.h.db.select().from(notificationEvents)
        .where(and(eq(notificationEvents.channel, 'email'), eq(notificationEvents.digest, false), sql`${notificationEvents.data} -> 'post' ->> 'id' = any(${`{${posts.join(',')}}`}::text[])`)))
        .map((row) => ({ status: row.emailStatus, attempts: row.emailAttempts, sent: row.sentAt })), 3),
    ])
    expect(updatesMarked).toEqual([2, 1])
    expect(notificationsMarked).toEqual([2, 1])
    for (const email of readers) expect(updates.smtp.inbox.filter((mail) => mail.to.includes(email))).toHaveLength(1)
    expect(notifications.smtp.inbox.filter((mail) => mail.to.includes(owner))).toHaveLength(3)
  }, 60_000)

  test('a request waits for the pooled connection without that wait counting against its send timeout', async () => {
    const smtp = await startSmtp()
    const h = await startHarness({ SMTP_URL: `${smtp.url}/?pool=true&maxConnections=1`, SMTP_SEND_TIMEOUT_SECONDS: '2' })
    started.push({ h, smtp })
    const [first, second] = ['queued-a@example.com', 'queued-b@example.com']
    for (const email of [first, second]) smtp.slow.set(email, 1200)
    // The second waits ~1.2 s for the one connection, then sends in ~1.2 s: 2.4 s in all, 1.2 s of it its own (limit 2 s).
    const [a, b] = await Promise.all([first, second].map((email) => h.client().post('/api/v1/auth/magic-link', { email })))
    expect([a!.status, b!.status]).toEqual([200, 200])
    expect(smtp.inbox.map((mail) => mail.to[0]).sort()).toEqual([first, second])
  })
})
