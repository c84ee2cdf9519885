// The posts routes under load: Chorus (`bun server/index.ts`) against the raw Bun.serve + postgres.js
// baseline (bench/raw-server.ts, the same SQL), side by side in one run on a fresh local PostgreSQL
// database, each server pinned to core 0 and wrk to core 1, 50 connections, in BENCH_ROUNDS (3) rounds
// of raw then Chorus per route (the median ratio is reported). Then the size test: the
// same list, search, filters and sorts on a board of 200 posts and on one of 100,000 posts with
// 1,000,000 votes in the same workspace (seeded with generate_series). And the two reads' latency at a
// fixed rate below saturation (bench/open-loop.ts), where wrk's closed loop measures it at saturation.
// Usage: npm run bench:posts   (needs wrk, taskset and a Postgres at BENCH_POSTGRES_URL).
import postgres from 'postgres'
import { openDatabase } from '../server/db/client.ts'
import { boards, labels } from '../server/db/schema/index.ts'
import { newId } from '../server/lib/ids.ts'
import { createApiKey } from '../server/modules/api-keys/service.ts'
import { findOrCreateUser } from '../server/modules/auth/service.ts'
import { createWorkspace } from '../server/modules/workspaces/service.ts'
import { freePort } from '../test/helpers/ports.ts'
import { engineEnv } from '../server/cluster.ts'
import type { OpenLoopResult } from './open-loop.ts'
import { PAIR_ORDER, runPair, writeSection } from './report.ts'

const admin = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
/** Compare rounds per route: raw then Chorus, each started afresh; the table shows the round with the median ratio. */
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
/** Compare only the routes whose name contains this text (e.g. `GET /posts`); every route by default. */
const only = process.env.BENCH_ROUTES
const bigPosts = Number(process.env.BENCH_POSTS ?? 100_000)
const votesPerUser = 100
const SECRET = 'bench-secret-key-long-enough-0123456789abcdef'

/** `compare` (Chorus against the raw server), `least` (the keyed reads against the least-work baseline too), `rate` (the reads' latency at fixed rates), `processes` (1 and one per core) and `size` (the list at 200 and 100,000 posts); each writes its own section. */
const phases = (process.env.BENCH_PHASES ?? 'compare,least,rate,processes,size').split(',')
/** The rate phase's offered loads, as shares of what the raw server serves at saturation in the same phase. */
const RATE_SHARES = [0.25, 0.5]
const name = process.env.BENCH_DATABASE ?? 'bench_posts'
const server = postgres(admin, { max: 1, onnotice: () => {} })
await server.unsafe(`drop database if exists ${name} with (force)`)
await server.unsafe(`create database ${name}`)
const url = new URL(admin)
url.pathname = `/${name}`
const databaseUrl = url.toString()

/**
 * A board of `count` posts and `users × perUser` votes in plain SQL: titles from a small vocabulary (so
 * search terms have realistic selectivity), statuses 60/20/10/10 %, label `api` on every 10th post and
 * `ux` on every 4th, one post every 10 minutes back from now, votes skewed towards the first posts.
 */
async function seedBoard(sql: postgres.Sql, workspaceId: string, boardId: string, tag: string, count: number, users: number, perUser: number) {
  const statusIds = (await sql`select id from statuses where workspace_id = ${workspaceId} order by position`).map((row) => row.id as string)
  const [api, ux] = (await sql`select id from labels where workspace_id = ${workspaceId} order by slug`).map((row) => row.id as string)
  await sql`
    insert into posts (id, workspace_id, board_id, title, body, status_id, author_end_user_id, author_name, created_at, updated_at)
    select 'post_' || ${tag} || lpad(g::text, 8, '0'), ${workspaceId}, ${boardId},
      (array['Export','Import','Dark mode','SSO','Slack','Webhooks','Mobile app','Reports','Search','API access'])[1 + g % 10] || ' ' ||
      (array['improvements','for teams','in the dashboard','support','to CSV','integration','filters','settings','performance','on Android'])[1 + (g / 10) % 10],
      'We would like ' || (array['faster','simpler','better','bulk','scheduled','custom','audited','shared','private','offline','localized','themed','nested'])[1 + (g * 7) % 13] ||
      ' ' || (array['exports','reports','boards','filters','roles','alerts','dashboards','labels','imports','notifications','comments'])[1 + (g * 3) % 11] || ' for our team of ' || (g % 500) || '.',
      (${statusIds}::text[])[case when g % 10 < 6 then 1 when g % 10 < 8 then 3 when g % 10 < 9 then 4 else 5 end],
      'eu_bench' || (1 + g % ${users}), null, now() - g * interval '10 minutes', now() - g * interval '10 minutes'
    from generate_series(1, ${count}::int) g`
  await sql`insert into post_labels (post_id, label_id) select 'post_' || ${tag} || lpad(g::text, 8, '0'), ${api!} from generate_series(10, ${count}::int, 10) g`
  await sql`insert into post_labels (post_id, label_id) select 'post_' || ${tag} || lpad(g::text, 8, '0'), ${ux!} from generate_series(4, ${count}::int, 4) g`
  // Voter e's k-th vote goes to post floor(count·((k + u)/perUser)²) + 1: distinct per voter (count ≥ perUser²), skewed to the first posts.
  await sql`
    insert into votes (id, workspace_id, post_id, end_user_id, created_at)
    select 'vote_' || ${tag} || e || '_' || k, ${workspaceId},
      'post_' || ${tag} || lpad((1 + floor(${count}::int * ((k + (e * 0.6180339887) % 1) / ${perUser}::int) ^ 2))::int::text, 8, '0'), 'eu_bench' || e, now()
    from generate_series(1, ${users}::int) e, generate_series(0, ${perUser}::int - 1) k`
  await sql`update posts p set vote_count = v.n from (select post_id, count(*)::int as n from votes where post_id like ${`post_${tag}%`} group by post_id) v where p.id = v.post_id`
}

/** Whether a duplicate check is ever queued (see BENCH_NO_SUGGESTIONS); with `table` event_dispatch, whether any event is dispatched at all. */
const noSuggestions = (sql: postgres.Sql, on: boolean, table = 'duplicate_checks') => on
  ? sql.unsafe(`create trigger bench_no_checks before insert on ${table} for each row execute function bench_no_checks()`)
  : sql.unsafe(`drop trigger bench_no_checks on ${table}`)

async function seed() {
  const database = openDatabase(databaseUrl, '')
  await database.migrate()
  const db = database.db
  const user = await findOrCreateUser(db, 'bench@example.com')
  const workspace = await createWorkspace(db, user.id, { name: 'Bench', slug: 'bench' })
  const ids = { small: newId('board'), big: newId('board'), inbox: newId('board') }
  await db.insert(boards).values([
    { id: ids.small, workspaceId: workspace.id, slug: 'ideas', name: 'Ideas' },
    { id: ids.big, workspaceId: workspace.id, slug: 'big', name: 'Big' },
    { id: ids.inbox, workspaceId: workspace.id, slug: 'inbox', name: 'Inbox' },
  ])
  await db.insert(labels).values([{ id: newId('label'), workspaceId: workspace.id, slug: 'api', name: 'API' }, { id: newId('label'), workspaceId: workspace.id, slug: 'ux', name: 'UX' }])
  const { secret } = await createApiKey(db, workspace.id, user.id, { name: 'bench', scopes: ['posts:read', 'posts:write', 'votes:write'] })
  await database.close()

  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  await sql`insert into end_users (id, workspace_id, email, name) select 'eu_bench' || g, ${workspace.id}, 'user' || g || '@example.com', 'User ' || g from generate_series(1, 10000) g`
  await seedBoard(sql, workspace.id, ids.small, 's', 200, 200, 10)
  // BENCH_NO_SUGGESTIONS: the create's request path alone. Chorus's dispatcher queues a duplicate check for
  // every post.created and its background worker runs the similarity search on the server's core; the
  // raw servers' outbox rows are never dispatched. With this set, no check is ever queued.
  await sql`create function bench_no_checks() returns trigger language plpgsql as $$ begin return null; end $$`
  if (process.env.BENCH_NO_SUGGESTIONS) await noSuggestions(sql, true)
  const started = performance.now()
  if (phases.includes('size')) await seedBoard(sql, workspace.id, ids.big, 'b', bigPosts, bigPosts / 10, votesPerUser)
  const seeded = (performance.now() - started) / 1000
  await sql`vacuum analyze`
  const [counts] = await sql`select (select count(*) from posts where board_id = ${ids.big})::int as posts, (select count(*) from votes where workspace_id = ${workspace.id})::int as votes`
  const smallPostIds = (await sql`select id from posts where board_id = ${ids.small} order by id`).map((row) => row.id as string)
  await sql.end()
  return { key: secret, smallPostIds, seeded, counts: counts as { posts: number; votes: number } }
}

async function waitFor(port: number) {
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/api/v1/health`)
      return
    } catch {
      await Bun.sleep(100)
    }
  }
  throw new Error(`nothing listening on ${port}`)
}

interface Load { method?: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string; rotate?: { prefix: string; ids: string[]; suffix: string }; emails?: number; posts?: { title: string; body: string }[] }

/** A wrk Lua script: POST bodies, and for vote toggles a rotating post and voter so no single row is hot. */
function script(load: Load) {
  const lines = [`wrk.method = "${load.method ?? 'GET'}"`, 'wrk.headers["Content-Type"] = "application/json"', 'local n = 0']
  if (load.rotate) lines.push(`local ids = {${load.rotate.ids.map((id) => `"${id}"`).join(',')}}`)
  // Texts as JSON string contents (escaped once here) in Lua long strings; the request number makes each title new.
  const long = (text: string) => `[==[${JSON.stringify(text).slice(1, -1)}]==]`
  if (load.posts) lines.push(`local posts = {${load.posts.map((post) => `{${long(post.title)},${long(post.body)}}`).join(',')}}`)
  lines.push('request = function()', '  n = n + 1')
  const path = load.rotate ? `"${load.rotate.prefix}" .. ids[(n % #ids) + 1] .. "${load.rotate.suffix}"` : `"${load.path}"`
  const body = load.emails ? `'{"email":"voter' .. (n % ${load.emails}) .. '@example.com"}'`
    : load.posts ? `'{"title":"' .. posts[(n % #posts) + 1][1] .. ' ' .. n .. '","body":"' .. posts[(n % #posts) + 1][2] .. '"}'`
    : load.body ? `'${load.body}'` : 'nil'
  lines.push(`  return wrk.format(nil, ${path}, nil, ${body})`, 'end')
  return lines.join('\n')
}

const toMs = (value: string | undefined) => {
  const match = /([\d.]+)(us|ms|s)/.exec(value ?? '')
  if (!match) return NaN
  return Number(match[1]) * (match[2] === 'us' ? 0.001 : match[2] === 's' ? 1000 : 1)
}

function wrk(port: number, load: Load, duration = seconds) {
  const file = `/tmp/bench-posts-${process.pid}.lua`
  require('node:fs').writeFileSync(file, script(load))
  const headers = Object.entries(load.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
  const run = Bun.spawnSync(['taskset', '-c', '1', 'wrk', '-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-s', file, ...headers, `http://127.0.0.1:${port}${load.path}`])
  const out = run.stdout.toString()
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors:.*timeout (\d+)/.exec(out)?.[1] ?? 0)
  if (!rps) throw new Error(`wrk failed:\n${out}${run.stderr.toString()}`)
  return { rps, p50: toMs(/50%\s+([\d.]+\w+)/.exec(out)?.[1]), p99: toMs(/99%\s+([\d.]+\w+)/.exec(out)?.[1]), errors }
}

type Result = ReturnType<typeof wrk>
type Measured = Result & { cpuMs: number; threads: Record<string, number>; catchUpMs?: number; sustainedRps?: number; sustainedCpuMs?: number }

interface Route { name: string; raw: Load; chorus: Load; write?: boolean }

/** The open-loop generator (bench/open-loop.ts) on core 1: `rate` requests a second due on schedule, at most `connections` in flight. */
function openLoop(port: number, load: Load, rate: number, duration = seconds): OpenLoopResult {
  const options = { url: `http://127.0.0.1:${port}${load.path}`, headers: load.headers, rate, seconds: duration, connections }
  const run = Bun.spawnSync(['taskset', '-c', '1', process.execPath, 'bench/open-loop.ts', JSON.stringify(options)])
  const line = run.stdout.toString().trim().split('\n').at(-1)
  if (!line?.startsWith('{')) throw new Error(`open-loop failed:\n${run.stdout.toString()}${run.stderr.toString()}`)
  return JSON.parse(line) as OpenLoopResult
}

/**
 * Each server starts from the same database state. The dispatch queue is emptied: the raw baseline
 * writes outbox rows that nobody dispatches, and Chorus's worker would otherwise spend the next run
 * delivering the raw run's backlog. The rate-limit counters are emptied and the tables vacuumed: every
 * keyed request updates the key's one counter row (tens of thousands of dead versions per run) and the
 * write routes update posts, so without this the second server of a pair ran on a more bloated database.
 */
async function resetSharedState() {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  await sql`delete from event_dispatch`
  await sql`truncate rate_limit_counters`
  await sql`vacuum analyze`
  await sql.end()
}

/** Peak resident memory (VmHWM) of a process, in MiB. */
const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
/** The server processes: the process itself, or a supervisor's children. */
const serverPids = (pid: number) => {
  const children = Bun.spawnSync(['pgrep', '-P', String(pid)]).stdout.toString().trim().split('\n').filter(Boolean).map(Number)
  return children.length ? children : [pid]
}

interface ServerOptions {
  /** WEB_CONCURRENCY (default 1). */
  processes?: number
  /** Pin the server to core 0 (default), or let it use every core. */
  pin?: boolean
}

/** A checkout of an earlier Chorus (e.g. `git archive <commit> | tar -x -C dir`, node_modules linked): the least phase runs it too, as `before`, interleaved with the others. */
const before = process.env.BENCH_CHORUS_BEFORE

async function withServer<T>(kind: 'raw' | 'chorus' | 'before', run: (port: number, pid: number) => T | Promise<T>, options: ServerOptions = {}) {
  await resetSharedState()
  const port = freePort()
  const command = kind === 'raw' ? ['bun', 'bench/raw-server.ts'] : kind === 'before' ? ['bun', `${before}/server/index.ts`] : ['bun', 'server/index.ts']
  const env = { ...process.env, ...(kind !== 'raw' && engineEnv(process.env)), DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent', SECRET_KEY: SECRET, RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000', WEB_CONCURRENCY: String(options.processes ?? 1) }
  const child = Bun.spawn([...(options.pin === false ? [] : ['taskset', '-c', '0']), ...command], { env, stdout: 'ignore', stderr: 'inherit' })
  try {
    await waitFor(port)
    return await run(port, child.pid)
  } finally {
    child.kill()
    await child.exited
  }
}

/**
 * wrk, and the CPU each request cost: the server process (every thread: the background worker's too) and
 * the PostgreSQL backends connected to this benchmark's database, in ms per request (from /proc). On a
 * shared machine throughput swings with what else runs; the CPU a request costs is the steadier figure.
 */
async function wrkWithCpu(port: number, pid: number, load: Load, options: { catchUp?: boolean } = {}) {
  const backends = async () => (await server`select pid from pg_stat_activity where datname = ${name}`).map((row) => row.pid as number)
  const ticks = (pids: number[]) => pids.reduce((sum, one) => sum + cpuOf(one), 0)
  // The warm-up's duplicate checks are not this window's work.
  if (options.catchUp) await untilChecksDone()
  const pids = [pid, ...(await backends())]
  const before = ticks(pids)
  const threadsBefore = threadTicks(pid)
  const result = wrk(port, load)
  const after = ticks([...new Set([...pids, ...(await backends())])])
  const requests = result.rps * seconds
  const perRequest = (value: number) => (value * 1000) / CLOCK_TICKS / requests
  // The server's threads by name (the main thread, the background worker's, Bun's helpers), ms per request.
  const threads: Record<string, number> = {}
  for (const [thread, [label, value]] of threadTicks(pid)) threads[label] = +((threads[label] ?? 0) + perRequest(value - (threadsBefore.get(thread)?.[1] ?? 0))).toFixed(2)
  if (!options.catchUp) return { ...result, cpuMs: perRequest(after - before), threads }
  // A create's background suggestion step may fall behind the requests: the rate that includes it is the
  // window's creates over the window plus the time the step then takes to catch up, and so is its CPU.
  const catchUpMs = await untilChecksDone()
  const caughtUp = ticks([...new Set([...pids, ...(await backends())])])
  return { ...result, cpuMs: perRequest(after - before), threads, catchUpMs, sustainedRps: requests / (seconds + catchUpMs / 1000), sustainedCpuMs: perRequest(caughtUp - before) }
}

/** The longest the create phase waits for the suggestion step to catch up; past it the rate is reported as at most. */
const CATCH_UP_CAP_MS = Number(process.env.BENCH_CATCH_UP_CAP_MS ?? 120_000)

/** Waits until no duplicate check waits (the background suggestion step has caught up), at most CATCH_UP_CAP_MS; returns the wait. */
async function untilChecksDone() {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  const started = performance.now()
  try {
    while (performance.now() - started < CATCH_UP_CAP_MS && (await sql`select exists (select 1 from duplicate_checks) as waiting`)[0]!.waiting) await Bun.sleep(100)
  } finally {
    await sql.end()
  }
  return performance.now() - started
}
/** Ticks per thread of a process, with the thread's name. */
function threadTicks(pid: number) {
  const fs = require('node:fs')
  const out = new Map<string, [string, number]>()
  for (const thread of fs.readdirSync(`/proc/${pid}/task`) as string[]) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8') as string
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.set(thread, [stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), Number(fields[11]) + Number(fields[12])])
    } catch {}
  }
  return out
}
const CLOCK_TICKS = 100
function cpuOf(pid: number) {
  try {
    const stat = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8') as string
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** CPU time used so far, in clock ticks: by the machine, by `pids`, and by every PostgreSQL process. */
function cpuTicks(pids: number[]) {
  const fs = require('node:fs')
  const busy = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] as string).split(/\s+/).slice(1).map(Number)
  const total = busy.reduce((a, b) => a + b, 0) - busy[3]! - busy[4]!
  const of = (pid: number) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8') as string
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return Number(fields[11]) + Number(fields[12])
    } catch {
      return 0
    }
  }
  const postgresPids = Bun.spawnSync(['pgrep', '-x', 'postgres']).stdout.toString().trim().split('\n').filter(Boolean).map(Number)
  const postgresTicks = new Map(postgresPids.map((pid) => [pid, of(pid)]))
  return { total, server: pids.reduce((sum, pid) => sum + of(pid), 0), postgres: postgresTicks }
}

const fmt = (r: Result) => `${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms`
const load = () => require('node:fs').readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

try {
  const { key, smallPostIds, seeded, counts } = await seed()
  console.log(`seeded: big board ${counts.posts} posts, ${counts.votes} votes in the workspace, in ${seeded.toFixed(1)} s`)
  if (process.env.BENCH_SEED_ONLY) {
    console.log(`seeded ${databaseUrl}; key ${key}`)
    process.exit(0)
  }
  const auth = { authorization: `Bearer ${key}` }

  const setup = `wrk -t1 -c${connections} -d${seconds}s (after a 3 s warm-up) on core 1, the server alone on core 0 (taskset), local PostgreSQL 15 on the same two cores, API-key auth.`
  const shared = (start: string) => `Load average ${start} at the start and ${load()} at the end: the load generator, the server and PostgreSQL share this 2-core machine, and on a shared virtual machine figures swing between runs (see the notes), so ratios compare runs made one right after the other.`

  // The two keyed reads goal 1 names, for the compare and the rate phases.
  const reads: Route[] = [
    { name: 'GET /boards/ideas/posts?per_page=20&sort=top', raw: { path: '/boards/ideas/posts?per_page=20&sort=top', headers: auth }, chorus: { path: '/api/v1/boards/ideas/posts?per_page=20&sort=top', headers: auth } },
    { name: 'GET /posts/{id}', raw: { path: `/posts/${smallPostIds[0]}`, headers: auth }, chorus: { path: `/api/v1/posts/${smallPostIds[0]}`, headers: auth } },
  ]

  const body = '{"title":"A post from the benchmark"}'
  // BENCH_CREATE_TEXTS: each create a different post (the duplicate fixtures' unrelated posts, numbered), so the
  // background suggestion step compares it with a realistic board, not with thousands of posts of one title.
  const posts = process.env.BENCH_CREATE_TEXTS ? (await Bun.file('test/fixtures/duplicates/unrelated.txt').text()).split('\n').filter(Boolean).map((line) => { const [title, text] = line.split(' | '); return { title: title!, body: text ?? '' } }) : undefined
  const CREATE: Route = { name: `POST /boards/inbox/posts (with its outbox row${posts ? '; varied texts' : ''})`, write: true, raw: { method: 'POST', path: '/boards/inbox/posts', headers: auth, body, posts }, chorus: { method: 'POST', path: '/api/v1/boards/inbox/posts', headers: auth, body, posts } }

  if (phases.includes('compare')) {
    const loadAtStart = load()
    // The same requests through both servers, one route at a time (raw first, then Chorus).
    const etag = await withServer('chorus', async (port) => (await fetch(`http://127.0.0.1:${port}/api/v1/public/bench/boards/ideas/posts?sort=top`)).headers.get('etag')!)
    const routes: Route[] = [
      ...reads,
      { name: 'GET /public/bench/boards/ideas/posts?sort=top, If-None-Match (304)', raw: { path: '/public/bench/boards/ideas/posts?sort=top', headers: { 'if-none-match': etag } }, chorus: { path: '/api/v1/public/bench/boards/ideas/posts?sort=top', headers: { 'if-none-match': etag } } },
      CREATE,
      { name: 'POST /posts/{id}/votes (toggle, 200 posts × 500 voters)', write: true, raw: { method: 'POST', path: '/posts/x/votes', headers: auth, rotate: { prefix: '/posts/', ids: smallPostIds, suffix: '/votes' }, emails: 500 }, chorus: { method: 'POST', path: '/api/v1/posts/x/votes', headers: auth, rotate: { prefix: '/api/v1/posts/', ids: smallPostIds, suffix: '/votes' }, emails: 500 } },
    ]
    const rows: string[] = []
    for (const route of routes.filter((candidate) => !only || candidate.name.includes(only))) {
      // On a shared machine throughput drifts within minutes: each round pairs runs made one right after
      // the other, and the median of the rounds' ratios is what one noisy run cannot give.
      const pairs: { raw: Result; chorus: Result & { rss: number }; ratio: number }[] = []
      for (let round = 0; round < rounds; round++) {
        const { raw, chorus } = await runPair(round,
          () => withServer('raw', (port) => (wrk(port, route.raw, 3), wrk(port, route.raw))),
          () => withServer('chorus', (port, pid) => (wrk(port, route.chorus, 3), { ...wrk(port, route.chorus), rss: peakRss(pid) })))
        pairs.push({ raw, chorus, ratio: chorus.rps / raw.rps })
      }
      const byRatio = [...pairs].sort((a, b) => a.ratio - b.ratio)
      const { raw, chorus, ratio } = byRatio[Math.floor((byRatio.length - 1) / 2)]!
      const range = pairs.length > 1 ? ` (${byRatio[0]!.ratio.toFixed(2)}–${byRatio.at(-1)!.ratio.toFixed(2)})` : ''
      const rss = Math.max(...pairs.map((pair) => pair.chorus.rss))
      const errors = { raw: pairs.reduce((sum, pair) => sum + pair.raw.errors, 0), chorus: pairs.reduce((sum, pair) => sum + pair.chorus.errors, 0) }
      const target = route.write ? 0.7 : 0.9
      console.log(`${route.name}: raw ${fmt(raw)} | Chorus ${fmt(chorus)} | ${ratio.toFixed(2)}×${range} (goal ≥ ${target}×) | Chorus peak RSS ${rss.toFixed(0)} MiB${errors.raw + errors.chorus ? ` errors ${errors.raw}/${errors.chorus}` : ''}`)
      rows.push(`| ${route.name} | ${fmt(raw)} | ${fmt(chorus)} | **${ratio.toFixed(2)}×**${range} (≥ ${target}×)${errors.raw + errors.chorus ? `; timeouts or errors raw ${errors.raw}, Chorus ${errors.chorus}` : ''} | ${rss.toFixed(0)} MiB |`)
    }
    await writeSection('Posts: Chorus against the raw baseline', [
      `${setup} ${shared(loadAtStart)}`,
      '',
      `The raw baseline (bench/raw-server.ts) is Bun.serve + postgres.js sending the same SQL as Chorus (the same statements in the same transactions). Board \`ideas\`: 200 posts, 2,000 votes; creates go to board \`inbox\`; vote toggles rotate over the 200 posts and 500 voters. Before each server starts the dispatch queue and the rate-limit counters are emptied and the database is vacuumed, so each server of a pair starts from the same state. Chorus starts with its engine settings (\`ENGINE_DEFAULTS\`, server/cluster.ts), the raw server with Bun's defaults. Each route runs ${rounds} round${rounds === 1 ? '' : 's'} of ${PAIR_ORDER}; the row shows the round with the median ratio, and the range of the ratios over the rounds in brackets. Peak RSS is the highest VmHWM of the Chorus processes (goal ≤ 120 MiB).`,
      '',
      '| request | raw req/s | p50 | p99 | Chorus req/s | p50 | p99 | ratio (goal) | Chorus peak RSS |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ])
  }

  if (phases.includes('least')) {
    const loadAtStart = load()
    const least: Record<string, Load> = {
      'GET /boards/ideas/posts?per_page=20&sort=top': { path: '/least/boards/ideas/posts?per_page=20', headers: auth },
      'GET /posts/{id}': { path: `/least/posts/${smallPostIds[0]}`, headers: auth },
      [CREATE.name]: { method: 'POST', path: '/least/boards/inbox/posts', headers: auth, body: CREATE.raw.body, posts },
    }
    const rows: string[] = []
    const notes: string[] = []
    for (const route of [...reads, CREATE].filter((candidate) => !only || candidate.name.includes(only))) {
      const runs: { least: Measured; raw: Measured; chorus: Measured & { rss: number }; before?: Measured; quiet?: Measured; bare?: Measured }[] = []
      for (let round = 0; round < rounds; round++) {
        // The servers one right after the other; the order turns each round so none always runs first.
        // BENCH_CREATE_SPLIT: the create also as Chorus without its background suggestion step (`quiet`).
        const split = route.write && process.env.BENCH_CREATE_SPLIT && !process.env.BENCH_NO_SUGGESTIONS
        const order = ['least', 'raw', 'chorus', ...(before ? ['before'] : []), ...(split ? ['quiet', 'bare'] : [])].map((_, i, all) => all[(i + round) % all.length]!)
        const run: Partial<(typeof runs)[number]> = {}
        for (const kind of order) {
          if (kind === 'least') run.least = await withServer('raw', (port, pid) => (wrk(port, least[route.name]!, 3), wrkWithCpu(port, pid, least[route.name]!)))
          else if (kind === 'raw') run.raw = await withServer('raw', (port, pid) => (wrk(port, route.raw, 3), wrkWithCpu(port, pid, route.raw)))
          else if (kind === 'quiet' || kind === 'bare') {
            // `bare`: no event is dispatched at all (no webhooks, notifications, mail or suggestions): the request path alone.
            const table = kind === 'bare' ? 'event_dispatch' : 'duplicate_checks'
            const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
            await noSuggestions(sql, true, table)
            try {
              run[kind] = await withServer('chorus', (port, pid) => (wrk(port, route.chorus, 3), wrkWithCpu(port, pid, route.chorus)))
            } finally {
              await noSuggestions(sql, false, table)
              await sql.end()
            }
          } else if (kind === 'before') run.before = await withServer('before', (port, pid) => (wrk(port, route.chorus, 3), wrkWithCpu(port, pid, route.chorus, { catchUp: route.write })))
          else run.chorus = await withServer('chorus', async (port, pid) => (wrk(port, route.chorus, 3), { ...(await wrkWithCpu(port, pid, route.chorus, { catchUp: route.write })), rss: peakRss(pid) }))
        }
        console.log(`${route.name} round ${round + 1} (${order.join(', ')}): ${order.map((kind) => `${kind} ${run[kind as 'least']!.rps.toFixed(0)}/s ${run[kind as 'least']!.cpuMs.toFixed(2)} ms CPU (threads ${JSON.stringify(run[kind as 'least']!.threads)})`).join(', ')}; load ${load()}`)
        runs.push(run as (typeof runs)[number])
      }
      if (runs[0]!.quiet) {
        const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!.toFixed(2)
        console.log(`${route.name}: without the suggestion step: Chorus / least-work ${median(runs.map((run) => run.quiet!.rps / run.least.rps))}×, / same-queries ${median(runs.map((run) => run.quiet!.rps / run.raw.rps))}×, CPU ${median(runs.map((run) => run.quiet!.cpuMs))} ms per create`)
        console.log(`${route.name}: no event dispatched: Chorus / least-work ${median(runs.map((run) => run.bare!.rps / run.least.rps))}×, / same-queries ${median(runs.map((run) => run.bare!.rps / run.raw.rps))}×, CPU ${median(runs.map((run) => run.bare!.cpuMs))} ms per create`)
      }
      const cpu = (kind: 'least' | 'raw' | 'chorus' | 'before') => runs.map((run) => run[kind]?.cpuMs ?? NaN).sort((a, b) => a - b)[Math.floor((runs.length - 1) / 2)]!.toFixed(2)
      console.log(`${route.name}: CPU per request, medians: least-work ${cpu('least')} ms, same-queries ${cpu('raw')} ms, Chorus ${cpu('chorus')} ms${before ? `, before ${cpu('before')} ms` : ''}`)
      if (before) {
        const ratios = (of: (run: (typeof runs)[number]) => number) => runs.map(of).sort((a, b) => a - b)
        const median = (values: number[]) => values[Math.floor((values.length - 1) / 2)]!.toFixed(2)
        console.log(`${route.name}: medians over the rounds: Chorus / least-work ${median(ratios((run) => run.chorus.rps / run.least.rps))}×, before / least-work ${median(ratios((run) => run.before!.rps / run.least.rps))}×, Chorus / same-queries ${median(ratios((run) => run.chorus.rps / run.raw.rps))}×, before / same-queries ${median(ratios((run) => run.before!.rps / run.raw.rps))}×, Chorus / before ${median(ratios((run) => run.chorus.rps / run.before!.rps))}×`)
      }
      const sustained: string[] = []
      if (route.write) {
        const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!
        for (const kind of (before ? ['chorus', 'before'] : ['chorus']) as ('chorus' | 'before')[]) {
          const of = (run: (typeof runs)[number]) => run[kind]!
          const capped = runs.some((run) => of(run).catchUpMs! >= CATCH_UP_CAP_MS)
          const text = `${kind === 'chorus' ? 'Chorus' : 'before'} with its suggestion step caught up: ${capped ? 'at most ' : ''}${median(runs.map((run) => of(run).sustainedRps!)).toFixed(0)}/s (catch-up ${(median(runs.map((run) => of(run).catchUpMs!)) / 1000).toFixed(1)} s after the ${seconds} s window${capped ? `, capped at ${CATCH_UP_CAP_MS / 1000} s` : ''}), ${capped ? 'at most ' : ''}**${median(runs.map((run) => of(run).sustainedRps! / run.least.rps)).toFixed(2)}×** the least-work create, ${median(runs.map((run) => of(run).sustainedCpuMs!)).toFixed(2)} ms of CPU per create (server and PostgreSQL)`
          console.log(`${route.name}: ${text}`)
          sustained.push(`${text}.`)
        }
      }
      const byRatio = [...runs].sort((a, b) => a.chorus.rps / a.least.rps - b.chorus.rps / b.least.rps)
      const median = byRatio[Math.floor((byRatio.length - 1) / 2)]!
      const ratios = runs.map((run) => run.chorus.rps / run.least.rps)
      const range = runs.length > 1 ? ` (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})` : ''
      const goal = route.write ? 0.8 : 0.7
      const line = `| ${route.name} | ${fmt(median.least)} | ${fmt(median.raw)} | ${fmt(median.chorus)} | **${(median.chorus.rps / median.least.rps).toFixed(2)}×**${range} (≥ ${goal}×) | ${(median.chorus.rps / median.raw.rps).toFixed(2)}× | ${(median.chorus.p99 / median.least.p99).toFixed(2)}× (≤ 2×) | ${median.chorus.rss.toFixed(0)} MiB |`
      console.log(line)
      rows.push(line)
      notes.push(...sustained.map((text) => `${route.name}: ${text}`))
    }
    await writeSection('Posts: Chorus against the least-work baseline', [
      `${setup} ${shared(loadAtStart)}`,
      '',
      `The least-work baseline (bench/raw-server.ts, \`/least/...\`) does what an authenticated read needs at the least on this stack: SHA-256 of the key, one key lookup, one query on a flat copy of the posts (\`bench_flat_posts\`: no joins, no labels, no author, no total, no rate limit), JSON out; for the create, one statement writing the post row (same table, same triggers) and its \`post.created\` outbox row, the board and default status looked up inside it. The same-queries baseline is the raw server of the section above. Each round runs the three servers one right after the other (the order turned each round); the row shows the round with the median Chorus / least-work ratio, the range over ${rounds} round${rounds === 1 ? '' : 's'} in brackets.`,
      '',
      '| request | least-work req/s | p50 | p99 | same-queries req/s | p50 | p99 | Chorus req/s | p50 | p99 | Chorus / least-work (goal) | Chorus / same-queries | p99 / least-work p99 (goal) | Chorus peak RSS |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      ...(notes.length ? ['', 'The create row counts the requests alone. Its background suggestion step (a duplicate check per post, in the worker) may fall behind them; after each Chorus window the bench waits until no check waits, and counts that wait and its CPU too:', '', ...notes.map((note) => `- ${note}`)] : []),
    ])
  }

  if (phases.includes('rate')) {
    const loadAtStart = load()
    const rows: string[] = []
    const ms = (value: number) => `${value.toFixed(1)} ms`
    for (const route of reads.filter((candidate) => !only || candidate.name.includes(only))) {
      const capacity = await withServer('raw', (port) => (wrk(port, route.raw, 3), wrk(port, route.raw).rps))
      for (const [round, share] of RATE_SHARES.entries()) {
        const rate = Math.round((capacity * share) / 10) * 10
        const { raw, chorus } = await runPair(round,
          () => withServer('raw', (port) => (wrk(port, route.raw, 3), openLoop(port, route.raw, rate))),
          () => withServer('chorus', (port) => (wrk(port, route.chorus, 3), openLoop(port, route.chorus, rate))))
        const met = (result: OpenLoopResult) => (result.p99 <= 25 ? 'yes' : 'no')
        console.log(`${route.name} at ${rate} req/s (${share} of raw's ${capacity.toFixed(0)}): raw p50 ${ms(raw.p50)} p99 ${ms(raw.p99)} max ${ms(raw.max)} | Chorus p50 ${ms(chorus.p50)} p99 ${ms(chorus.p99)} max ${ms(chorus.max)} | errors ${raw.errors}/${chorus.errors}`)
        rows.push(`| ${route.name} | ${rate} (${Math.round(share * 100)} % of ${capacity.toFixed(0)}) | ${raw.achieved.toFixed(0)} | ${ms(raw.p50)} | ${ms(raw.p99)} | ${ms(raw.max)} | ${chorus.achieved.toFixed(0)} | ${ms(chorus.p50)} | ${ms(chorus.p99)} | ${ms(chorus.max)} | ${met(raw)} / ${met(chorus)}${raw.errors + chorus.errors ? `; errors raw ${raw.errors}, Chorus ${chorus.errors}` : ''} |`)
      }
    }
    await writeSection('Posts: the reads at a fixed rate', [
      `The compare phase's wrk runs a closed loop: 50 connections each send the next request the moment the last answer arrives, so the server is always saturated and latency is queueing (on average 50 / throughput, by Little's law: 22.8 ms at 2,195 req/s). Here each read is offered at fixed rates below saturation: ${RATE_SHARES.map((share) => `${Math.round(share * 100)} %`).join(' and ')} of what the raw server served under wrk at the start of this phase, to both servers, for ${seconds} s after a 3 s wrk warm-up. The load generator (bench/open-loop.ts, on core 1) sends each request when it is due, with at most ${connections} in flight, and times it from when it was due, so a stall is charged to every request it held back. Server on core 0, PostgreSQL on both cores. ${shared(loadAtStart)}`,
      '',
      '| request | offered req/s (share of raw capacity) | raw served | p50 | p99 | max | Chorus served | p50 | p99 | max | p99 ≤ 25 ms (raw / Chorus) |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ])
  }

  if (phases.includes('processes')) {
    const loadAtStart = load()
    const list = { path: '/api/v1/boards/ideas/posts?per_page=20&sort=top', headers: auth }
    const rows: string[] = []
    let single = 0
    for (const processes of [1, navigator.hardwareConcurrency]) {
      const measured = await withServer('chorus', async (port, pid) => {
        wrk(port, list, 3)
        const pids = serverPids(pid)
        const before = cpuTicks(pids)
        const result = wrk(port, list)
        const after = cpuTicks(pids)
        const total = after.total - before.total
        let postgresTicks = 0
        for (const [pg, ticks] of after.postgres) postgresTicks += ticks - (before.postgres.get(pg) ?? 0)
        const share = (ticks: number) => `${Math.round((100 * ticks) / total)} %`
        return { result, rss: pids.map(peakRss), server: share(after.server - before.server), postgres: share(postgresTicks), other: share(total - (after.server - before.server) - postgresTicks) }
      }, { processes, pin: false })
      if (processes === 1) single = measured.result.rps
      console.log(`${processes} process(es): ${fmt(measured.result)} | RSS ${measured.rss.map((mb) => mb.toFixed(0)).join(' + ')} MiB | CPU server ${measured.server}, postgres ${measured.postgres}, wrk and the rest ${measured.other}`)
      rows.push(`| ${processes} | ${fmt(measured.result)} | ${processes === 1 ? '1.00×' : `${(measured.result.rps / single).toFixed(2)}×`} | ${measured.rss.map((mb) => mb.toFixed(0)).join(' + ')} MiB | ${measured.server} | ${measured.postgres} | ${measured.other} |`)
    }
    await writeSection('Posts: one process and one per core', [
      `wrk -t1 -c${connections} -d${seconds}s (after a 3 s warm-up), unpinned: the server processes, wrk and PostgreSQL share both cores. \`GET /boards/ideas/posts?per_page=20&sort=top\` (200 posts), API-key auth (the key\'s rate limit counted in PostgreSQL). ${shared(loadAtStart)}`,
      '',
      'CPU is the share of the machine\'s busy time over the measured run (from /proc): the server processes, every PostgreSQL process, and the rest (wrk and anything else running). Peak RSS (VmHWM) per server process; the goal is at most 120 MiB each.',
      '',
      '| WEB_CONCURRENCY | req/s | p50 | p99 | against 1 process | peak RSS | CPU server | CPU PostgreSQL | CPU wrk and the rest |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ])
  }

  if (phases.includes('size')) {
    const loadAtStart = load()
    const variants = [
      ['sort=top', 'sort=top'], ['sort=new', 'sort=new'], ['sort=trending', 'sort=trending'],
      ['sort=new&page=10 (last page at 200)', 'sort=new&page=10'], ['sort=new&page=50', 'sort=new&page=50'],
      ['q=exports (relevance)', 'q=exports'], ['q=exports&sort=top', 'q=exports&sort=top'], ['q=android', 'q=android'],
      ['status=planned', 'status=planned'], ['status=complete&sort=top', 'status=complete&sort=top'], ['label=api', 'label=api'], ['label=ux&sort=trending', 'label=ux&sort=trending'],
    ] as const
    const rows: string[] = []
    await withServer('chorus', (port) => {
      for (const [label, query] of variants) {
        const small = query.includes('page=50') ? undefined : (wrk(port, { path: `/api/v1/boards/ideas/posts?per_page=20&${query}`, headers: auth }, 2), wrk(port, { path: `/api/v1/boards/ideas/posts?per_page=20&${query}`, headers: auth }))
        wrk(port, { path: `/api/v1/boards/big/posts?per_page=20&${query}`, headers: auth }, 2)
        const big = wrk(port, { path: `/api/v1/boards/big/posts?per_page=20&${query}`, headers: auth })
        const ratio = small ? big.p99 / small.p99 : NaN
        console.log(`${label}: 200 posts ${small ? fmt(small) : '-'} | ${counts.posts} posts ${fmt(big)} | p99 ${small ? ratio.toFixed(2) + '×' : '-'}`)
        rows.push(`| ${label} | ${small ? fmt(small) : '– | – | –'} | ${fmt(big)} | ${small ? `${ratio.toFixed(2)}×` : '–'} |`)
      }
    })
    await writeSection('Posts: the list at 100,000 posts', [
      `${setup} ${shared(loadAtStart)}`,
      '',
      `Chorus only, per_page=20: the same request on board \`ideas\` (200 posts) and on board \`big\` (${counts.posts.toLocaleString('en')} posts; ${counts.votes.toLocaleString('en')} votes in the workspace; seeded by the benchmark with generate_series in ${seeded.toFixed(0)} s, then VACUUM ANALYZE). Goal: p99 within 2× of the 200-post figure. Titles come from a 10×10 vocabulary (\`exports\` is in ~9 % of bodies, \`android\` in 10 % of titles), statuses 60/20/10/10 %, label \`api\` on 10 % and \`ux\` on 25 % of posts.`,
      '',
      '| query | 200 posts req/s | p50 | p99 | 100,000 posts req/s | p50 | p99 | p99 ratio |',
      '|---|---|---|---|---|---|---|---|',
      ...rows,
    ])
  }
} finally {
  if (!process.env.BENCH_KEEP) await server.unsafe(`drop database if exists ${name} with (force)`)
  await server.end()
}
