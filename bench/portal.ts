// Public reads against the raw same-queries baseline (bench/raw-server.ts's /public route), in one run on one
// database: the widget's list (GET /api/v1/public/bench/boards/ideas/posts?sort=top) and the portal's board
// page (GET /portal/bench/boards/ideas), the first page of 20 posts by votes, anonymous, without If-None-Match
// (every request gets the whole body): Chorus with its public cache (the default), Chorus with it off
// (CACHE_ENTRIES=0), and the raw server. Each server in turn is pinned to core 0, wrk (50 connections) to core 1.
// Also recorded: database transactions per request (pg_stat_database: what a cache miss costs), the hit rate
// that implies, and the Chorus process's RSS after the runs and after 1,500 distinct searches (cache-busting
// that fills the cache to its bound). Usage: npm run bench:portal  (BENCH_SECONDS=10 a run; needs wrk and
// PostgreSQL at TEST_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/postgres).
import postgres from 'postgres'
import { findOrCreateUser } from '../server/modules/auth/service.ts'
import { createApiKey } from '../server/modules/api-keys/service.ts'
import { createComment } from '../server/modules/comments/service.ts'
import { createPost } from '../server/modules/posts/service.ts'
import { createWorkspace } from '../server/modules/workspaces/service.ts'
import { boards } from '../server/db/schema/index.ts'
import { newId } from '../server/lib/ids.ts'
import { toggleVote } from '../server/modules/votes/service.ts'
import { freshPostgresDatabase } from '../test/helpers/server-process.ts'
import { engineEnv } from '../server/cluster.ts'
import { writeSection } from './report.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const PORT = Number(process.env.BENCH_PORT ?? 48_310)
const SECRET = 'bench-secret-key-long-enough-0123456789abcdef'
const POSTS = 60

async function seed(db: Awaited<ReturnType<typeof freshPostgresDatabase>>['database']['db']) {
  const user = await findOrCreateUser(db, 'bench@example.com')
  const workspace = await createWorkspace(db, user.id, { name: 'Bench', slug: 'bench' })
  await db.insert(boards).values({ id: newId('board'), workspaceId: workspace.id, slug: 'ideas', name: 'Ideas', description: 'What should we build next?' })
  const { key } = await createApiKey(db, workspace.id, user.id, { name: 'bench', scopes: ['posts:write', 'votes:write', 'comments:write'] })
  const caller = { kind: 'api_key' as const, keyId: key.id, name: key.name, scopes: key.scopes, workspaceId: workspace.id }
  for (let i = 0; i < POSTS; i++) {
    const post = await createPost(db, workspace.id, caller, 'ideas', { title: `Idea number ${i}: make the thing faster`, body: 'A paragraph of detail about why this matters to our team. '.repeat(3), email: `author${i}@customer.example`, status: ['Open', 'Planned', 'In progress'][i % 3] })
    for (let v = 0; v < i % 7; v++) await toggleVote(db, workspace.id, caller, post.id, { email: `voter${v}@customer.example` })
    if (i % 5 === 0) await createComment(db, workspace.id, caller, post.id, { body: 'Same here', email: 'fan@customer.example' })
  }
}

async function waitFor(url: string) {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await Bun.sleep(100)
  }
  throw new Error(`nothing answered at ${url}`)
}

const CONNECTIONS = 50

function wrk(path: string, duration = seconds) {
  const run = Bun.spawnSync(['taskset', '-c', '1', 'wrk', '-t1', `-c${CONNECTIONS}`, `-d${duration}s`, '--latency', `http://127.0.0.1:${PORT}${path}`])
  const out = run.stdout.toString()
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])
  const requests = Number(/(\d+) requests in/.exec(out)?.[1])
  const p50 = /50%\s+([\d.]+\w+)/.exec(out)?.[1]
  const p99 = /99%\s+([\d.]+\w+)/.exec(out)?.[1]
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
  if (!rps || non2xx) throw new Error(`wrk failed or saw errors:\n${out}${run.stderr.toString()}`)
  return { rps, requests, p50, p99 }
}

const fresh = await freshPostgresDatabase('portal_bench', 'The portal benchmark')
const stats = postgres(fresh.url, { max: 1, onnotice: () => {} })
/** Transactions the database has committed or rolled back so far (each statement outside a transaction is one). */
async function transactions() {
  // A backend reports its counts once idle, at the latest 10 s later when the shared counters were busy.
  await Bun.sleep(11_000)
  const [row] = await stats`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`
  return Number(row!.n)
}
const kib = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
const mib = (value: number) => `${(value / 1024).toFixed(0)} MiB`

async function withServer<T>(command: string[], env: Record<string, string>, ready: string, run: (pid: number) => Promise<T>) {
  const child = Bun.spawn(['taskset', '-c', '0', process.execPath, ...command], { env: { ...process.env, ...env, DATABASE_URL: fresh.url, PORT: String(PORT), TEST_POSTGRES_URL: '' }, stdout: 'ignore', stderr: 'inherit' })
  try {
    await waitFor(`http://127.0.0.1:${PORT}${ready}`)
    counted = 0
    return await run(child.pid)
  } finally {
    child.kill()
    await child.exited
  }
}

/**
 * A wrk run after its warm-up, and the database transactions both cost per request (the count is read
 * before the warm-up, and that reading serves the next measurement on the same server as its start).
 */
let counted = 0
async function measure(path: string) {
  const before = counted || (await transactions())
  const warmUp = wrk(path, 3)
  const result = wrk(path)
  counted = await transactions()
  return { ...result, perRequest: (counted - before) / (warmUp.requests + result.requests) }
}

try {
  await seed(fresh.database.db)
  const chorusEnv = (extra: Record<string, string> = {}) => ({ ...engineEnv(process.env), SECRET_KEY: SECRET, LOG_LEVEL: 'silent', BILLING: 'off', RATE_LIMIT_PER_IP: '1000000', ...extra })
  const routes = { json: '/api/v1/public/bench/boards/ideas/posts?sort=top', portal: '/portal/bench/boards/ideas' }
  // Other work on the machine shows in the figures; the load average is recorded with them.
  const load = (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')
  const raw = await withServer(['bench/raw-server.ts'], {}, '/public/bench/boards/ideas/posts?sort=top', () => measure('/public/bench/boards/ideas/posts?sort=top'))
  /** The runs of both routes, then cache-busting: distinct searches (each a miss, kept when the cache is on), with RSS before and after. */
  const runs = async (pid: number) => {
    const json = await measure(routes.json)
    const portal = await measure(routes.portal)
    const afterRuns = { rss: kib(pid, 'VmRSS'), peak: kib(pid, 'VmHWM') }
    const searches = Array.from({ length: 1500 }, (_, i) => `${routes.portal}?q=${encodeURIComponent(`idea ${i} ${'x'.repeat(i % 100)}`)}`)
    for (let i = 0; i < searches.length; i += 10) await Promise.all(searches.slice(i, i + 10).map(async (path) => (await fetch(`http://127.0.0.1:${PORT}${path}`)).arrayBuffer()))
    return { json, portal, afterRuns, afterBusting: { rss: kib(pid, 'VmRSS'), peak: kib(pid, 'VmHWM') } }
  }
  const off = await withServer(['server/index.ts'], chorusEnv({ CACHE_ENTRIES: '0' }), '/api/v1/health', runs)
  const on = await withServer(['server/index.ts'], chorusEnv(), '/api/v1/health', runs)
  // A miss costs the statements of the cache-off run; the share of requests that cost none is the hit rate.
  const hitRate = (cached: number, uncached: number) => `${(100 * Math.max(0, 1 - cached / uncached)).toFixed(2)} %`
  const row = (name: string, r: typeof raw, ratio: string, hits = '') => `| ${name} | ${r.rps.toFixed(0)} | ${ratio} | ${r.p50} | ${r.p99} | ${r.perRequest.toFixed(3)} | ${hits} |`
  const lines = [
    row('raw same-queries baseline, JSON', raw, '1.00×'),
    row('Chorus JSON, cache off', off.json, `${(off.json.rps / raw.rps).toFixed(2)}×`),
    row('Chorus board page (HTML), cache off', off.portal, `${(off.portal.rps / raw.rps).toFixed(2)}×`),
    row('**Chorus JSON, public cache**', on.json, `**${(on.json.rps / raw.rps).toFixed(2)}×**`, hitRate(on.json.perRequest, off.json.perRequest)),
    row('**Chorus board page (HTML), public cache**', on.portal, `**${(on.portal.rps / raw.rps).toFixed(2)}×**`, hitRate(on.portal.perRequest, off.portal.perRequest)),
  ]
  console.log(lines.join('\n'))
  const memory = (run: typeof on) => `${mib(run.afterRuns.rss)} after the runs (peak ${mib(run.afterRuns.peak)}), ${mib(run.afterBusting.rss)} after the searches (peak ${mib(run.afterBusting.peak)})`
  console.log(`RSS with the cache: ${memory(on)}; with it off: ${memory(off)}`)
  await writeSection('Public reads: the public cache against the raw same-queries baseline', [
    `Under load (load average ${load} when the run started; 2 cores). wrk -t1 -c${CONNECTIONS} -d${seconds}s after a 3 s warm-up, each server alone on core 0 in turn, wrk on core 1, one local PostgreSQL database: a board of ${POSTS} posts (votes, comments, three statuses), the first page of 20 by votes, anonymous requests without If-None-Match (every request gets the whole body). The raw baseline is bench/raw-server.ts's \`/public\` route (Bun.serve + postgres.js, the same SQL, ETag over the body). "Transactions / request" is pg_stat_database's count over the run (every statement outside a transaction is one); the hit rate is one minus its ratio to the cache-off run's. Goal: ≥ 3× the raw baseline, p99 ≤ 10 ms at 50 connections.`,
    '',
    '| server and route | req/s | / raw | p50 | p99 | transactions / request | hit rate |',
    '|---|---|---|---|---|---|---|',
    ...lines,
    '',
    `Chorus RSS, then 1,500 distinct \`?q=\` searches of the board page (cache-busting, which fills the cache to its bound): with the public cache (defaults CACHE_ENTRIES=1000, PUBLIC_CACHE_MB=8) ${memory(on)}; with it off ${memory(off)}. Goal: a process under 120 MiB.`,
  ])
} finally {
  await stats.end()
  await fresh.drop()
}
