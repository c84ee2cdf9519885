// `npm run bench:import [-- --posts N]`: a CSV import of N posts (default 100,000; the scale knob) with 10 votes each
// (1,000,000 votes from 20,000 voters) into a fresh PostgreSQL database, through the same check, job
// row and runner as POST …/imports; rows per second and the process's peak RSS over its RSS before.
// Raw baseline: COPY of the same posts and votes (the least work the rows need: no parsing in
// JavaScript, no id map, no idempotency). Goals (issue 39): ≥ 5,000 posts/s, RSS growth < 100 MB.
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
  const [counts] = await sql`select (select count(*)::int from posts where workspace_id = ${workspaceId}) as posts, (select count(*)::int from votes where workspace_id = ${workspaceId}) as votes`
  await sql.end()
  await database.close()
  return { seconds, copySeconds: (copied - started) / 1000, peakGrowthMb: (peak - rssBefore) / 1024 / 1024, posts: counts!.posts as number, votes: counts!.votes as number, id: received.dry_run ? '' : received.id }
}

/** COPY of the same rows: posts (with a board and status made first), voters, votes. */
async function copyRun(url: string) {
  const database = openDatabase(url, '')
  await database.migrate()
  await database.close()
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const workspaceId = await workspace(sql)
  const board = newId('board')
  const status = newId('status')
  await sql`insert into boards (id, workspace_id, slug, name) values (${board}, ${workspaceId}, 'ideas', 'Ideas')`
  await sql`insert into statuses (id, workspace_id, name, kind, position, is_default) values (${status}, ${workspaceId}, 'Open', 'open', 0, true)`
  const started = performance.now()
  const users = await sql`copy end_users (id, workspace_id, email) from stdin`.writable()
  for (let u = 0; u < VOTERS; u++) users.write(`eu_${u}\t${workspaceId}\tu${u}@example.com\n`)
  await new Promise((resolve) => users.end(resolve))
  const posts = await sql`copy posts (id, workspace_id, board_id, title, body, status_id, author_end_user_id, created_at) from stdin`.writable()
  for (let i = 0; i < POSTS; i++) if (!posts.write(`post_${i}\t${workspaceId}\t${board}\tIdea ${i}: make the thing faster\tLonger text for idea ${i}, with a comma\t${status}\teu_${i % VOTERS}\t2024-01-01T00:00:00Z\n`)) await new Promise((resolve) => posts.once('drain', resolve))
  await new Promise((resolve) => posts.end(resolve))
  const votes = await sql`copy votes (id, workspace_id, post_id, end_user_id, created_at) from stdin`.writable()
  for (let i = 0; i < POSTS; i++) {
    for (let v = 0; v < VOTES_PER_POST; v++) {
      if (!votes.write(`vote_${i}_${v}\t${workspaceId}\tpost_${i}\teu_${(i * 7 + v * 13) % VOTERS}\t2024-01-02T00:00:00Z\n`)) await new Promise((resolve) => votes.once('drain', resolve))
    }
  }
  await new Promise((resolve) => votes.end(resolve))
  const seconds = (performance.now() - started) / 1000
  await sql.end()
  return { seconds }
}

await writeCsv()
const chorusDb = await benchDatabase('bench_import')
const copyDb = await benchDatabase('bench_import_copy')
try {
  const loadBefore = loadavg()[0]!
  const chorus = await chorusRun(chorusDb.url)
  const raw = await copyRun(copyDb.url)
  const rows = chorus.posts + chorus.votes
  const lines = [
    `CSV import of ${POSTS.toLocaleString('en')} posts with ${(POSTS * VOTES_PER_POST).toLocaleString('en')} votes by ${VOTERS.toLocaleString('en')} voters (posts.csv + votes.csv), on PostgreSQL, through the import's check, job row and runner (\`npm run bench:import -- --posts ${POSTS}\`).`,
    '',
    '| | seconds | posts/s | rows/s | peak RSS growth |',
    '|---|---|---|---|---|',
    `| Chorus import (check + run) | ${chorus.seconds.toFixed(1)} | ${Math.round(chorus.posts / chorus.seconds).toLocaleString('en')} | ${Math.round(rows / chorus.seconds).toLocaleString('en')} | ${chorus.peakGrowthMb.toFixed(0)} MB |`,
    `| Raw: COPY of the same rows | ${raw.seconds.toFixed(1)} | ${Math.round(POSTS / raw.seconds).toLocaleString('en')} | ${Math.round((POSTS * (1 + VOTES_PER_POST) + VOTERS) / raw.seconds).toLocaleString('en')} | n/a |`,
    '',
    `Ratio Chorus / COPY: ${(chorus.seconds / raw.seconds).toFixed(1)}×. Imported: ${chorus.posts} posts, ${chorus.votes} votes. Load average (1 min) ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after, on ${navigator.hardwareConcurrency} cores.`,
  ]
  console.log(lines.join('\n'))
  await writeSection('Import: CSV posts with votes', lines)
} finally {
  await chorusDb.drop()
  await copyDb.drop()
  await rm(dir, { recursive: true, force: true })
}
