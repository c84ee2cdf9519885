// Webhook delivery under load: events are committed to the outbox at a steady 500/s for ~10 s while a
// real server process (`bun server/index.ts`, worker-thread delivery, local PostgreSQL) delivers them
// to a local receiver. Reports the offered rate and latency from commit to receipt (p50/p99/max).
// Usage: npm run bench:webhooks   (needs a Postgres at BENCH_POSTGRES_URL, default 127.0.0.1:5432).
import postgres from 'postgres'
import { openDatabase } from '../server/db/client.ts'
import { createDns } from '../server/lib/dns.ts'
import { createOutbound } from '../server/lib/outbound.ts'
import { createSecrets } from '../server/lib/secrets.ts'
import { findOrCreateUser } from '../server/modules/auth/service.ts'
import { recordEvent } from '../server/events/outbox.ts'
import { createWebhook } from '../server/modules/webhooks/service.ts'
import { createWorkspace } from '../server/modules/workspaces/service.ts'
import { startServerProcess } from '../test/helpers/server-process.ts'
import { writeSection } from './report.ts'

const admin = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const rate = Number(process.env.BENCH_RATE ?? 500)
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const SECRET = 'bench-secret-key-that-is-long-enough-0123456789'
const now = () => performance.timeOrigin + performance.now()

const name = `chorus_bench_wh_${Date.now().toString(36)}`
const server = postgres(admin, { max: 1, onnotice: () => {} })
await server.unsafe(`create database ${name}`)
const url = new URL(admin)
url.pathname = `/${name}`
const databaseUrl = url.toString()
const database = openDatabase(databaseUrl, '')

const received = new Map<string, number>()
let duplicates = 0
const receiver = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const at = now()
    const id = request.headers.get('webhook-id')!
    await request.arrayBuffer()
    if (received.has(id)) duplicates++
    else received.set(id, at)
    return new Response('ok')
  },
})

let child: ReturnType<typeof Bun.spawn> | undefined
try {
  await database.migrate()
  const user = await findOrCreateUser(database.db, 'bench@example.com')
  const workspace = await createWorkspace(database.db, user.id, { name: 'Bench', slug: 'bench' })
  await createWebhook({ db: database.db, outbound: createOutbound({ dns: createDns(undefined), allowPrivate: true }), secrets: await createSecrets(SECRET) }, workspace.id, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['post.created'] })

  child = (await startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: SECRET, WEBHOOK_ALLOW_PRIVATE: 'true' })).child

  const total = rate * seconds
  const committed = new Map<string, number>()
  const writes: Promise<void>[] = []
  const started = now()
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate
    const wait = due - now()
    if (wait > 1) await Bun.sleep(wait)
    writes.push(database.db.transaction((tx) => recordEvent(tx, workspace.id, 'post.created', { post: { id: `post_bench_${i}`, title: `Event ${i}` } }))
      .then((id) => void committed.set(id, now())))
  }
  await Promise.all(writes)
  const offeredFor = (now() - started) / 1000

  const deadline = now() + 60_000
  while (received.size < committed.size && now() < deadline) await Bun.sleep(50)
  const latencies = [...committed].map(([id, at]) => Math.max(0, (received.get(id) ?? Number.NaN) - at)).filter(Number.isFinite).sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1)
  const result = {
    offered: Math.round(committed.size / offeredFor),
    delivered: received.size,
    lost: committed.size - received.size,
    duplicates,
    p50: pct(50),
    p99: pct(99),
    max: latencies[latencies.length - 1]!.toFixed(1),
  }
  console.log(result)
  const lines = [
    `${committed.size} events committed to the outbox (one transaction each) at a target of ${rate}/s for ${seconds} s; one \`bun server/index.ts\` process on the local PostgreSQL delivers them from its worker thread to a local Bun.serve receiver (one endpoint).`,
    '',
    '| offered events/s | delivered | lost | duplicates | latency p50 | p99 | max |',
    '|---|---|---|---|---|---|---|',
    `| ${result.offered} | ${result.delivered} | ${result.lost} | ${result.duplicates} | ${result.p50} ms | ${result.p99} ms | ${result.max} ms |`,
    '',
    'Latency runs from the commit returning in the load generator to the request reaching the receiver; the worker polls the outbox every 100 ms when idle, which accounts for most of it.',
  ]
  await writeSection('Webhooks: delivery latency at 500 events/s', lines)
} finally {
  child?.kill('SIGTERM')
  await child?.exited
  receiver.stop(true)
  await database.close()
  await server.unsafe(`drop database if exists ${name} with (force)`)
  await server.end()
}
