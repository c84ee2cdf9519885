// Close the loop (issue 32): a status change on a post with BENCH_SUBSCRIBERS (10,000) confirmed subscribers,
// on a fresh local PostgreSQL database, the app in this process.
//   queue: from the PATCH's commit to every subscriber's update row written by the dispatcher (target: 2 s).
//   send:  BENCH_MAILS (all 10,000) of those e-mails through the real mail path (batched claim, one sender
//          lookup and one render per language per batch, nodemailer over pooled SMTP connections, one
//          marking transaction per batch) to a local SMTP sink (`smtp-server`), BENCH_SENDERS (2) sender
//          loops side by side as two processes would run them: e-mails per second (target: 500/s).
// Usage: bun bench/notify.ts   (needs a Postgres at BENCH_POSTGRES_URL).
import { loadavg } from 'node:os'
import { sql } from 'drizzle-orm'
import { SMTPServer } from 'smtp-server'
import { createApp } from '../server/app.ts'
import { getConfig } from '../server/config.ts'
import { openDatabase, rowsOf, runnerOf } from '../server/db/client.ts'
import { boards, posts, statuses } from '../server/db/schema/index.ts'
import { dispatchEvents } from '../server/events/dispatch.ts'
import { newId } from '../server/lib/ids.ts'
import { findOrCreateUser } from '../server/modules/auth/service.ts'
import { sendSubscriberMail } from '../server/modules/post-subscriptions/mail.ts'
import { updatePost } from '../server/modules/posts/service.ts'
import { createWorkspace } from '../server/modules/workspaces/service.ts'
import { benchDatabase } from './database.ts'
import { writeSection } from './report.ts'

const subscribers = Number(process.env.BENCH_SUBSCRIBERS ?? 10_000)
const mails = Math.min(subscribers, Number(process.env.BENCH_MAILS ?? subscribers))
const senders = Number(process.env.BENCH_SENDERS ?? 2)

let received = 0
const sink = new SMTPServer({
  authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {})
    stream.on('end', () => { received++; callback() })
  },
})
sink.on('error', () => {}) // a sender process stopped mid-message is not the bench's error
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
const sinkPort = (sink.server.address() as { port: number }).port

const bench = await benchDatabase('chorus_bench_notify')
const database = openDatabase(bench.url, '')
await database.migrate()
// `pool=true`: nodemailer keeps SMTP connections open (docs/notifications.md recommends it for volume).
const config = getConfig({ SECRET_KEY: 'bench-secret-key-that-is-long-enough-0123456789', LOG_LEVEL: 'silent', BASE_URL: 'http://localhost:3000', SMTP_URL: `smtp://127.0.0.1:${sinkPort}/?pool=true&maxConnections=${senders * 8}&maxMessages=100000`, NOTIFY_BATCH_SECONDS: '0' })
const { ctx } = await createApp({ config, database })
const db = ctx.db
try {
  const owner = await findOrCreateUser(db, 'owner@bench.example')
  const workspace = await createWorkspace(db, owner.id, { name: 'Bench', slug: 'bench' })
  const boardId = newId('board')
  await db.insert(boards).values({ id: boardId, workspaceId: workspace.id, slug: 'ideas', name: 'Ideas' })
  const [open] = await db.select().from(statuses).where(sql`${statuses.workspaceId} = ${workspace.id} and ${statuses.name} = 'Open'`)
  const postId = newId('post')
  await db.insert(posts).values({ id: postId, workspaceId: workspace.id, boardId, title: 'Dark mode', statusId: open!.id })
  await db.execute(sql`insert into end_users (id, workspace_id, email, verified_at, locale)
    select 'eu_bench' || i, ${workspace.id}, 'reader' || i || '@bench.example', now(), (array['en','de','fr','es','ja','ar','he'])[1 + i % 7] from generate_series(1, ${subscribers}) i`)
  await db.execute(sql`insert into post_subscriptions (post_id, end_user_id, workspace_id, reason) select ${postId}, 'eu_bench' || i, ${workspace.id}, 'voter' from generate_series(1, ${subscribers}) i`)
  await db.execute(sql`analyze`)

  const started = performance.now()
  await updatePost(db, workspace.id, { kind: 'service' }, postId, { status: 'Planned', status_message: 'Scheduled for March.' })
  const committed = performance.now()
  while (await dispatchEvents(runnerOf(db)));
  const queued = performance.now()
  const [count] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from subscriber_updates where status = 'pending'`))

  // Only the first BENCH_MAILS are sent; the rest are set aside.
  await db.execute(sql`update subscriber_updates set status = 'skipped' where end_user_id not in (select 'eu_bench' || i from generate_series(1, ${mails}) i)`)
  const sendStart = performance.now()
  await Promise.all(Array.from({ length: senders }, async () => { while (await sendSubscriberMail(ctx)); }))
  const sendEnd = performance.now()
  // Baseline (the least work): the same number of one pre-rendered e-mail through a pooled nodemailer
  // transport to the same sink, no database: what this machine's SMTP path alone allows.
  const { createTransport } = await import('nodemailer')
  const transport = createTransport(config.smtpUrl!)
  const sample = { from: 'bench@localhost', subject: '[Bench] Dark mode', text: 'Open → Planned\n'.repeat(20), html: '<p>Open → Planned</p>'.repeat(20) }
  const receivedBefore = received
  const rawStart = performance.now()
  let next = 0
  await Promise.all(Array.from({ length: senders * 16 }, async () => { while (next < mails) await transport.sendMail({ ...sample, to: `reader${next++}@bench.example` }) }))
  const rawSeconds = (performance.now() - rawStart) / 1000
  transport.close()
  const rawRate = Math.round((received - receivedBefore) / rawSeconds)
  received = receivedBefore
  const [sent] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from subscriber_updates where status = 'sent'`))
  const rate = Math.round(received / ((sendEnd - sendStart) / 1000))
  const lines = [
    `Measured on a shared, busy machine (2026-11-28, load average ${loadavg().map((n) => n.toFixed(1)).join(' ')}); not final figures.`,
    '',
    `| step | figure |`,
    `| --- | --- |`,
    `| status change committed (PATCH service call) | ${(committed - started).toFixed(0)} ms |`,
    `| ${count!.n.toLocaleString('en')} subscriber updates queued by the dispatcher after the commit | ${(queued - committed).toFixed(0)} ms |`,
    `| ${mails.toLocaleString('en')} e-mails sent to the local SMTP sink (${senders} sender loops, 16 in flight each, pooled SMTP) | ${((sendEnd - sendStart) / 1000).toFixed(1)} s, ${rate}/s |`,
    `| marked sent / received by the sink | ${sent!.n} / ${received} |`,
    `| baseline: the same number of one pre-rendered e-mail, nodemailer pooled, no database | ${rawSeconds.toFixed(1)} s, ${rawRate}/s (Chorus at ${(rate / rawRate).toFixed(2)}× of it) |`,
  ]
  console.log(lines.join('\n'))
  if (process.env.BENCH_REPORT) await writeSection('Post updates to subscribers (bench/notify.ts)', lines)
} finally {
  ctx.limiter.close()
  await database.close()
  await bench.drop()
  sink.close()
}
