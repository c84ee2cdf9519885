// `npm run bench:import [-- --posts N]`: a CSV import of N posts (default 100,000; the scale knob) with 10 votes each
// (1,000,000 votes from 20,000 voters) into a fresh PostgreSQL database, through the same check, job
// row and runner as POST …/imports; rows per second and the process's peak RSS over its RSS before.
// Raw baselines: COPY of the same final rows (posts with their vote counts, voters, votes; no parsing in
// JavaScript, no id map, no idempotency) into fresh databases with the same indexes, once with the
// tables' per-row triggers as they stand and once with them standing aside as the import sets them (the
// least work). Goals (issue 39): ≥ 5,000 posts/s, RSS growth < 100 MB.
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import postgres from 'postgres'
import { openDatabase } from '../server/db/client.ts'
import { newId } from '../server/lib/ids.ts'
import { diskStorage } from '../server/lib/storage.ts'
import { claimImport } from '../server/modules/imports/claim.ts'
import { runImport } from '../server/modules/imports/runner.ts'
import { receiveImport } from '../server/modules/imports/service.ts'
import { createDefaultStatuses } from '../server/modules/statuses/defaults.ts'
import { benchDatabase } from './database.ts'
import { writeSection } from './report.ts'

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { posts: { type: 'string' } } })
const POSTS = Number(values.posts ?? 100_000)
const VOTES_PER_POST = 10
const VOTERS = Math.max(100, POSTS / 5)
const dir = join(import.meta.dir, '..', 'data', `bench-import-${Date.now()}`)
await mkdir(dir, { recursive: true })

/** Writes the posts and votes files a line at a time (never whole in memory). */
async function writeCsv() {
  const posts = Bun.file(join(dir, 'posts.csv')).writer()
  const votes = Bun.file(join(dir, 'votes.csv')).writer()
  posts.write('id,board,title,body,status,author_email,created_at\n')
  votes.write('post_id,voter_email,created_at\n')
  for (let i = 0; i < POSTS; i++) {
    posts.write(`p${i},Ideas,"Idea ${i}: make the thing faster","Longer text for idea ${i}, with a comma",Open,u${i % VOTERS}@example.com,2024-01-01T00:00:00Z\n`)
    for (let v = 0; v < VOTES_PER_POST; v++) votes.write(`p${i},u${(i * 7 + v * 13) % VOTERS}@example.com,2024-01-02T00:00:00Z\n`)
    if (i % 1000 === 0) await posts.flush(), await votes.flush()
  }
  await posts.end()
  await votes.end()
}

async function workspace(sql: postgres.Sql) {
  const id = newId('workspace')
  await sql`insert into workspaces (id, slug, name) values (${id}, ${`bench-${Date.now().toString(36)}`}, 'Bench')`
  return id
}

async function chorusRun(url: string) {
  const database = openDatabase(url, '')
  await database.migrate()
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const workspaceId = await workspace(sql)
  await createDefaultStatuses(database.db, workspaceId)
  const storage = diskStorage(join(dir, 'files'))
  Bun.gc(true)
  const rssBefore = process.memoryUsage().rss
  let peak = rssBefore
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50)
  const started = performance.now()
  // Copies of the files (the import removes its own once done), streamed.
  const files = { file: { path: join(dir, 'in-posts.csv'), size: 0, filename: null, type: 'text/csv' }, votes: { path: join(dir, 'in-votes.csv'), size: 0, filename: null, type: 'text/csv' } }
  await Bun.write(files.file.path, Bun.file(join(dir, 'posts.csv')))
  await Bun.write(files.votes.path, Bun.file(join(dir, 'votes.csv')))
  const copied = performance.now()
  const received = await receiveImport({ db: database.db, storage }, workspaceId, { format: 'csv', dryRun: false, files, userId: null })
  const job = (await claimImport(database.db, 1, 0))!
  await runImport(database.db, storage, job, 1)
  const seconds = (performance.now() - copied) / 1000
  clearInterval(sampler)
  const [counts] = await sql`select (select count(*)::int from posts where workspace_id = ${workspaceId}) as posts, (select count(*)::int from votes where workspace_id = ${workspaceId}) as votes, (select sum(vote_count)::int from posts where workspace_id = ${workspaceId}) as vote_count`
  if (counts!.vote_count !== counts!.votes) throw new Error(`the import's vote counts (${counts!.vote_count}) are not its votes (${counts!.votes})`)
  await sql.end()
  await database.close()
  return { seconds, copySeconds: (copied - started) / 1000, peakGrowthMb: (peak - rssBefore) / 1024 / 1024, posts: counts!.posts as number, votes: counts!.votes as number, id: received.dry_run ? '' : received.id }
}

/**
 * COPY of the same final rows: voters, posts (with the vote count the import ends with, 10), votes. `triggers`
 * 'on': the tables' triggers as they stand (a deferred board count per post, the votes' demand trigger per
 * vote); 'aside': the import's settings (migrations 0052, 0057) with one board count, as the import runs them.
 */
async function copyRun(url: string, triggers: 'on' | 'aside') {
  const database = openDatabase(url, '')
  await database.migrate()
  await database.close()
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const workspaceId = await workspace(sql)
  const board = newId('board')
  const status = newId('status')
  await sql`insert into boards (id, workspace_id, slug, name) values (${board}, ${workspaceId}, 'ideas', 'Ideas')`
  await sql`insert into statuses (id, workspace_id, name, kind, position, is_default) values (${status}, ${workspaceId}, 'Open', 'open', 0, true)`
  const loadBefore = loadavg()[0]!
  const started = performance.now()
  if (triggers === 'aside') await sql`select set_config('chorus.bulk_posts', 'on', false), set_config('chorus.bulk_votes', 'on', false)`
  const copy = async (statement: postgres.PendingQuery<postgres.Row[]>, lines: () => Generator<string>) => {
    const stream = await statement.writable()
    for (const line of lines()) if (!stream.write(line)) await new Promise((resolve) => stream.once('drain', resolve))
    await new Promise((resolve) => stream.end(resolve))
  }
  await copy(sql`copy end_users (id, workspace_id, email) from stdin`, function* () {
    for (let u = 0; u < VOTERS; u++) yield `eu_${u}\t${workspaceId}\tu${u}@example.com\n`
  })
  await copy(sql`copy posts (id, workspace_id, board_id, title, body, status_id, author_end_user_id, vote_count, created_at) from stdin`, function* () {
    for (let i = 0; i < POSTS; i++) yield `post_${i}\t${workspaceId}\t${board}\tIdea ${i}: make the thing faster\tLonger text for idea ${i}, with a comma\t${status}\teu_${i % VOTERS}\t${VOTES_PER_POST}\t2024-01-01T00:00:00Z\n`
  })
  await copy(sql`copy votes (id, workspace_id, post_id, end_user_id, created_at) from stdin`, function* () {
    for (let i = 0; i < POSTS; i++) for (let v = 0; v < VOTES_PER_POST; v++) yield `vote_${i}_${v}\t${workspaceId}\tpost_${i}\teu_${(i * 7 + v * 13) % VOTERS}\t2024-01-02T00:00:00Z\n`
  })
  if (triggers === 'aside') await sql`insert into board_post_counts (board_id, status_id, posts) values (${board}, ${status}, ${POSTS})`
  const seconds = (performance.now() - started) / 1000
  const [check] = await sql`select (select sum(vote_count)::int from posts) as votes, (select sum(posts)::int from board_post_counts) as counted`
  if (check!.votes !== POSTS * VOTES_PER_POST || check!.counted !== POSTS) throw new Error(`COPY (${triggers}) ended with other rows: ${JSON.stringify(check)}`)
  await sql.end()
  return { seconds, load: [loadBefore, loadavg()[0]!] }
}

await writeCsv()
const databases = { chorus: await benchDatabase('bench_import'), copy: await benchDatabase('bench_import_copy'), aside: await benchDatabase('bench_import_aside') }
try {
  const loadBefore = loadavg()[0]!
  const chorus = await chorusRun(databases.chorus.url)
  const chorusLoad = loadavg()[0]!
  console.log(`Chorus: ${chorus.seconds.toFixed(1)} s, ${chorus.posts} posts, ${chorus.votes} votes, peak RSS growth ${chorus.peakGrowthMb.toFixed(0)} MB, load ${loadBefore.toFixed(1)}–${chorusLoad.toFixed(1)}`)
  const raw = await copyRun(databases.copy.url, 'on')
  const aside = await copyRun(databases.aside.url, 'aside')
  const rows = chorus.posts + chorus.votes
  const rawRows = POSTS * (1 + VOTES_PER_POST) + VOTERS
  const row = (name: string, seconds: number, posts: number, all: number, rss: string, load: string) =>
    `| ${name} | ${seconds.toFixed(1)} | ${Math.round(posts / seconds).toLocaleString('en')} | ${Math.round(all / seconds).toLocaleString('en')} | ${rss} | ${load} |`
  const lines = [
    `CSV import of ${POSTS.toLocaleString('en')} posts with ${(POSTS * VOTES_PER_POST).toLocaleString('en')} votes by ${VOTERS.toLocaleString('en')} voters (posts.csv + votes.csv), on PostgreSQL, through the import's check, job row and runner (\`npm run bench:import -- --posts ${POSTS}\`), then COPY of the same final rows into fresh databases with the same indexes.`,
    '',
    '| | seconds | posts/s | rows/s | peak RSS growth | load (1 min) |',
    '|---|---|---|---|---|---|',
    row('Chorus import (check + run)', chorus.seconds, chorus.posts, rows, `${chorus.peakGrowthMb.toFixed(0)} MB`, `${loadBefore.toFixed(1)}–${chorusLoad.toFixed(1)}`),
    row('Raw: COPY, triggers as they stand', raw.seconds, POSTS, rawRows, 'n/a', raw.load.map((value) => value.toFixed(1)).join('–')),
    row('Raw: COPY, per-row triggers aside as the import sets them', aside.seconds, POSTS, rawRows, 'n/a', aside.load.map((value) => value.toFixed(1)).join('–')),
    '',
    `Ratio Chorus / COPY: ${(chorus.seconds / raw.seconds).toFixed(2)}× (triggers as they stand), ${(chorus.seconds / aside.seconds).toFixed(2)}× (triggers aside). Imported: ${chorus.posts} posts, ${chorus.votes} votes. On ${navigator.hardwareConcurrency} cores.`,
  ]
  console.log(lines.join('\n'))
  await writeSection('Import: CSV posts with votes, last run', lines)
} finally {
  for (const database of Object.values(databases)) await database.drop()
  await rm(dir, { recursive: true, force: true })
}
