// Similar posts at scale (issue 36), on a fresh PostgreSQL database of BENCH_POSTS posts (default 100,000)
// in seven languages, built set-wise in one INSERT … generate_series from the labelled fixture's sentences
// (each post: a fixture title with a word of another title of its language, and three bodies of it).
//   1. `similarPosts` (the engine behind GET /posts/{id}/similar, the public draft form and the suggestion
//      step) against raw postgres.js statements doing the same candidate search, with a breakdown by step.
//   2. Creating posts: the create service (its transaction, the term-count trigger) against a raw INSERT of
//      the same row and against the row with its outbox event (the least a post needs for its suggestion
//      step), each also without the term-count trigger, rounds in turned orders; then the suggestion step the
//      background worker runs for each new post.
// Usage: bun bench/similar.ts   (a Postgres at BENCH_POSTGRES_URL; BENCH_POSTS, BENCH_DRAWS, BENCH_CREATES,
// BENCH_CONCURRENCY scale it; BENCH_KEEP=1 keeps the database). Prints a JSON summary.
import postgres from 'postgres'
import { readFileSync } from 'node:fs'
import { sql } from 'drizzle-orm'
import { openDatabase } from '../server/db/client.ts'
import { boards, statuses } from '../server/db/schema/index.ts'
import { detectLanguage, type Language } from '../server/lib/language.ts'
import { newId } from '../server/lib/ids.ts'
import { findOrCreateUser } from '../server/modules/auth/service.ts'
import { runDuplicateChecks } from '../server/modules/duplicates/queue.ts'
import { foldWaitingTerms } from '../server/modules/duplicates/term-counts.ts'
import { planSearch, similarPosts } from '../server/modules/duplicates/similarity.ts'
import { createPost } from '../server/modules/posts/service.ts'
import { createWorkspace } from '../server/modules/workspaces/service.ts'
import { benchDatabase } from './database.ts'

const total = Number(process.env.BENCH_POSTS ?? 100_000)
const draws = Number(process.env.BENCH_DRAWS ?? 300)
const creates = Number(process.env.BENCH_CREATES ?? 400)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4)
const started = performance.now()
const seconds = () => +((performance.now() - started) / 1000).toFixed(1)

const bench = await benchDatabase('chorus_bench_similar')
const database = openDatabase(bench.url, '')
await database.migrate()
const db = database.db
const raw = postgres(bench.url, { max: concurrency, onnotice: () => {} })

// The fixture's sentences, grouped by language so a post mixes sentences of one language only.
type Sentence = { title: string; body: string; language: Language }
const fixture = `${import.meta.dir}/../test/fixtures/duplicates`
const unrelated = readFileSync(`${fixture}/unrelated.txt`, 'utf8').trim().split('\n').map((line) => line.split(' | '))
  .map(([title, body]) => ({ title: title!, body: body ?? '', language: detectLanguage(`${title}\n${body ?? ''}`) }))
const pairs = JSON.parse(readFileSync(`${fixture}/pairs.json`, 'utf8')) as { language: Language; a: { title: string; body: string }; b: { title: string; body: string } }[]
const sentences: Sentence[] = [...unrelated, ...pairs.flatMap((pair) => [{ ...pair.a, language: pair.language }, { ...pair.b, language: pair.language }])]
  .sort((a, b) => a.language.localeCompare(b.language) || a.title.localeCompare(b.title))
const first = new Map<string, number>()
sentences.forEach((sentence, i) => { if (!first.has(sentence.language)) first.set(sentence.language, i) })
const languageStart = sentences.map((sentence) => first.get(sentence.language)!)
const languageSize = sentences.map((sentence) => sentences.filter((other) => other.language === sentence.language).length)

const user = await findOrCreateUser(db, 'bench@example.com')
const workspace = await createWorkspace(db, user.id, { name: 'Bench', slug: 'bench' })
const boardId = newId('board')
await db.insert(boards).values({ id: boardId, workspaceId: workspace.id, slug: 'ideas', name: 'Ideas' })
const [status] = await db.select().from(statuses).where(sql`${statuses.workspaceId} = ${workspace.id}`).limit(1)
const caller = { kind: 'session' as const, user, sessionId: 'bench', impersonatorId: null }

// Set-wise: sentence a = g mod S; b and c are other sentences of a's language, chosen by g.
const buildStart = performance.now()
const array = (values: unknown[], type: string) => sql`${sql.param(values)}::${sql.raw(type)}[]`
// A bulk load: the two GIN indexes are dropped and built again afterwards with their own definitions
// (one sorted build instead of 100,000 pending-list inserts); the schema ends as the migrations made it.
const ginIndexes = await raw<{ indexdef: string; indexname: string }[]>`select indexname, indexdef from pg_indexes
  where tablename = 'posts' and indexname in ('posts_search_idx', 'posts_title_trgm_idx')`
if (ginIndexes.length !== 2) throw new Error('posts_search_idx or posts_title_trgm_idx is missing: the bench expects the migrations\' GIN indexes')
for (const index of ginIndexes) await raw.unsafe(`drop index ${index.indexname}`)
// A proper name per post (an integration, a customer, a product area: "Dark mode in Kavoret"), 27,000 of
// them, so the vocabulary grows with the corpus as real boards' does; the fixture alone has ~3,000 words.
const SYLLABLES = ['ka', 'lo', 'mi', 'ran', 'te', 'vo', 'zu', 'bel', 'dor', 'fi', 'gan', 'hu', 'jor', 'ne', 'pa', 'qui', 'ros', 'sa', 'tor', 'ul', 'vik', 'wen', 'xa', 'yel', 'zor', 'bri', 'cla', 'dre', 'ek', 'fro']
const name = (g: ReturnType<typeof sql>) => sql`initcap((${array(SYLLABLES, 'text')})[1 + ${g} % 30] || (${array(SYLLABLES, 'text')})[1 + (${g} / 30) % 30] || (${array(SYLLABLES, 'text')})[1 + (${g} / 900) % 30] || 't')`
// The sentences as a table joined by number: subscripting arrays row by row would detoast them each time.
await db.execute(sql`
  with s as (select * from unnest(${array(sentences.map((x) => x.title), 'text')}, ${array(sentences.map((x) => x.body), 'text')},
      ${array(sentences.map((x) => x.language), 'text')}, ${array(languageStart, 'int')}, ${array(languageSize, 'int')}) with ordinality s(title, body, language, start, size, i)),
    mixed as (select g, s.title, s.body, s.language, s.start + 1 + (g * 7 + g / ${sentences.length}) % s.size as b, s.start + 1 + (g * 13 + 5) % s.size as c
      from generate_series(1, ${total}) g join s on s.i = 1 + g % ${sentences.length})
  insert into posts (id, workspace_id, board_id, title, body, status_id, language, created_at)
  select 'post_bench' || lpad(m.g::text, 8, '0'), ${workspace.id}, ${boardId}, trim(m.title || ' ' || split_part(sb.title, ' ', 1 + m.g % 3)) || ' ' || n.name,
    m.body || ' ' || sb.body || ' ' || sc.body || ' ' || n.other, ${status!.id}, m.language, now() - make_interval(secs => ${total} - m.g)
  from mixed m join s sb on sb.i = m.b join s sc on sc.i = m.c,
    lateral (select ${name(sql`m.g`)} as name, ${name(sql`m.g * 7919`)} as other) n`)
await raw.begin(async (tx) => {
  await tx.unsafe(`set local maintenance_work_mem = '256MB'`)
  for (const index of ginIndexes) await tx.unsafe(index.indexdef)
})
// The term deltas the load wrote (one per post) folded into the counts, as the background worker folds
// them after every write; left unfolded, every idf read summed all 100,000 of them (~140 ms a draft).
await foldWaitingTerms(db, Infinity)
await db.execute(sql`analyze posts`)
await db.execute(sql`vacuum analyze post_term_deltas`)
await db.execute(sql`vacuum analyze post_term_counts`)
const buildSeconds = +((performance.now() - buildStart) / 1000).toFixed(1)
console.error(`built ${total} posts in ${buildSeconds} s`)

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!
const summary = (times: number[]) => ({ p50_ms: +percentile(times, 0.5).toFixed(2), p99_ms: +percentile(times, 0.99).toFixed(2) })
// Drafts: stored posts' text (the post itself is one of the candidates for a draft; left out for a post).
const stored = await raw<{ id: string; title: string; body: string; language: Language }[]>`select id, title, body, language from posts
  where id = any(${Array.from({ length: Math.min(draws, total) }, (_, i) => `post_bench${String(1 + (i * 97) % total).padStart(8, '0')}`)}) order by id`
const draftOf = (i: number) => { const post = stored[i % stored.length]!; return { title: post.title, body: post.body, language: post.language } }

// The raw statements: the same candidate search as Chorus (the same chosen terms, the same two sources),
// ids only; the plan (draft terms, their document frequencies) is made beforehand, outside the timing.
const plans = await Promise.all(Array.from({ length: Math.min(draws, sentences.length) }, (_, i) => planSearch(db, workspace.id, draftOf(i))))
const operands = (i: number) => plans[i % plans.length]!.query.map((term) => `'${term.lexeme.replaceAll("'", "''")}'`)
const weights = (i: number) => plans[i % plans.length]!.query.map((term) => term.weight)
const byText = (i: number) => raw.unsafe(`select p.id from posts p where p.workspace_id = $1 and p.merged_into_id is null and p.search @@ $2::tsquery
    order by (select sum(x.w) from unnest($3::tsquery[], $4::float8[]) x(q, w) where p.search @@ x.q) desc, p.id limit 50`,
  [workspace.id, operands(i).join(' | '), operands(i), weights(i)])
const byTitle = (i: number) => raw.unsafe(`select p.id from posts p where p.workspace_id = $1 and p.merged_into_id is null and p.title % $2
    order by similarity(p.title, $2) desc, p.id limit 20`, [workspace.id, draftOf(i).title])
const both = (i: number) => raw.unsafe(`with by_text as (select p.id from posts p where p.workspace_id = $1 and p.merged_into_id is null and p.search @@ $2::tsquery
    order by (select sum(x.w) from unnest($3::tsquery[], $4::float8[]) x(q, w) where p.search @@ x.q) desc, p.id limit 50)
  select id from by_text union (select p.id from posts p where (select count(*) from by_text) < 5 and p.workspace_id = $1 and p.merged_into_id is null
    and p.title % $5 order by similarity(p.title, $5) desc, p.id limit 20)`,
  [workspace.id, operands(i).join(' | '), operands(i), weights(i), draftOf(i).title])
// Before 0048: every term of the draft (up to 40) OR'd and ranked by ts_rank, for the record.
const naive = (i: number) => raw.unsafe(`with q as (select coalesce(string_agg('''' || lexeme || '''', ' | '), '')::tsquery as q
      from (select u.lexeme from unnest(chorus_search_document($4, $2, $3)) u where u.lexeme !~ '[''\\\\]' order by 'A' = any(u.weights) desc limit 40) u)
  select p.id from posts p, q where p.workspace_id = $1 and p.merged_into_id is null and p.search @@ q.q order by ts_rank(p.search, q.q) desc limit 50`,
  [workspace.id, draftOf(i).title, draftOf(i).body, draftOf(i).language])

async function timed(run: (i: number) => Promise<unknown>, count = draws) {
  for (let i = 0; i < Math.min(10, count); i++) await run(i)
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    await run(i)
    times.push(performance.now() - start)
  }
  return summary(times)
}
const similar = {
  raw_candidate_search: await timed(both),
  raw_full_text_source: await timed(byText),
  raw_trigram_source_when_it_runs: await timed(byTitle, Math.min(draws, 30)),
  chorus_plan: await timed((i) => planSearch(db, workspace.id, draftOf(i))),
  chorus_similar_posts: await timed((i) => similarPosts(db, workspace.id, draftOf(i))),
  chorus_similar_of_a_post: await timed((i) => { const post = stored[i % stored.length]!; return similarPosts(db, workspace.id, { ...post, boardId }, { excludeId: post.id }) }),
  naive_or_query_before_0048: await timed(naive, Math.min(draws, 20)),
}
console.error('similar done', seconds())

// Creates: CONCURRENCY writers at a time, the create service against a raw INSERT of the same row.
const createDraft = (i: number) => { const s = sentences[(i * 31) % sentences.length]!; return { title: `${s.title} ${i}`, body: s.body } }
async function throughput(write: (i: number) => Promise<unknown>) {
  let next = 0
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => { while (next < creates) await write(next++) }))
  return +(creates / ((performance.now() - start) / 1000)).toFixed(0)
}
const rawInsert = (i: number) => raw`insert into posts (id, workspace_id, board_id, title, body, status_id, language)
  values (${newId('post')}, ${workspace.id}, ${boardId}, ${createDraft(i).title}, ${createDraft(i).body}, ${status!.id}, 'en')`
// The least a post needs for its suggestion step (and its webhooks): the row and its `post.created` outbox
// row, committed together (the dispatcher queues the duplicate check from the event), the two statements
// pipelined in one transaction. The bare INSERT above does less than that: nothing would ever check it.
const rawInsertWithEvent = (i: number) => raw.begin((tx) => {
  const id = newId('post')
  return [
    tx`insert into posts (id, workspace_id, board_id, title, body, status_id, language)
      values (${id}, ${workspace.id}, ${boardId}, ${createDraft(i).title}, ${createDraft(i).body}, ${status!.id}, 'en')`,
    tx`insert into events (id, workspace_id, type, data) values (${newId('event')}, ${workspace.id}, 'post.created', ${tx.json({ post: { id, title: createDraft(i).title, body: createDraft(i).body } })})`,
  ]
})
const chorusCreate = (i: number) => createPost(db, workspace.id, caller, 'ideas', { ...createDraft(i), language: 'en' })
// The term-count trigger (migration 0048) is the one part of the suggestion machinery on the create path. It
// fires for the raw INSERT too (same table): series with it disabled show its cost on both sides.
const withoutTermTrigger = async (write: (i: number) => Promise<unknown>) => {
  await raw`alter table posts disable trigger posts_term_counts_insert`
  try { return await throughput(write) } finally { await raw`alter table posts enable trigger posts_term_counts_insert` }
}
type Round = { raw_per_s: number; raw_with_event_per_s: number; chorus_per_s: number; chorus_without_term_trigger_per_s: number; raw_without_term_trigger_per_s: number }
const series: [keyof Round, () => Promise<number>][] = [
  ['raw_per_s', () => throughput(rawInsert)],
  ['chorus_per_s', () => throughput(chorusCreate)],
  ['raw_with_event_per_s', () => throughput(rawInsertWithEvent)],
  ['chorus_without_term_trigger_per_s', () => withoutTermTrigger(chorusCreate)],
  ['raw_without_term_trigger_per_s', () => withoutTermTrigger(rawInsert)],
]
const rounds: Round[] = []
for (let round = 0; round < 3; round++) {
  // The order turned each round (one series after the other, then the reverse, then rotated).
  const order = round === 1 ? [...series].reverse() : round === 2 ? [...series.slice(2), ...series.slice(0, 2)] : series
  const measured: Partial<Round> = {}
  for (const [key, run] of order) measured[key] = await run()
  rounds.push(measured as Round)
}
const median = (values: number[]) => +[...values].sort((a, b) => a - b)[1]!.toFixed(2)
const ratios = rounds.map((r) => r.chorus_per_s / r.raw_per_s).sort((a, b) => a - b)
const ratio = (of: (r: Round) => number) => median(rounds.map(of))
// The background step for the posts just created: queue them as the dispatcher would, then drain.
// (the last `creates` posts the create service made: theirs have an author, the raw rows none).
await db.execute(sql`insert into duplicate_checks (post_id, workspace_id) select id, workspace_id from posts where id not like 'post_bench%' and author_user_id is not null
  and merged_into_id is null order by created_at desc limit ${creates} on conflict do nothing`)
const queued = Number((await raw`select count(*) from duplicate_checks`)[0]!.count)
const drainStart = performance.now()
while (await runDuplicateChecks(db, (id, error) => console.error(id, error)) > 0);
const drainMs = performance.now() - drainStart

console.log(JSON.stringify({
  posts: total, draws, build_seconds: buildSeconds, load_average: (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' '),
  similar, p99_ratio_chorus_to_raw: +(similar.chorus_similar_posts.p99_ms / similar.raw_candidate_search.p99_ms).toFixed(2),
  create: { creates, concurrency, rounds, median_ratio: median(ratios), range: [+ratios[0]!.toFixed(2), +ratios[2]!.toFixed(2)],
    median_ratio_to_raw_with_event: ratio((r) => r.chorus_per_s / r.raw_with_event_per_s),
    median_ratio_without_term_trigger_both: ratio((r) => r.chorus_without_term_trigger_per_s / r.raw_without_term_trigger_per_s),
    median_ratio_to_create_without_term_trigger: ratio((r) => r.chorus_per_s / r.chorus_without_term_trigger_per_s),
    median_ratio_raw_to_raw_without_term_trigger: ratio((r) => r.raw_per_s / r.raw_without_term_trigger_per_s) },
  background_suggestion_step: { posts: queued, ms_per_post: +(drainMs / Math.max(queued, 1)).toFixed(2) },
  total_seconds: seconds(),
}, null, 1))

await raw.end()
await database.close()
if (process.env.BENCH_KEEP) {
  console.error(`kept database ${bench.name}`)
  await bench.admin.end()
} else await bench.drop()
