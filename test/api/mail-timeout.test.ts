// A mail server that stops answering in the middle of a send (a real `smtp-server` that reads the message and
// never confirms it). Each send gives up after SMTP_SEND_TIMEOUT_SECONDS: a sign-in request answers 503 instead
// of waiting, and a queued e-mail's attempt fails and is retried later instead of holding the mailer, and the
// lease of its batch, for nodemailer's own limit (10 minutes without an answer).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
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

// A batch of post updates sends 16 e-mails at a time. With a slow server, a letter whose send would start too late
// to end inside the batch's 60 s lease (SMTP_SEND_TIMEOUT_SECONDS before its end, less a margin to mark the batch)
// is handed back untried, due again at once, instead of being sent after another process may have claimed it.
describe('a slow mail server and a batch of post updates', () => {
  let slowSmtp: Awaited<ReturnType<typeof startSmtp>>
  let slow: Harness
  let slowLoops: ReturnType<typeof startMailLoops> | undefined
  afterAll(async () => {
    await slowLoops?.stop()
    await slow?.close()
    await slowSmtp?.close()
  })

  test('the letters that would start past the lease go back untried and are sent by the next claim, once each', async () => {
    slowSmtp = await startSmtp()
    // 40 s per send at most: a send may start up to 15 s after the claim (60 - 5 - 40).
    slow = await startHarness({ SMTP_URL: slowSmtp.url, SMTP_SEND_TIMEOUT_SECONDS: '40', NOTIFY_BATCH_SECONDS: '0' })
    const team = await workspaceFixture(slow, undefined, slowSmtp)
    await boardFixture(slow, team.id, 'ideas')
    const api = slow.client({ authorization: `Bearer ${await team.key()}` })
    const post = (await api.post('/api/v1/boards/ideas/posts', { title: 'Slow news' })).body
    const readers = Array.from({ length: 17 }, (_, i) => `slow-reader-${i}-${team.slug}@example.com`)
    for (const [i, email] of readers.entries()) {
      await slow.db.execute(sql`insert into end_users (id, workspace_id, email, verified_at, locale) values (${`eu_slow_${team.slug}_${i}`}, ${team.id}, ${email}, now(), 'en')`)
      await slow.db.execute(sql`insert into post_subscriptions (post_id, end_user_id, workspace_id, reason) values (${post.id}, ${`eu_slow_${team.slug}_${i}`}, ${team.id}, 'voter')`)
    }
    // The batch's first 16 letters hold its 16 sends for 16 s each; the 17th could only start after its deadline.
    // Sent again (at 16 s or later), it is answered at once.
    for (const email of readers) slowSmtp.slow.set(email, 16_000)
    slowLoops = startMailLoops(slow)
    expect((await api.patch(`/api/v1/posts/${post.id}`, { status: 'Planned' })).status).toBe(200)
    setTimeout(() => slowSmtp.slow.clear(), 8000)
    const updates = () => slow.db.execute(sql`select u.end_user_id, u.status, u.attempts, u.sent_at from subscriber_updates u where u.post_id = ${post.id} order by u.end_user_id`)
      .then((result) => (result as unknown as { rows?: unknown[] }).rows ?? (result as unknown as unknown[])) as Promise<{ end_user_id: string; status: string; attempts: number; sent_at: string | Date }[]>
    const rows = await eventually(async () => {
      const found = await updates()
      return found.length === 17 && found.every((row) => row.status === 'sent') && found
    }, 40_000, 'every update sent')
    for (const email of readers) expect(slowSmtp.inbox.filter((mail) => mail.to.includes(email))).toHaveLength(1)
    // Each was tried once; sixteen were marked together, the one handed back by a batch of its own after them.
    expect(rows.map((row) => row.attempts)).toEqual(rows.map(() => 1))
    const marked = [...groupBy(rows, (row) => new Date(row.sent_at).getTime())].sort(([a], [b]) => a - b).map(([, group]) => group.length)
    expect(marked).toEqual([16, 1])
  }, 60_000)
})
