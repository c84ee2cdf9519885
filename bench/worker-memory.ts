// What the background worker thread costs in memory: an idle server process (the app listening on
// PostgreSQL, nothing calling it) without a background worker, with an empty Worker (a bare second VM,
// for scale), with the background worker idle (its rare loops not started: server/background/lazy-loop.ts),
// and with them started as by a first job. Each variant is a
// fresh process with the server's engine settings (server/cluster.ts engineEnv), measured after 4 s of
// settling and a full collection; BENCH_ROUNDS (2) rounds in alternating order, median reported.
// Usage: npm run bench:worker-memory   (needs a Postgres at BENCH_POSTGRES_URL).
import { createApp } from '../server/app.ts'
import { startBackground } from '../server/background/supervisor.ts'
import { engineEnv } from '../server/cluster.ts'
import { getConfig } from '../server/config.ts'
import { openDatabase } from '../server/db/client.ts'
import { sql } from '../server/db/sql-text.ts'
import { benchDatabase } from './database.ts'
import { writeSection } from './report.ts'

const SECRET = 'bench-secret-key-long-enough-0123456789abcdef'
const VARIANTS = ['no worker', 'empty Worker', 'Worker with postgres.js listening', 'background worker', 'background worker, rare loops started'] as const
type Variant = (typeof VARIANTS)[number]
const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024

if (process.argv[2] === 'child') {
  const variant = process.argv[3] as Variant
  const config = { ...getConfig({ ...process.env, SECRET_KEY: SECRET, LOG_LEVEL: 'silent' }), secretKey: SECRET }
  const database = openDatabase(config.databaseUrl, config.dataDir)
  const { app, ctx } = await createApp({ config, database })
  app.listen({ port: 0, hostname: '127.0.0.1' })
  let stop = async () => {}
  if (variant === 'empty Worker') {
    const worker = new Worker(URL.createObjectURL(new Blob(['self.onmessage = () => {}'])))
    stop = async () => worker.terminate()
  } else if (variant === 'Worker with postgres.js listening') {
    // The floor of any worker on the required driver: postgres.js loaded, one connection open, one LISTEN.
    const worker = new Worker(new URL('./worker-memory-driver.ts', import.meta.url).href)
    await new Promise((resolve) => (worker.onmessage = resolve))
    stop = async () => worker.terminate()
  } else if (variant !== 'no worker') {
    const background = startBackground(ctx)
    await background.ready()
    stop = () => background.stop()
    // What a server holds after its first mail, duplicate check or import: each rare loop started by a
    // notification on its tables (server/background/lazy-loop.ts), which loads it with drizzle and the
    // schema, then claims nothing (the job's own code, such as the similarity search, is not counted).
    if (variant === 'background worker, rare loops started') {
      for (const table of ['notification_events', 'duplicate_checks', 'imports']) await database.sql.rows(sql`select pg_notify(${`chorus_work_${table}`}, '')`)
    }
  }
  await Bun.sleep(4000)
  Bun.gc(true)
  await Bun.sleep(500)
  console.log(JSON.stringify({ variant, rss: rssMiB() }))
  await stop()
  await app.stop()
  await database.close()
  process.exit(0)
}

const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const bench = await benchDatabase('chorus_bench_wmem')
try {
  const database = openDatabase(bench.url, '')
  await database.migrate()
  await database.close()
  const results = new Map<Variant, number[]>(VARIANTS.map((variant) => [variant, []]))
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 ? [...VARIANTS].reverse() : VARIANTS) {
      const child = Bun.spawn([process.execPath, 'bench/worker-memory.ts', 'child', variant], { cwd: new URL('..', import.meta.url).pathname, env: { ...process.env, ...engineEnv(process.env), DATABASE_URL: bench.url }, stdout: 'pipe', stderr: 'inherit' })
      const line = JSON.parse((await new Response(child.stdout).text()).trim().split('\n').at(-1)!) as { rss: number }
      results.get(variant)!.push(line.rss)
      console.log({ round, variant, rss: line.rss.toFixed(1) })
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const base = median(results.get('no worker')!)
  await writeSection('Background worker: memory', [
    `An idle server process (the app listening on PostgreSQL, no requests; the last variant with the worker's rare loops started by a notification, as by a first mail, duplicate check or import), a fresh process per variant with the server's engine settings, RSS after 4 s and a full collection; median of ${rounds} rounds (range in brackets). "Worker with postgres.js listening" is the floor of a worker on the required driver: a Worker that only loads postgres.js, opens one connection and LISTENs (bench/worker-memory-driver.ts). Goal: the background worker adds at most 6 MiB.`,
    '',
    '| variant | RSS | against no worker |',
    '|---|---|---|',
    ...VARIANTS.map((variant) => {
      const values = results.get(variant)!
      return `| ${variant} | ${median(values).toFixed(1)} MiB (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}) | +${(median(values) - base).toFixed(1)} MiB |`
    }),
  ])
} finally {
  await bench.drop()
}
