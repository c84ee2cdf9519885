// Revenue-weighted demand at scale (issue 37): the team's posts list sorted by `mrr` against `top` on the
// same board, both through the app over HTTP (app.handle) and as the raw page walk (the least work: one
// index-ordered query of the page's ids), and one company MRR update that touches N posts.
// Usage: bun bench/demand.ts [posts=100000] [votes=1000000] [companies=5000] [touched=10000]
// BENCH_DB=postgres (a fresh database on the PostgreSQL at BENCH_POSTGRES_URL, dropped at the end) or
// PGlite in memory (the default). BENCH_SCALE=0.1 shrinks every count at once.
import { eq, sql } from 'drizzle-orm'
import { createApp } from '../server/app.ts'
import { getConfig } from '../server/config.ts'
import { openDatabase, rowsOf } from '../server/db/client.ts'
import { workspaces } from '../server/db/schema/index.ts'
import { putScoring } from '../server/modules/scoring/service.ts'
import { benchDatabase } from './database.ts'

const scale = Number(process.env.BENCH_SCALE ?? 1)
const [posts = 100_000 * scale, votes = 1_000_000 * scale, companyCount = 5_000 * scale, touched = 10_000 * scale] = process.argv.slice(2).map(Number)
const bench = process.env.BENCH_DB === 'postgres' ? await benchDatabase('chorus_bench_demand') : null
const database = openDatabase(bench?.url ?? 'memory://', '')
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
// The per-row board counter would update one row 100,000 times in one transaction: off, and the count set once.
await run(`alter table posts disable trigger posts_count_board_posts`)
await run(`insert into posts (id, workspace_id, board_id, title, status_id, created_at) select 'post_' || i, 'ws_b', 'brd_b', 'Post ' || i, 'sts_b', now() - i * interval '1 minute' from generate_series(1, ${posts}) i`)
await run(`alter table posts enable trigger posts_count_board_posts`)
await run(`insert into board_post_counts (board_id, status_id, posts) values ('brd_b', 'sts_b', ${posts})`)
// Votes set-wise with the per-row demand trigger off, then every post's demand counted in three
// statements (the seed has no plans, so weighted = verified voters; every voter is verified and in one
// company): seconds instead of a trigger call per vote.
const perPost = Math.max(1, Math.floor(votes / posts))
await run(`alter table votes disable trigger votes_demand`)
await run(`insert into votes (id, workspace_id, post_id, end_user_id) select 'vote_' || v, 'ws_b', 'post_' || (1 + (v / ${perPost}) % ${posts}), 'eu_' || (1 + (v * 31 + v / ${perPost}) % ${voters})
  from generate_series(0, ${votes - 1}) v on conflict do nothing`)
await run(`alter table votes enable trigger votes_demand`)
await run(`insert into post_company_votes (post_id, company_id, voters) select v.post_id, l.company_id, count(*) from votes v join end_user_companies l on l.end_user_id = v.end_user_id group by 1, 2`)
await run(`update posts p set vote_count = v.n, demand_verified_voters = v.n, demand_weighted = v.n from (select post_id, count(*) as n from votes group by 1) v where v.post_id = p.id`)
await run(`update posts p set demand_companies = c.n, demand_mrr = c.mrr from (select pcv.post_id, count(*) as n, sum(co.mrr) as mrr from post_company_votes pcv join companies co on co.id = pcv.company_id group by 1) c where c.post_id = p.id`)
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
const wide = Math.min(touched, posts)
const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!
const timed = async (query: string) => {
  const t = performance.now()
  await run(query)
  return performance.now() - t
}
// The floor: the same posts' demand_mrr moved by a bare UPDATE with every user trigger off (replica
// role, in its own transaction). It pays what no trigger can save: each post's new row version and its
// entry in every index of posts (demand_mrr is indexed, so the update is never HOT).
const bare = (delta: number) => db.transaction(async (tx) => {
  await tx.execute(sql`set local session_replication_role = replica`)
  const t = performance.now()
  await tx.execute(sql.raw(`update posts set demand_mrr = demand_mrr + ${delta} where id in (select post_id from post_company_votes where company_id = 'co_wide')`))
  return performance.now() - t
})
// Interleaved so both see the same machine: the company update (its trigger moves every post in one
// statement, migration 0054), then the bare UPDATE of the same posts, five times each.
async function mrrUpdates(label: string, base: number) {
  const updates: number[] = []
  const floors: number[] = []
  for (let i = 0; i < 5; i++) {
    updates.push(await timed(`update companies set mrr = ${base + i * 1000} where id = 'co_wide'`))
    floors.push(await bare(i % 2 === 0 ? 1 : -1))
  }
  const load = (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')
  console.log(`MRR update touching ${wide} posts, ${label}: median ${median(updates).toFixed(0)} ms [${updates.map((t) => t.toFixed(0)).join(', ')}] (goal < 1000)`)
  console.log(`  bare UPDATE of the same posts, no triggers (the floor): median ${median(floors).toFixed(0)} ms [${floors.map((t) => t.toFixed(0)).join(', ')}]; ratio ${(median(updates) / median(floors)).toFixed(2)}; load average ${load}`)
}
await mrrUpdates('no demand formula', 500_000)

// The same with a custom formula over demand (migration 0053): each touched post is rescored in the
// same UPDATE and raises one score.changed. Saving the formula rescores every post of the workspace once.
const [workspace] = await db.select().from(workspaces).where(eq(workspaces.id, 'ws_b'))
const t1 = performance.now()
await putScoring(db, workspace as never, { model: 'custom', formula: 'demand.mrr / 100 + demand.verified_voters' })
console.log(`saving a demand formula, rescoring ${posts} posts: ${(performance.now() - t1).toFixed(0)} ms`)
const scoreEvents = async () => rowsOf<{ n: number }>(await run(`select count(*)::int as n from events where type = 'score.changed'`))[0]!.n
const eventsBefore = await scoreEvents()
await mrrUpdates('with a demand formula (scores and score.changed events)', 700_000)
console.log(`  score.changed events recorded: ${(await scoreEvents()) - eventsBefore} (${wide} posts × 5 updates = ${wide * 5})`)
await database.close()
await bench?.drop()
process.exit(0)
