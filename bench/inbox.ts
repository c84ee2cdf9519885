// The dashboard's inbox page (server-rendered HTML) against the JSON inbox it is built from, in the same
// run, for the same signed-in member: GET /dashboard/{slug} and GET /api/v1/workspaces/{slug}/inbox (first
// page, newest first), and POST …/posts/bulk on 100 posts. In process (app.handle, no sockets), requests
// one after another: a first look at the cost of rendering, not a load test. Usage:
//   BENCH_POSTS=10000 TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test bun bench/inbox.ts
import { sql } from 'drizzle-orm'
import { boardFixture, workspaceFixture } from '../test/helpers/fixtures.ts'
import { BASE, startHarness } from '../test/helpers/harness.ts'

const POSTS = Number(process.env.BENCH_POSTS ?? 10_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300)

const h = await startHarness()
try {
  const ws = await workspaceFixture(h)
  const board = await boardFixture(h, ws.id, 'ideas')
  // Posts written by SQL in batches (the services' path is measured by the bulk call below). Each batch commits:
  // one statement of 100,000 rows bumps the board's maintained count row 100,000 times in one transaction, which
  // took minutes and left as many dead versions of that row for every exact total to scan.
  const BATCH = 2_000
  for (let from = 1; from <= POSTS; from += BATCH) {
    await h.db.execute(sql`insert into posts (id, workspace_id, board_id, title, body, status_id, author_name, vote_count, created_at)
      select 'post_bench' || lpad(n::text, 16, '0'), ${ws.id}, ${board.id}, 'Idea number ' || n, 'Some detail about idea ' || n,
        (select id from statuses where workspace_id = ${ws.id} and is_default), 'Bench', n % 17, now() - (n || ' minutes')::interval
      from generate_series(${from}::int, ${Math.min(POSTS, from + BATCH - 1)}::int) n`)
  }
  // The test server runs without autovacuum; a production one has vacuumed and analyzed a table this size.
  await h.db.execute(sql`vacuum analyze`)
  const client = ws.owner
  const headers = { 'x-workspace': ws.slug }
  // Both bodies are read as text and nothing more, so the figures are the server's (the test client would also
  // try JSON.parse on each, which only the JSON body survives).
  const cookie = [...client.jar].map(([name, value]) => `${name}=${value}`).join('; ')
  const read = async (path: string, extra: Record<string, string> = {}) => {
    const res = await h.app.handle(new Request(`${BASE}${path}`, { headers: { cookie, ...extra } }))
    await res.text()
    return res
  }
  // The two requests alternate, one of each per round, so both meet the same machine (a shared one changes
  // from second to second); each keeps its own latencies. Throughput = rounds / the time spent in that request.
  const calls = {
    'JSON inbox': () => read(`/api/v1/workspaces/${ws.slug}/inbox?per_page=50`, headers),
    'inbox page': () => read(`/dashboard/${ws.slug}`),
  }
  const took: Record<string, number[]> = { 'JSON inbox': [], 'inbox page': [] }
  for (let i = 0; i < 20; i++) for (const call of Object.values(calls)) await call()
  for (let i = 0; i < ROUNDS; i++) {
    for (const [label, call] of Object.entries(calls)) {
      const at = performance.now()
      const res = await call()
      if (res.status !== 200) throw new Error(`${label}: ${res.status}`)
      took[label]!.push(performance.now() - at)
    }
  }
  const rates: Record<string, number> = {}
  for (const [label, times] of Object.entries(took)) {
    rates[label] = ROUNDS / (times.reduce((sum, ms) => sum + ms, 0) / 1000)
    times.sort((a, b) => a - b)
    const pct = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))]!.toFixed(1)
    console.log(`${label}: ${rates[label]!.toFixed(0)} req/s, p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`)
  }
  console.log(`page / JSON: ${(rates['inbox page']! / rates['JSON inbox']!).toFixed(2)}× (${POSTS} posts; load ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')})`)
  const ids = (await client.get(`/api/v1/workspaces/${ws.slug}/inbox?per_page=100`, { headers })).body.items.map((post: { id: string }) => post.id)
  const at = performance.now()
  const bulk = await client.post(`/api/v1/workspaces/${ws.slug}/posts/bulk`, { post_ids: ids, status: 'Planned' }, { headers })
  console.log(`posts/bulk on ${ids.length} posts: ${bulk.status}, ${(performance.now() - at).toFixed(0)} ms`)
} finally {
  await h.close()
}
