// GET /api/v1/posts/:id through Chorus (Elysia + drizzle, prepared hot path) against a raw Bun.serve +
// postgres.js handler doing the same work, on one fresh Postgres database. Servers are pinned to core 0
// and wrk to core 1. Usage: npm run bench:http   (needs wrk and a Postgres at BENCH_POSTGRES_URL).
import { createApiKey } from '../server/modules/api-keys/service.ts'
import { findOrCreateUser } from '../server/modules/auth/service.ts'
import { createPost } from '../server/modules/posts/service.ts'
import { createWorkspace } from '../server/modules/workspaces/service.ts'
import { openDatabase } from '../server/db/client.ts'
import { boards, labels } from '../server/db/schema/index.ts'
import { newId } from '../server/lib/ids.ts'
import { benchDatabase } from './database.ts'
import { engineEnv } from '../server/cluster.ts'
import { PAIR_ORDER, runPair, writeSection } from './report.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const bench = await benchDatabase('chorus_bench')
const databaseUrl = bench.url

async function seed() {
  const database = openDatabase(databaseUrl, '')
  await database.migrate()
  const user = await findOrCreateUser(database.db, 'bench@example.com')
  const workspace = await createWorkspace(database.db, user.id, { name: 'Bench', slug: 'bench' })
  await database.db.insert(boards).values({ id: newId('board'), workspaceId: workspace.id, slug: 'ideas', name: 'Ideas' })
  await database.db.insert(labels).values({ id: newId('label'), workspaceId: workspace.id, slug: 'ux', name: 'UX' })
  const { secret, key } = await createApiKey(database.db, workspace.id, user.id, { name: 'bench', scopes: ['posts:read'] })
  const caller = { kind: 'api_key' as const, keyId: key.id, name: key.name, scopes: key.scopes, workspaceId: workspace.id }
  const post = await createPost(database.db, workspace.id, caller, 'ideas', { title: 'Dark mode', body: 'Please', labels: ['ux'] })
  await database.close()
  return { key: secret, postId: post.id }
}

async function waitFor(port: number) {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/`)
      return
    } catch {
      await Bun.sleep(100)
    }
  }
  throw new Error(`nothing listening on ${port}`)
}

function wrk(port: number, path: string, key: string) {
  const run = Bun.spawnSync(['taskset', '-c', '1', 'wrk', '-t1', '-c32', `-d${seconds}s`, '--latency', '-H', `Authorization: Bearer ${key}`, `http://127.0.0.1:${port}${path}`])
  const out = run.stdout.toString()
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])
  const p50 = /50%\s+([\d.]+\w+)/.exec(out)?.[1]
  const p99 = /99%\s+([\d.]+\w+)/.exec(out)?.[1]
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
  if (!rps || non2xx) throw new Error(`wrk failed or saw errors:\n${out}`)
  return { rps, p50, p99 }
}

async function measure(label: string, command: string[], port: number, path: string, key: string) {
  const env = { ...process.env, ...(command.includes('server/index.ts') && engineEnv(process.env)), DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'silent', SECRET_KEY: 'bench-secret-key-long-enough-0123456789abcdef', RATE_LIMIT_PER_KEY: '1000000' }
  const child = Bun.spawn(['taskset', '-c', '0', ...command], { env, stdout: 'ignore', stderr: 'inherit' })
  try {
    await waitFor(port)
    wrk(port, path, key) // warm-up: JIT and connection pool
    const result = wrk(port, path, key)
    const memory = Number((await Bun.file(`/proc/${child.pid}/status`).text()).match(/VmRSS:\s+(\d+)/)?.[1]) / 1024
    console.log(`${label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50}, p99 ${result.p99}, RSS ${memory.toFixed(0)} MiB`)
    return { ...result, memory }
  } finally {
    child.kill()
    await child.exited
  }
}

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)

try {
  const { key, postId } = await seed()
  // Rounds of the two servers one right after the other: on a shared machine one pair decides less than the spread between pairs.
  const pairs = []
  for (let round = 1; round <= rounds; round++) {
    const { raw, chorus } = await runPair(round - 1,
      () => measure(`round ${round}, raw Bun.serve + postgres.js`, ['bun', 'bench/raw-server.ts'], 4101, `/posts/${postId}`, key),
      () => measure(`round ${round}, Chorus (Elysia + drizzle, prepared)`, ['bun', 'server/index.ts'], 4102, `/api/v1/posts/${postId}`, key))
    pairs.push({ raw, chorus, ratio: chorus.rps / raw.rps })
  }
  const sorted = [...pairs].sort((a, b) => a.ratio - b.ratio)
  const { raw, chorus, ratio } = sorted[Math.floor((sorted.length - 1) / 2)]!
  const range = `${sorted[0]!.ratio.toFixed(2)}–${sorted.at(-1)!.ratio.toFixed(2)}`
  console.log(`median ratio: ${ratio.toFixed(2)}× (rounds ${range})`)
  await writeSection('HTTP: GET /api/v1/posts/{id}', [
    `wrk -t1 -c32 -d${seconds}s (after a warm-up run), server pinned to core 0, wrk to core 1, local PostgreSQL, one post with a label, API-key auth on every request. ${rounds} round${rounds === 1 ? '' : 's'} of ${PAIR_ORDER}; the table shows the round with the median ratio. The same route at 50 connections, against the same raw server, is in the posts benchmark below.`,
    '',
    '| server | req/s | p50 | p99 | RSS |',
    '|---|---|---|---|---|',
    `| raw Bun.serve + postgres.js (same queries) | ${raw.rps.toFixed(0)} | ${raw.p50} | ${raw.p99} | ${raw.memory.toFixed(0)} MiB |`,
    `| Chorus (Elysia, drizzle prepared statements) | ${chorus.rps.toFixed(0)} | ${chorus.p50} | ${chorus.p99} | ${chorus.memory.toFixed(0)} MiB |`,
    '',
    `Chorus runs at **${ratio.toFixed(2)}×** the raw baseline (median round; ${range}× over the ${rounds} rounds).`,
  ])
} finally {
  await bench.drop()
}
