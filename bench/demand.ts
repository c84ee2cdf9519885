// Revenue-weighted demand at scale (issue 37): the team's posts list sorted by `mrr` against `top` on the
// same board, both through the app over HTTP (app.handle) and as the raw page walk (the least work: one
// index-ordered query of the page's ids), and one company MRR update that touches N posts.
// Usage: bun bench/demand.ts [posts=100000] [votes=1000000] [companies=5000] [touched=10000]
// (DATABASE_URL=postgres://… for PostgreSQL; PGlite in memory otherwise). Figures go to BENCHMARKS.md.
import { sql } from 'drizzle-orm'
import { createApp } from '../server/app.ts'
import { getConfig } from '../server/config.ts'
import { openDatabase } from '../server/db/client.ts'

const [posts = 100_000, votes = 1_000_000, companyCount = 5_000, touched = 10_000] = process.argv.slice(2).map(Number)
const database = openDatabase(process.env.DATABASE_URL ?? 'memory://', '')
await database.migrate()
const db = database.db
const run = (query: string) => db.execute(sql.raw(query))

const started = performance.now()
await run(`insert into workspaces (id, slug, name, subscription_status) values ('ws_b', 'bench', 'Bench', 'active')`)
await run(`insert into boards (id, workspace_id, slug, name) values ('brd_b', 'ws_b', 'ideas', 'Ideas')`)
await run(`insert into statuses (id, workspace_id, name, kind, position, is_default) values ('sts_b', 'ws_b', 'Open', 'open', 0, true)`)
await run(`insert into companies (id, workspace_id, external_id, name, mrr) select 'co_' || i, 'ws_b', 'c' || i, 'Company ' || i, (i * 7919) % 1000000 from generate_series(1, ${companyCount}) i`)
const voters = Math.max(companyCount * 4, Math.ceil(votes / 50))
await run(`insert into end_users (id, workspace_id, external_id, verified_at) select 'eu_' || i, 'ws_b', 'u' || i, now() from generate_series(1, ${voters}) i`)
await run(`insert into end_user_companies (end_user_id, company_id) select 'eu_' || i, 'co_' || (1 + i % ${companyCount}) from generate_series(1, ${voters}) i`)
await run(`insert into posts (id, workspace_id, board_id, title, status_id, created_at) select 'post_' || i, 'ws_b', 'brd_b', 'Post ' || i, 'sts_b', now() - i * interval '1 minute' from generate_series(1, ${posts}) i`)
// Votes through the triggers (the demand counters are built as they would be in use), in batches.
const perPost = Math.max(1, Math.floor(votes / posts))
for (let from = 0; from < votes; from += 50_000) {
  const to = Math.min(votes, from + 50_000)
  await run(`insert into votes (id, workspace_id, post_id, end_user_id) select 'vote_' || v, 'ws_b', 'post_' || (1 + (v / ${perPost}) % ${posts}), 'eu_' || (1 + (v * 31 + v / ${perPost}) % ${voters})
    from generate_series(${from}, ${to - 1}) v on conflict do nothing`)
}
await run(`update posts set vote_count = (select count(*) from votes where post_id = posts.id) where workspace_id = 'ws_b'`)
await run('analyze')
console.log(`seeded ${posts} posts, ${votes} votes, ${companyCount} companies, ${voters} voters in ${((performance.now() - started) / 1000).toFixed(1)} s`)

const config = getConfig({ SECRET_KEY: 'bench-secret-key-that-is-long-enough-0123456789', LOG_LEVEL: 'silent', BASE_URL: 'http://localhost', BILLING: 'off', RATE_LIMIT_PER_IP: '1000000', RATE_LIMIT_PER_KEY: '1000000' })
const { app } = await createApp({ config, database })
const key = 'chorus_sk_' + 'b'.repeat(32)
const hash = new Bun.CryptoHasher('sha256').update(key).digest('hex')
await run(`insert into api_keys (id, workspace_id, name, start, key_hash, scopes) values ('key_b', 'ws_b', 'bench', 'chorus_sk_bbbb', '${hash}', '["posts:read","companies:read"]')`)

const percentile = (samples: number[], p: number) => samples.sort((a, b) => a - b)[Math.min(samples.length - 1, Math.floor(samples.length * p))]!
async function time(label: string, n: number, once: () => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await once()
  const samples: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await once()
    samples.push(performance.now() - t0)
  }
  console.log(`${label.padEnd(34)} p50 ${percentile(samples, 0.5).toFixed(2)} ms  p99 ${percentile(samples, 0.99).toFixed(2)} ms`)
  return percentile(samples, 0.99)
}
const list = (sort: string) => async () => {
  const res = await app.handle(new Request(`http://localhost/api/v1/boards/ideas/posts?sort=${sort}&page=3`, { headers: { authorization: `Bearer ${key}` } }))
  if (res.status !== 200) throw new Error(`${sort}: ${res.status} ${await res.text()}`)
  await res.arrayBuffer()
}
const raw = (order: string) => () => run(`select id from posts where board_id = 'brd_b' and merged_into_id is null order by ${order}, created_at desc, id desc limit 20 offset 40`)
const top = await time('chorus  sort=top', 300, list('top'))
const mrr = await time('chorus  sort=mrr', 300, list('mrr'))
await time('raw     top page walk', 300, raw('vote_count desc'))
await time('raw     mrr page walk', 300, raw('demand_mrr desc'))
console.log(`sort=mrr p99 / sort=top p99 = ${(mrr / top).toFixed(2)} (goal ≤ 2)`)

// One company voted on `touched` posts: how long its MRR change takes to reach them all.
await run(`insert into companies (id, workspace_id, external_id, name, mrr) values ('co_wide', 'ws_b', 'wide', 'Wide', 100)`)
await run(`insert into end_users (id, workspace_id, external_id, verified_at) values ('eu_wide', 'ws_b', 'wide-user', now())`)
await run(`insert into end_user_companies (end_user_id, company_id) values ('eu_wide', 'co_wide')`)
await run(`insert into votes (id, workspace_id, post_id, end_user_id) select 'vote_w' || i, 'ws_b', 'post_' || i, 'eu_wide' from generate_series(1, ${Math.min(touched, posts)}) i`)
const t0 = performance.now()
await run(`update companies set mrr = 500000 where id = 'co_wide'`)
console.log(`MRR update touching ${Math.min(touched, posts)} posts: ${(performance.now() - t0).toFixed(0)} ms (goal < 1000)`)
await database.close()
process.exit(0)
