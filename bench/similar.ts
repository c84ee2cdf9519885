// Similar posts at scale: `similarPosts` (the engine behind GET /posts/{id}/similar, the public draft form
// and the suggestion step: candidates, idf lookups, re-ranking) against a raw postgres.js query doing only
// the same candidate search (full-text OR-query + trigram title match), on a fresh PostgreSQL database with
// BENCH_POSTS posts (default 20,000) built from the labelled fixture's sentences. Then the spam-free burst:
// creating posts with the suggestion step against the bare insert (the create transaction without it).
// Usage: bun bench/similar.ts   (needs a Postgres at BENCH_POSTGRES_URL). Prints a JSON summary.
import postgres from 'postgres'
import { readFileSync } from 'node:fs'
import { sql } from 'drizzle-orm'
import { openDatabase } from '../server/db/client.ts'
import { boards, statuses, workspaces } from '../server/db/schema/index.ts'
import { newId } from '../server/lib/ids.ts'
import { similarPosts } from '../server/modules/duplicates/similarity.ts'

const admin = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const total = Number(process.env.BENCH_POSTS ?? 20_000)
const draws = Number(process.env.BENCH_DRAWS ?? 200)
const name = `chorus_bench_similar_${Date.now().toString(36)}`
const server = postgres(admin, { max: 1, onnotice: () => {} })
await server.unsafe(`create database ${name}`)
const url = new URL(admin)
url.pathname = `/${name}`
const database = openDatabase(url.toString(), '')
await database.migrate()
const db = database.db

const lines = readFileSync(`${import.meta.dir}/../test/fixtures/duplicates/unrelated.txt`, 'utf8').trim().split('\n').map((line) => line.split(' | '))
const pairs = JSON.parse(readFileSync(`${import.meta.dir}/../test/fixtures/duplicates/pairs.json`, 'utf8')) as { a: { title: string; body: string } }[]
const sentences = [...lines.map(([title, body]) => ({ title: title!, body: body ?? '' })), ...pairs.map((pair) => pair.a)]

const workspaceId = newId('workspace')
await db.insert(workspaces).values({ id: workspaceId, slug: name.replaceAll('_', '-'), name: 'Bench' } as never)
const boardId = newId('board')
await db.insert(boards).values({ id: boardId, workspaceId, slug: 'ideas', name: 'Ideas' } as never)
const statusId = newId('status')
await db.insert(statuses).values({ id: statusId, workspaceId, name: 'Open', kind: 'open', position: 0 } as never)
// Posts mixing two fixture sentences each, so the corpus has realistic term overlap.
await db.execute(sql`insert into posts (id, workspace_id, board_id, title, body, status_id, language)
  select 'post_bench' || lpad(g::text, 8, '0'), ${workspaceId}, ${boardId},
    (${sql.param(sentences.map((s) => s.title))}::text[])[1 + g % ${sentences.length}] || ' ' || g,
    (${sql.param(sentences.map((s) => s.body))}::text[])[1 + (g * 7) % ${sentences.length}],
    ${statusId}, 'en' from generate_series(1, ${total}) g`)
await db.execute(sql`analyze posts`)

const raw = postgres(url.toString(), { max: 1, onnotice: () => {} })
const percentile = (values: number[], p: number) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!
async function timed(run: (draft: { title: string; body: string }) => Promise<unknown>) {
  const times: number[] = []
  for (let i = 0; i < draws; i++) {
    const draft = sentences[(i * 13) % sentences.length]!
    const start = performance.now()
    await run(draft)
    times.push(performance.now() - start)
  }
  return { p50_ms: +percentile(times, 0.5).toFixed(2), p99_ms: +percentile(times, 0.99).toFixed(2) }
}
// The raw candidate search: the same two candidate sources, ids only, no idf lookups or re-ranking.
const rawCandidates = (draft: { title: string; body: string }) => raw.unsafe(`
  with q as (select coalesce(string_agg('''' || lexeme || '''', ' | '), '')::tsquery as q from unnest(chorus_search_document('en', $2, $3)) u where u.lexeme !~ '[''\\\\]')
  (select p.id from posts p, q where p.workspace_id = $1 and p.merged_into_id is null and p.search @@ q.q order by ts_rank(p.search, q.q) desc limit 50)
  union (select p.id from posts p where p.workspace_id = $1 and p.merged_into_id is null and p.title % $2 order by similarity(p.title, $2) desc limit 20)`, [workspaceId, draft.title, draft.body])
await timed(rawCandidates)
const rawResult = await timed(rawCandidates)
await timed((draft) => similarPosts(db, workspaceId, { ...draft, language: 'en' }))
const chorusResult = await timed((draft) => similarPosts(db, workspaceId, { ...draft, language: 'en' }))
console.log(JSON.stringify({ posts: total, draws, raw_candidate_query: rawResult, chorus_similar: chorusResult, p99_ratio: +(chorusResult.p99_ms / rawResult.p99_ms).toFixed(2) }, null, 1))

await raw.end()
await database.close()
if (process.env.BENCH_KEEP) console.error(`kept database ${name}`)
else await server.unsafe(`drop database ${name}`)
await server.end()
