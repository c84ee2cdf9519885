// Post updates to subscribers sent by real server processes (`bun server/index.ts`) on one PostgreSQL,
// to a real SMTP server (`smtp-server`): none lost across a kill -9 mid-send, and an unsubscribe holds
// across a restart and across two processes (issue 32). Always on PostgreSQL, on both CI passes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { SMTPServer } from 'smtp-server'
import { createApp } from '../../server/app.ts'
import { getConfig } from '../../server/config.ts'
import { rowsOf, type Database } from '../../server/db/client.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, TestClient, TEST_SECRET, type Harness } from '../helpers/harness.ts'
import { eventually } from '../helpers/receiver.ts'
import { freshPostgresDatabase, startServerProcess } from '../helpers/server-process.ts'

const SUBSCRIBERS = 300
const address = (i: number) => `reader${i}@subscriber.example`

let databaseUrl: string
let database: Database
let drop: () => Promise<void>
let h: Harness
let ws: WorkspaceFixture
let api: TestClient
let postP: string
let postQ: string
const children = new Set<ReturnType<typeof Bun.spawn>>()

// A real SMTP server that keeps every message by recipient; `delayMs` holds each DATA so a kill lands mid-send.
const inbox = new Map<string, string[]>()
let delayMs = 0
const sink = new SMTPServer({
  authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], logger: false,
  onData(stream, session, callback) {
    let raw = ''
    stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')))
    stream.on('end', () => setTimeout(() => {
      for (const to of session.envelope.rcptTo) inbox.set(to.address, [...(inbox.get(to.address) ?? []), raw])
      callback()
    }, delayMs))
  },
})
// The kill -9 below drops a connection mid-DATA; smtp-server emits that as 'error', which unheard would fail the run.
sink.on('error', () => {})
const received = () => [...inbox.values()].reduce((sum, mails) => sum + mails.length, 0)

beforeAll(async () => {
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
  const fresh = await freshPostgresDatabase('chorus_mailp', 'The multi-process subscriber mail tests')
  ;({ url: databaseUrl, database, drop } = fresh)
  // The test's own app (no background work) makes the workspace and changes statuses; only the children send.
  const config = getConfig({ SECRET_KEY: TEST_SECRET, LOG_LEVEL: 'silent', BASE_URL: BASE, RATE_LIMIT_PER_IP: '100000', RATE_LIMIT_PER_KEY: '100000' })
  const { app, ctx } = await createApp({ config, database })
  h = { app, ctx, db: ctx.db, database, databaseUrl, queries: [], client: (defaults?: Record<string, string>) => new TestClient((request) => app.handle(request), defaults), close: async () => ctx.limiter.close() }
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  postP = (await api.post('/api/v1/boards/ideas/posts', { title: 'Dark mode' })).body.id
  postQ = (await api.post('/api/v1/boards/ideas/posts', { title: 'Offline mode' })).body.id
  // Confirmed subscribers of P; the first two follow Q too.
  await h.db.execute(sql`insert into end_users (id, workspace_id, email, verified_at, locale)
    select 'eu_mailp' || i, ${ws.id}, 'reader' || i || '@subscriber.example', now(), 'en' from generate_series(1, ${SUBSCRIBERS}) i`)
  await h.db.execute(sql`insert into post_subscriptions (post_id, end_user_id, workspace_id, reason) select ${postP}, 'eu_mailp' || i, ${ws.id}, 'voter' from generate_series(1, ${SUBSCRIBERS}) i`)
  await h.db.execute(sql`insert into post_subscriptions (post_id, end_user_id, workspace_id, reason) select ${postQ}, 'eu_mailp' || i, ${ws.id}, 'voter' from generate_series(1, 2) i`)
}, 60_000)

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await h?.close()
  await drop?.()
  sink.close()
})

async function startServer(env: Record<string, string> = {}) {
  const smtp = `smtp://127.0.0.1:${(sink.server.address() as { port: number }).port}/?pool=true&maxConnections=8`
  return startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE, SMTP_URL: smtp, NOTIFY_BATCH_SECONDS: '0', RATE_LIMIT_PER_IP: '100000', ...env }, children)
}

const setStatus = async (postId: string, status: string) => expect((await api.patch(`/api/v1/posts/${postId}`, { status })).status).toBe(200)
const pendingUpdates = async () => rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from subscriber_updates where status = 'pending'`))[0]!.n

/** The e-mail's one-click unsubscribe link (RFC 8058), pointed at `port`. */
function oneClickOf(raw: string, port: number) {
  const header = raw.replace(/\r?\n[ \t]+/g, ' ').match(/^List-Unsubscribe: <([^>]+)>/im)![1]!.replace(/\s/g, '')
  return header.replace(BASE, `http://127.0.0.1:${port}`)
}

describe('subscriber mail from real processes on PostgreSQL', () => {
  test('a server killed with SIGKILL mid-send: after a restart every subscriber has the e-mail, duplicates bounded by one claim', async () => {
    delayMs = 25
    const first = await startServer()
    await setStatus(postP, 'Planned')
    await eventually(() => received() >= 20, 20_000, 'the first server sending')
    first.child.kill('SIGKILL')
    await first.child.exited
    const beforeCrash = received()
    expect(beforeCrash).toBeLessThan(SUBSCRIBERS) // killed mid-send
    delayMs = 0

    // The dead server's claimed batch waits out its 60 s lease (mail has no owner lock), then is resent.
    const second = await startServer()
    await eventually(async () => (await pendingUpdates()) === 0 && Array.from({ length: SUBSCRIBERS }, (_, i) => address(i + 1)).every((to) => inbox.has(to)), 120_000, 'every subscriber mailed')
    const copies = Array.from({ length: SUBSCRIBERS }, (_, i) => inbox.get(address(i + 1))!.length)
    expect(copies.every((n) => n >= 1)).toBe(true)
    // At-least-once: only the batch the dead process had claimed (≤ 200 end users) can go twice.
    const duplicates = copies.reduce((sum, n) => sum + n - 1, 0)
    expect(duplicates).toBeLessThanOrEqual(200)
    expect(copies.every((n) => n <= 2)).toBe(true)
    console.log(`kill -9 mid-send: ${beforeCrash} e-mails before the kill, ${duplicates} duplicates after the restart`)
    expect(inbox.get(address(1))![0]).toContain('Dark mode')
    second.child.kill('SIGTERM')
    expect(await second.child.exited).toBe(0)
  }, 180_000)

  test('an unsubscribe holds across a restart and across two processes', async () => {
    const firstRound = inbox.get(address(1))![0]!
    inbox.clear()
    const first = await startServer()
    // reader1 stops e-mail about P (the e-mail's one-click link), reader2 everything of the workspace, both through this process.
    const stopP = await fetch(oneClickOf(firstRound, first.port), { method: 'POST' })
    expect(stopP.status).toBe(200)
    const token2 = rowsOf<{ mail_token: string }>(await h.db.execute(sql`select mail_token from end_users where id = 'eu_mailp2'`))[0]!.mail_token
    expect((await fetch(`http://127.0.0.1:${first.port}/api/v1/public/${ws.slug}/notifications/unsubscribe?token=${token2}`, { method: 'POST' })).status).toBe(200)
    first.child.kill('SIGKILL')
    await first.child.exited

    // Two fresh processes; the batch window lets reader3 unsubscribe through one after the updates are queued, the other sends.
    const [a, b] = await Promise.all([startServer({ NOTIFY_BATCH_SECONDS: '4' }), startServer({ NOTIFY_BATCH_SECONDS: '4' })])
    await setStatus(postP, 'In progress')
    await setStatus(postQ, 'Planned')
    await eventually(async () => rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from subscriber_updates where end_user_id = 'eu_mailp3' and status = 'pending'`))[0]!.n === 1, 10_000, 'reader3 queued')
    const token3 = rowsOf<{ mail_token: string }>(await h.db.execute(sql`select mail_token from end_users where id = 'eu_mailp3'`))[0]!.mail_token
    expect((await fetch(`http://127.0.0.1:${a.port}/api/v1/public/${ws.slug}/notifications/unsubscribe?token=${token3}&post=${postP}`, { method: 'POST' })).status).toBe(200)

    await eventually(async () => (await pendingUpdates()) === 0 && received() >= SUBSCRIBERS - 2, 60_000, 'the second round sent')
    await Bun.sleep(500)
    // reader1 hears of Q only; reader2 and reader3 nothing; everyone else once.
    expect(inbox.get(address(1))).toHaveLength(1)
    expect(inbox.get(address(1))![0]).toContain('Offline mode')
    expect(inbox.get(address(1))![0]).not.toContain('Dark mode')
    expect(inbox.has(address(2))).toBe(false)
    expect(inbox.has(address(3))).toBe(false)
    expect(Array.from({ length: SUBSCRIBERS - 3 }, (_, i) => inbox.get(address(i + 4))?.length)).toEqual(Array(SUBSCRIBERS - 3).fill(1))
    for (const child of [a, b]) child.child.kill('SIGTERM')
    expect(await Promise.all([a.child.exited, b.child.exited])).toEqual([0, 0])
  }, 120_000)
})

