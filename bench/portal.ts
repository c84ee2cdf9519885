// The portal's board page (server-rendered HTML) against the public JSON route it reads through, in the
// same run on the same server: GET /portal/bench/boards/ideas and GET /api/v1/public/bench/boards/ideas/posts,
// both the first page of 20 posts by votes, anonymous (the cacheable case). The server is pinned to core 0,
// wrk to core 1, on a fresh local PostgreSQL database. Usage: npm run bench:portal   (needs wrk and Postgres
// at TEST_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/postgres).
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

function wrk(path: string) {
  const run = Bun.spawnSync(['taskset', '-c', '1', 'wrk', '-t1', '-c32', `-d${seconds}s`, '--latency', `http://127.0.0.1:${PORT}${path}`])
  const out = run.stdout.toString()
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1])
  const transfer = /Transfer\/sec:\s+([\d.]+\w+)/.exec(out)?.[1]
  const p50 = /50%\s+([\d.]+\w+)/.exec(out)?.[1]
  const p99 = /99%\s+([\d.]+\w+)/.exec(out)?.[1]
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
  if (!rps || non2xx) throw new Error(`wrk failed or saw errors:\n${out}${run.stderr.toString()}`)
  return { rps, p50, p99, transfer }
}

const fresh = await freshPostgresDatabase('portal_bench', 'The portal benchmark')
try {
  await seed(fresh.database.db)
  // Silent (no access log), pinned from the start: the test helper's process waits for info lines instead.
  const env = { ...process.env, ...engineEnv(process.env), DATABASE_URL: fresh.url, SECRET_KEY: SECRET, PORT: String(PORT), LOG_LEVEL: 'silent', BILLING: 'off', RATE_LIMIT_PER_IP: '1000000', TEST_POSTGRES_URL: '' }
  const child = Bun.spawn(['taskset', '-c', '0', process.execPath, 'server/index.ts'], { env, stdout: 'ignore', stderr: 'inherit' })
  try {
    await waitFor(`http://127.0.0.1:${PORT}/api/v1/health`)
    const routes = {
      portal: '/portal/bench/boards/ideas',
      json: '/api/v1/public/bench/boards/ideas/posts?sort=top',
    }
    const size = async (path: string) => (await (await fetch(`http://127.0.0.1:${PORT}${path}`)).arrayBuffer()).byteLength
    for (const path of Object.values(routes)) wrk(path) // warm-up: JIT and connection pool
    // Other work on the machine shows in the figures; the load average is recorded with them.
    const load = (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')
    const json = wrk(routes.json)
    const portal = wrk(routes.portal)
    const ratio = portal.rps / json.rps
    const [jsonBytes, portalBytes] = [await size(routes.json), await size(routes.portal)]
    console.log(`public JSON: ${json.rps.toFixed(0)} req/s, p50 ${json.p50}, p99 ${json.p99}, ${jsonBytes} bytes`)
    console.log(`portal HTML: ${portal.rps.toFixed(0)} req/s, p50 ${portal.p50}, p99 ${portal.p99}, ${portalBytes} bytes`)
    console.log(`ratio: ${ratio.toFixed(2)}×`)
    await writeSection('Portal: board page against the public JSON route', [
      `wrk -t1 -c32 -d${seconds}s, server pinned to core 0, wrk to core 1, local PostgreSQL, a board of ${POSTS} posts (votes, comments, three statuses), first page of 20 by votes, anonymous requests without If-None-Match (every request renders). Load average when the run started: ${load}.`,
      '',
      '| route | req/s | p50 | p99 | body |',
      '|---|---|---|---|---|',
      `| \`GET ${routes.json}\` (JSON) | ${json.rps.toFixed(0)} | ${json.p50} | ${json.p99} | ${jsonBytes} B |`,
      `| \`GET ${routes.portal}\` (HTML) | ${portal.rps.toFixed(0)} | ${portal.p50} | ${portal.p99} | ${portalBytes} B |`,
      '',
      `The HTML page runs at **${ratio.toFixed(2)}×** the JSON route's throughput in the same run: it makes the same list query plus the workspace read for branding and navigation, and renders and hashes (ETag) the page.`,
    ])
  } finally {
    child.kill()
    await child.exited
  }
} finally {
  await fresh.drop()
}
