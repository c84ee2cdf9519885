// Webhook delivery, Chorus beside two baselines in one run (bench/raw-webhooks.ts, the least work: design
// overhead; bench/same-queries-webhooks.ts, Chorus's statements in a bare loop: framework overhead), on a fresh local
// PostgreSQL database; the server alone on core 0, this process (load generator and receiver) on core 1.
//   latency:    events committed one per transaction at a steady BENCH_RATE (500/s) for BENCH_SECONDS, after
//               BENCH_WARMUP_SECONDS (3) of the same load that is not counted;
//               latency from the commit returning to the request reaching the receiver.
//   throughput: the deliverer warmed the same way, then frozen (SIGSTOP) while a backlog of BENCH_BACKLOG
//               (30,000) events is committed, then resumed: deliveries per second from the first receipt to the last.
//   isolation:  latency at BENCH_ISOLATION_RATE (100/s) idle, then again while Chorus's main thread is
//               saturated by the posts list (bench/open-loop.ts offering far more than it serves, 50 in flight,
//               on core 1 at nice 19, BENCH_LOAD_NICE); the background worker thread should keep delivering at
//               about its idle latency. The worker thread is moved to core 1 (BENCH_ISOLATION_WORKER_CORE=0 keeps
//               it beside the main thread). The raw deliverer runs on the worker's core beside it and is measured
//               the same way after Chorus: the load's cost to any deliverer on this machine.
// Both count every event received, lost and received twice. Chorus runs one process (WEB_CONCURRENCY=1)
// with one endpoint subscribed, so each event is one delivery.
// Usage: npm run bench:webhooks   (needs taskset and a Postgres at BENCH_POSTGRES_URL).
import { readdirSync, readFileSync } from 'node:fs'
import postgres from 'postgres'
import { openDatabase } from '../server/db/client.ts'
import { events } from '../server/db/schema/index.ts'
import { createDns } from '../server/lib/dns.ts'
import { newId } from '../server/lib/ids.ts'
import { createOutbound } from '../server/lib/outbound.ts'
import { createSecrets } from '../server/lib/secrets.ts'
import { findOrCreateUser } from '../server/modules/auth/service.ts'
import { createApiKey } from '../server/modules/api-keys/service.ts'
import { boards } from '../server/db/schema/index.ts'
import type { OpenLoopResult } from './open-loop.ts'
import { recordEvent } from '../server/events/outbox.ts'
import { createWebhook } from '../server/modules/webhooks/service.ts'
import { createWorkspace } from '../server/modules/workspaces/service.ts'
import { benchDatabase } from './database.ts'
import { engineEnv } from '../server/cluster.ts'
import { writeSection } from './report.ts'

const rate = Number(process.env.BENCH_RATE ?? 500)
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3)
const backlog = Number(process.env.BENCH_BACKLOG ?? 30_000)
const phases = (process.env.BENCH_PHASES ?? 'latency,throughput,isolation').split(',')
const isolationRate = Number(process.env.BENCH_ISOLATION_RATE ?? 100)
const SECRET = 'bench-secret-key-that-is-long-enough-0123456789'
const RAW_SECRET = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64')
const now = () => performance.timeOrigin + performance.now()
const ROOT = new URL('..', import.meta.url).pathname

Bun.spawnSync(['taskset', '-a', '-cp', '1', String(process.pid)])

const bench = await benchDatabase('chorus_bench_wh')
const databaseUrl = bench.url
const database = openDatabase(databaseUrl, '')
const raw = postgres(databaseUrl, { max: 10, onnotice: () => {} })

/** Receipt time of each event id, and how many arrived again. */
let received = new Map<string, number>()
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
const reset = () => { received = new Map(); duplicates = 0 }

type Kind = 'chorus' | 'raw' | 'same'
const COMMANDS: Record<Kind, { command: string[]; ready: string; label: string }> = {
  raw: { command: ['bun', 'bench/raw-webhooks.ts'], ready: 'raw webhooks ready', label: 'raw baseline (least work)' },
  same: { command: ['bun', 'bench/same-queries-webhooks.ts'], ready: 'same-queries webhooks ready', label: 'same-queries baseline' },
  chorus: { command: ['bun', 'server/index.ts'], ready: 'webhook delivery ready', label: 'Chorus' },
}

/** Starts the Chorus server or a baseline deliverer on `core` (0); resolves once it is ready to deliver. */
async function startDeliverer(kind: Kind, core = '0') {
  const { command, ready } = COMMANDS[kind]
  const env = { ...process.env, ...(kind === 'chorus' && engineEnv(process.env)), DATABASE_URL: databaseUrl, SECRET_KEY: SECRET, WEBHOOK_ALLOW_PRIVATE: 'true', WEB_CONCURRENCY: '1', PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000', RECEIVER_URL: `http://127.0.0.1:${receiver.port}/raw`, WEBHOOK_SECRET: RAW_SECRET }
  const child = Bun.spawn(['taskset', '-c', core, ...command], { cwd: ROOT, env, stdout: 'pipe', stderr: 'inherit' })
  const reader = child.stdout.getReader()
  let output = ''
  while (!output.includes(ready)) {
    const chunk = await reader.read()
    if (chunk.done) throw new Error(`${kind} did not start: ${output}`)
    output += new TextDecoder().decode(chunk.value)
  }
  void (async () => { while (!(await reader.read()).done); })().catch(() => {})
  const listening = output.split('\n').find((line) => line.includes('chorus listening'))
  return {
    port: listening ? (JSON.parse(listening).port as number) : 0,
    pid: child.pid,
    async stop() {
      child.kill('SIGCONT')
      child.kill('SIGTERM')
      await child.exited
    },
    /** Freezes the process (SIGSTOP) so a backlog can pile up behind a deliverer that is already warm. */
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
  }
}

/**
 * Moves the server's background worker thread (Bun names it "Worker") to BENCH_ISOLATION_WORKER_CORE (default 1,
 * beside the load generator and the receiver); the main thread and the engine's helper threads stay on core 0.
 */
function pinWorkerThread(pid: number) {
  const core = process.env.BENCH_ISOLATION_WORKER_CORE ?? '1'
  const threads = readdirSync(`/proc/${pid}/task`)
  const worker = threads.find((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'Worker')
  if (!worker) throw new Error(`no thread named Worker in process ${pid}`)
  Bun.spawnSync(['taskset', '-cp', core, worker])
  return core
}

type Commit = (i: number) => Promise<string>

/** Commits `total` events at `rate`/s, one per transaction; returns each event's commit time and the offered rate. */
async function offer(commit: Commit, total: number, perSecond = rate) {
  const committed = new Map<string, number>()
  const writes: Promise<void>[] = []
  const started = now()
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / perSecond - now()
    if (wait > 1) await Bun.sleep(wait)
    writes.push(commit(i).then((id) => void committed.set(id, now())))
  }
  await Promise.all(writes)
  return { committed, offered: committed.size / ((now() - started) / 1000) }
}

async function waitForAll(ids: Iterable<string>, count: number, timeoutMs = 120_000) {
  const deadline = now() + timeoutMs
  while (received.size < count && now() < deadline) await Bun.sleep(20)
  await Bun.sleep(500) // late duplicates
  let lost = 0
  for (const id of ids) if (!received.has(id)) lost++
  return lost
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

try {
  await database.migrate()
  await raw`create table bench_raw_events (id text primary key, type text not null, data jsonb not null, created_at timestamptz not null default now())`
  const user = await findOrCreateUser(database.db, 'bench@example.com')
  const workspace = await createWorkspace(database.db, user.id, { name: 'Bench', slug: 'bench' })
  await createWebhook({ db: database.db, outbound: createOutbound({ dns: createDns(undefined), allowPrivate: true }), secrets: await createSecrets(SECRET) }, workspace.id, { url: `http://127.0.0.1:${receiver.port}/chorus`, events: ['post.created'] })
  const data = (i: number) => ({ post: { id: `post_bench_${i}`, title: `Event ${i}` } })
  const chorusCommit: Commit = (i) => database.db.transaction((tx) => recordEvent(tx, workspace.id, 'post.created', data(i)))
  const commits: Record<Kind, Commit> = {
    chorus: chorusCommit,
    // The same-queries baseline delivers Chorus's own queue: events written as Chorus's are.
    same: chorusCommit,
    raw: async (i) => {
      const id = newId('event')
      await raw`insert into bench_raw_events (id, type, data) values (${id}, 'post.created', ${raw.json(data(i))})`
      return id
    },
  }
  const kinds = ['raw', 'same', 'chorus'] as const

  if (phases.includes('latency')) {
    const rows: string[] = []
    for (const kind of kinds) {
      const deliverer = await startDeliverer(kind)
      try {
        // The same load for a few seconds first, not counted: a process just started runs its code cold
        // (Chorus's first second ran at 400-500 ms per event before its JIT caught up), as bench/posts.ts warms up too.
        reset()
        const warm = await offer(commits[kind], rate * warmupSeconds)
        await waitForAll(warm.committed.keys(), warm.committed.size)
        reset()
        const { committed, offered } = await offer(commits[kind], rate * seconds)
        const lost = await waitForAll(committed.keys(), committed.size)
        const latencies = [...committed].map(([id, at]) => Math.max(0, (received.get(id) ?? Number.NaN) - at)).filter(Number.isFinite).sort((a, b) => a - b)
        const line = { kind, offered: Math.round(offered), delivered: latencies.length, lost, duplicates, p50: percentile(latencies, 50).toFixed(1), p99: percentile(latencies, 99).toFixed(1), max: latencies.at(-1)!.toFixed(1) }
        console.log(line)
        rows.push(`| ${COMMANDS[kind].label} | ${line.offered} | ${line.delivered} | ${line.lost} | ${line.duplicates} | ${line.p50} ms | ${line.p99} ms | ${line.max} ms |`)
      } finally {
        await deliverer.stop()
      }
    }
    await writeSection('Webhooks: delivery latency at 500 events/s', [
      `${rate * seconds} events committed one per transaction at a target of ${rate}/s for ${seconds} s (after ${warmupSeconds} s of the same load, not counted), to each deliverer in turn: the raw baseline (bench/raw-webhooks.ts: LISTEN, DELETE ... SKIP LOCKED, signed POST, one log insert per batch), the same-queries baseline (bench/same-queries-webhooks.ts: Chorus's fan-out, lane and record statements on its pool, plain fetch, one loop in one thread) and one \`bun server/index.ts\` process (WEB_CONCURRENCY=1; outbox trigger, webhook lane, leased claims, signed POST, logs) on the local PostgreSQL; the deliverer on core 0, load generator and receiver (Bun.serve) on core 1. Latency runs from the commit returning in the load generator to the request reaching the receiver. Goal: Chorus p99 < 250 ms.`,
      '',
      '| deliverer | offered events/s | delivered | lost | duplicates | latency p50 | p99 | max |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
    ])
  }

  if (phases.includes('throughput')) {
    const rows: string[] = []
    const rates: Partial<Record<Kind, number>> = {}
    for (const kind of kinds) {
      // Warm first (as in the latency phase), then frozen while the backlog is committed, so the drain
      // measures a running deliverer rather than a process's first second of cold code.
      const deliverer = await startDeliverer(kind)
      try {
        // Counted from empty: the latency phase's receipts would end the wait before this warm-up is delivered,
        // and its stragglers would then count as backlog received (and end the drain's wait early).
        reset()
        const warm = await offer(commits[kind], rate * warmupSeconds)
        await waitForAll(warm.committed.keys(), warm.committed.size)
        deliverer.pause()
        reset()
        const ids: string[] = []
        for (let start = 0; start < backlog; start += 1000) {
          const batch = Array.from({ length: Math.min(1000, backlog - start) }, (_, j) => ({ id: newId('event'), type: 'post.created', data: data(start + j) }))
          ids.push(...batch.map((row) => row.id))
          if (kind !== 'raw') await database.db.insert(events).values(batch.map((row) => ({ ...row, workspaceId: workspace.id })))
          else await raw`insert into bench_raw_events ${raw(batch.map((row) => ({ ...row, data: raw.json(row.data) })), 'id', 'type', 'data')}`
        }
        const startedAt = now()
        deliverer.resume()
        const lost = await waitForAll(ids, ids.length)
        const times = [...received.values()].sort((a, b) => a - b)
        const perSecond = (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000)
        rates[kind] = perSecond
        const against = (baseline: Kind) => (kind === baseline ? '1.00×' : kind === 'raw' ? '' : `${(perSecond / rates[baseline]!).toFixed(2)}×`)
        const line = { kind, backlog: ids.length, delivered: received.size, lost, duplicates, perSecond: Math.round(perSecond), drainedIn: ((times.at(-1)! - startedAt) / 1000).toFixed(1) }
        console.log(line)
        rows.push(`| ${COMMANDS[kind].label} | ${line.backlog} | ${line.delivered} | ${line.lost} | ${line.duplicates} | **${line.perSecond}** | ${line.drainedIn} s | ${against('raw')} | ${against('same')} |`)
      } finally {
        await deliverer.stop()
      }
    }
    await writeSection('Webhooks: sustained deliveries per second', [
      `Each deliverer is started on core 0 and warmed with ${warmupSeconds} s of events at ${rate}/s, then frozen (SIGSTOP) while a backlog of ${backlog.toLocaleString('en')} events is committed (1,000 per transaction), then resumed; the receiver (Bun.serve, answers 200 at once) on core 1. Deliveries per second run from the first receipt to the last; "drained in" counts from the resume. The raw baseline does the least work a delivery needs (design overhead); the same-queries baseline runs Chorus's statements with the least JavaScript around them (framework overhead: Chorus's delivery loop, outbound guard, worker thread and engine settings). Goal: Chorus ≥ 5,000 deliveries/s, none lost or duplicated.`,
      '',
      '| deliverer | backlog | delivered | lost | duplicates | deliveries/s | drained in | against raw | against same queries |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ])
  }

  if (phases.includes('isolation')) {
    // A board of 200 posts and a key to list them with: the main thread's load.
    const boardId = newId('board')
    await database.db.insert(boards).values({ id: boardId, workspaceId: workspace.id, slug: 'ideas', name: 'Ideas' })
    await raw`insert into posts (id, workspace_id, board_id, title, body, status_id, author_name, created_at, updated_at)
      select 'post_iso' || g, ${workspace.id}, ${boardId}, 'Isolation ' || g, 'A post to list.', (select id from statuses where workspace_id = ${workspace.id} order by position limit 1), 'Bench', now() - g * interval '1 minute', now() - g * interval '1 minute'
      from generate_series(1, 200) g`
    const { secret: key } = await createApiKey(database.db, workspace.id, (await findOrCreateUser(database.db, 'bench@example.com')).id, { name: 'bench', scopes: ['posts:read'] })
    const latencyAt = async (perSecond: number, kind: Kind = 'chorus') => {
      reset()
      const { committed } = await offer(commits[kind], perSecond * seconds, perSecond)
      const lost = await waitForAll(committed.keys(), committed.size)
      const latencies = [...committed].map(([id, at]) => Math.max(0, (received.get(id) ?? Number.NaN) - at)).filter(Number.isFinite).sort((a, b) => a - b)
      return { delivered: latencies.length, lost, duplicates, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
    }
    const deliverer = await startDeliverer('chorus')
    // The machine's share of the growth: the raw deliverer, a process of its own on the worker thread's core that
    // shares nothing with the server, measured idle and under the same load right after Chorus.
    let rawDeliverer: Awaited<ReturnType<typeof startDeliverer>> | undefined
    try {
      const workerCore = pinWorkerThread(deliverer.pid)
      rawDeliverer = await startDeliverer('raw', workerCore)
      for (const kind of kinds) {
        reset()
        const warm = await offer(commits[kind], rate * warmupSeconds)
        await waitForAll(warm.committed.keys(), warm.committed.size)
      }
      const idle = await latencyAt(isolationRate)
      const rawIdle = await latencyAt(isolationRate, 'raw')
      // More lists offered than one thread serves here (~1,000-2,000/s), 50 in flight: the main thread is saturated throughout.
      // The load generator stands in for clients on other machines: at nice 19 (BENCH_LOAD_NICE) it still offers
      // the same lists (its achieved rate is reported) but no longer preempts the worker thread on their shared core.
      const load = Bun.spawn(['nice', '-n', process.env.BENCH_LOAD_NICE ?? '19', 'taskset', '-c', '1', 'bun', 'bench/open-loop.ts', JSON.stringify({ url: `http://127.0.0.1:${deliverer.port}/api/v1/boards/ideas/posts?per_page=20&sort=top`, headers: { authorization: `Bearer ${key}` }, rate: 3000, seconds: 2 * seconds + 6, connections: 50 })], { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' })
      await Bun.sleep(2000)
      const busy = await latencyAt(isolationRate)
      const rawBusy = await latencyAt(isolationRate, 'raw')
      const listed = JSON.parse((await new Response(load.stdout).text()).trim().split('\n').at(-1)!) as OpenLoopResult
      console.log({ idle, busy, rawIdle, rawBusy, listed })
      const row = (deliverer: string, label: string, r: typeof idle) => `| ${deliverer} | ${label} | ${r.delivered} | ${r.lost} | ${r.duplicates} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms |`
      await writeSection('Webhooks: isolation from the main thread', [
        `One \`bun server/index.ts\` (PostgreSQL), its main thread on core 0 and its background worker thread on core ${workerCore} (BENCH_ISOLATION_WORKER_CORE; with both on core 0 the saturated main thread takes half the worker's core, which measures CPU share, not the threads' isolation); events committed at ${isolationRate}/s for ${seconds} s, first with the server idle, then while bench/open-loop.ts (core 1 at nice ${process.env.BENCH_LOAD_NICE ?? '19'}, 50 in flight, 3,000 lists/s offered: beyond what the process serves) keeps its main thread saturated with \`GET /boards/ideas/posts?per_page=20&sort=top\` (200 posts): it completed ${listed.completed} lists at ${listed.achieved.toFixed(0)}/s over its run. Delivery runs in the background worker thread. The raw baseline (bench/raw-webhooks.ts, a process of its own on core ${workerCore}, sharing nothing with the server) is measured the same way right after Chorus, idle and under the same load: its growth is what the load costs any deliverer on this machine (the list's PostgreSQL backends take both cores), not what sharing a process with the main thread costs. Goal: p99 under load within 2× idle.`,
        '',
        '| deliverer | server\'s main thread | delivered | lost | duplicates | latency p50 | p99 |',
        '|---|---|---|---|---|---|---|',
        row('Chorus', 'idle', idle),
        row('Chorus', 'saturated by the posts list', busy),
        row('raw baseline', 'idle', rawIdle),
        row('raw baseline', 'saturated by the posts list', rawBusy),
        '',
        `Ratio of the p99s: Chorus ${(busy.p99 / idle.p99).toFixed(2)}×, raw baseline ${(rawBusy.p99 / rawIdle.p99).toFixed(2)}×.`,
      ])
    } finally {
      await rawDeliverer?.stop()
      await deliverer.stop()
    }
  }
} finally {
  receiver.stop(true)
  await raw.end()
  await database.close()
  await bench.drop()
}
