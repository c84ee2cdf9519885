// Where a keyed read's time goes, phase by phase (issue #40 goal 1), on the database bench/posts.ts leaves
// behind with BENCH_KEEP=1 (BENCH_DATABASE, default bench_posts):
// 1. each statement alone through postgres.js, 50 callers on 10 connections, the client pinned to core 1:
//    the least-work server's key look-up and flat row/page, Chorus's change-count read and its post/list JSON;
// 2. HTTP through wrk (core 1) against one server on core 0: Chorus's floor (a malformed key: Elysia, the
//    request plugin, the auth macro and the error handler, no statement), GET /health (one `select 1`),
//    the keyed post and list; the least-work server's post and list.
// Usage: BENCH_KEEP=1 BENCH_PHASES=least BENCH_ROUNDS=1 bun bench/posts.ts && bun bench/keyed-phases.ts
import postgres from 'postgres'
import { openDatabase } from '../server/db/client.ts'
import { createApiKey } from '../server/modules/api-keys/service.ts'
import { engineEnv } from '../server/cluster.ts'
import { getPostJson, listPostsJson } from '../server/modules/posts/queries.ts'
import { freePort } from '../test/helpers/ports.ts'

const admin = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const url = new URL(admin)
url.pathname = `/${process.env.BENCH_DATABASE ?? 'bench_posts'}`
const databaseUrl = url.toString()
const seconds = Number(process.env.BENCH_SECONDS ?? 4)
const SECRET = 'bench-secret-key-long-enough-0123456789abcdef'

const sql = postgres(databaseUrl, { max: 10, onnotice: () => {} })
const [ws] = await sql`select w.id, (select id from boards where workspace_id = w.id and slug = 'ideas') as board, (select id from posts p where p.workspace_id = w.id order by id limit 1) as post from workspaces w where slug = 'bench'`
const [user] = await sql`select id from users where email = 'bench@example.com'`
const database = openDatabase(databaseUrl, '')
const { secret } = await createApiKey(database.db, ws!.id, user!.id, { name: 'phases', scopes: ['posts:read'] })
const keyHash = Bun.SHA256.hash(secret, 'hex')

function wrk(port: number, path: string, headers: Record<string, string>) {
  const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
  Bun.spawnSync(['taskset', '-c', '1', 'wrk', '-t1', '-c50', '-d2s', ...h, `http://127.0.0.1:${port}${path}`])
  const out = Bun.spawnSync(['taskset', '-c', '1', 'wrk', '-t1', '-c50', `-d${seconds}s`, '--latency', ...h, `http://127.0.0.1:${port}${path}`]).stdout.toString()
  return { rps: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])), p99: /99%\s+(\S+)/.exec(out)?.[1] }
}

async function withServer(command: string[], chorus: boolean, loads: [string, string, Record<string, string>][]) {
  const port = freePort()
  const env = { ...process.env, ...(chorus && engineEnv(process.env)), DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'silent', SECRET_KEY: SECRET, RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_IP: '1000000', WEB_CONCURRENCY: '1' }
  const child = Bun.spawn(['taskset', '-c', '0', ...command], { env, stdout: 'ignore', stderr: 'inherit' })
  try {
    for (let i = 0; i < 300; i++) { try { await fetch(`http://127.0.0.1:${port}/api/v1/health`); break } catch { await Bun.sleep(100) } }
    const out: string[] = []
    for (const [name, path, headers] of loads) {
      const before = Number(require('node:fs').readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a: number, b: string) => a + Number(b), 0))
      const result = wrk(port, path, headers)
      const after = Number(require('node:fs').readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a: number, b: string) => a + Number(b), 0))
      // CPU ticks (1/100 s) over the warm-up and the run, per request of the run (an upper bound: the warm-up's ticks are in it).
      out.push(`| ${name} | ${result.rps} | ${result.p99} | ~${Math.round(((after - before) * 10_000) / (result.rps * (seconds + 2)))} |`)
    }
    return out
  } finally {
    child.kill()
    await child.exited
  }
}

const auth = { authorization: `Bearer ${secret}` }
const http = [
  ...(await withServer(['bun', 'bench/raw-server.ts'], false, [
    ['least-work: post', `/least/posts/${ws!.post}`, auth],
    ['least-work: list', '/least/boards/ideas/posts?per_page=20', auth],
  ])),
  ...(await withServer(['bun', 'server/index.ts'], true, [
    ['Chorus: floor (malformed key, 401, no statement)', `/api/v1/posts/${ws!.post}`, { authorization: 'Bearer chorus_sk_short' }],
    ['Chorus: GET /health (select 1, no credential)', '/api/v1/health', {}],
    ['Chorus: post', `/api/v1/posts/${ws!.post}`, auth],
    ['Chorus: list', '/api/v1/boards/ideas/posts?per_page=20&sort=top', auth],
  ])),
]
// After the HTTP runs: the least-work server made its flat table at start.
/** Statements per second with 50 callers, and the client's CPU per statement. */
async function statements(name: string, run: () => Promise<unknown>) {
  for (let i = 0; i < 200; i++) await run()
  const end = performance.now() + seconds * 1000
  const cpu = process.cpuUsage()
  let done = 0
  await Promise.all(Array.from({ length: 50 }, async () => { while (performance.now() < end) { await run(); done++ } }))
  const used = process.cpuUsage(cpu)
  return `| ${name} | ${Math.round(done / seconds)} | ${Math.round((used.user + used.system) / done)} |`
}

const rows = [
  await statements('least-work: key look-up (api_keys by hash)', () => sql`select workspace_id from api_keys where key_hash = ${keyHash} and revoked_at is null`),
  await statements('least-work: flat row', () => sql`select id, board, title, body, status, votes, comment_count, created_at from bench_flat_posts where id = ${ws!.post} and workspace_id = ${ws!.id}`),
  await statements('least-work: flat page of 20', () => sql`select id, title, body, status, votes, comment_count, created_at from bench_flat_posts where workspace_id = ${ws!.id} and board = 'ideas' order by votes desc, id limit 20`),
  await statements('Chorus: change-count read', () => sql`select (select n from cache_changes where id = 1)`),
  await statements('Chorus: the post as JSON (drizzle, compiled)', () => getPostJson(database.db, ws!.id, ws!.post, true)),
  await statements('Chorus: the page of 20 as JSON (drizzle, compiled)', () => listPostsJson(database.db, { workspace: { id: ws!.id }, board: 'ideas' }, { sort: 'top' }, { page: 1, perPage: 20, offset: 0 } as never, true)),
]
await sql.end()
await database.close()

console.log(`load ${require('node:os').loadavg().map((n: number) => n.toFixed(2)).join(' ')}`)
console.log('| statement (postgres.js, 50 callers, 10 connections) | statements/s | client CPU µs/statement |\n|---|---|---|')
console.log(rows.join('\n'))
console.log('| HTTP (wrk 50 connections, server on core 0) | req/s | p99 | server CPU µs/req (upper bound) |\n|---|---|---|---|')
console.log(http.join('\n'))
