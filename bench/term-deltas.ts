// The term-count trigger's cost per created post, before and after migration 0058 (one delta row per post
// with its lexemes, instead of one row per lexeme): two fresh databases, one migrated by an earlier checkout
// and one by this tree, the same single-row INSERT into `posts` (every trigger fires) against each in turn,
// BENCH_ROUNDS rounds with the order turned each round, each series also with the trigger disabled. Reports
// inserts/s (4 writers) and the CPU per insert of the database's backends (/proc), the steadier figure on a
// shared machine. Texts: the duplicate fixtures' unrelated posts, a post's title and two bodies (~30 lexemes).
// Usage: bun bench/term-deltas.ts <checkout of the earlier tree, e.g. git archive <commit> | tar -x -C dir>
import postgres from 'postgres'
import { newId } from '../server/lib/ids.ts'

const before = process.argv[2]
if (!before) throw new Error('usage: bun bench/term-deltas.ts <earlier checkout>')
const admin = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const prefix = process.env.BENCH_DATABASE ?? 'bench_terms'
const inserts = Number(process.env.BENCH_CREATES ?? 1000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const concurrency = 4
const server = postgres(admin, { max: 1, onnotice: () => {} })
const lines = (await Bun.file(`${import.meta.dir}/../test/fixtures/duplicates/unrelated.txt`).text()).split('\n').filter(Boolean).map((line) => line.split(' | '))
const draft = (i: number) => ({ title: `${lines[i % lines.length]![0]} ${i}`, body: `${lines[i % lines.length]![1]} ${lines[(i * 7 + 3) % lines.length]![1]}` })

interface Target { name: string; sql: postgres.Sql; ws: string; board: string; status: string }
async function target(name: string, tree: string): Promise<Target> {
  const database = `${prefix}_${name}`
  await server.unsafe(`drop database if exists ${database} with (force)`)
  await server.unsafe(`create database ${database}`)
  const url = new URL(admin)
  url.pathname = `/${database}`
  const { openDatabase } = await import(`${tree}/server/db/client.ts`)
  const { findOrCreateUser } = await import(`${tree}/server/modules/auth/service.ts`)
  const { createWorkspace } = await import(`${tree}/server/modules/workspaces/service.ts`)
  const opened = openDatabase(url.toString(), '')
  await opened.migrate()
  const user = await findOrCreateUser(opened.db, 'bench@example.com')
  const workspace = await createWorkspace(opened.db, user.id, { name: 'Bench', slug: 'bench' })
  await opened.close()
  const sql = postgres(url.toString(), { max: concurrency, onnotice: () => {} })
  const board = newId('board')
  await sql`insert into boards (id, workspace_id, slug, name) values (${board}, ${workspace.id}, 'ideas', 'Ideas')`
  const [status] = await sql`select id from statuses where workspace_id = ${workspace.id} and is_default`
  return { name, sql, ws: workspace.id, board, status: status!.id as string }
}

const cpuMs = async (t: Target) => {
  const pids = (await server`select pid from pg_stat_activity where datname = ${`${prefix}_${t.name}`}`).map((row) => row.pid as number)
  let ticks = 0
  for (const pid of pids) {
    const fields = (await Bun.file(`/proc/${pid}/stat`).text().catch(() => '')).split(') ')[1]?.split(' ')
    if (fields) ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks * 10
}

async function series(t: Target, offset: number) {
  let next = 0
  const cpuBefore = await cpuMs(t)
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < inserts) {
      const { title, body } = draft(offset + next++)
      await t.sql`insert into posts (id, workspace_id, board_id, title, body, status_id, language) values (${newId('post')}, ${t.ws}, ${t.board}, ${title}, ${body}, ${t.status}, 'en')`
    }
  }))
  const seconds = (performance.now() - start) / 1000
  return { per_s: inserts / seconds, cpu_ms: ((await cpuMs(t)) - cpuBefore) / inserts }
}

const targets = [await target('before', before), await target('after', `${import.meta.dir}/..`)]
const names = targets.flatMap((t) => [t.name, `${t.name} without term trigger`])
const measured: Record<string, { per_s: number; cpu_ms: number }[]> = {}
let offset = 0
for (let round = 0; round < rounds; round++) {
  for (const name of round % 2 ? [...names].reverse() : names) {
    const t = targets.find((candidate) => name.startsWith(candidate.name))!
    const off = name.endsWith('trigger')
    if (off) await t.sql`alter table posts disable trigger posts_term_counts_insert`
    try {
      (measured[name] ??= []).push(await series(t, offset))
      offset += inserts
    } finally {
      if (off) await t.sql`alter table posts enable trigger posts_term_counts_insert`
    }
  }
  // The deltas as the worker leaves them between rounds: folded (here: emptied), so neither table only grows.
  for (const t of targets) await t.sql`truncate post_term_deltas`
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
console.log(JSON.stringify({
  inserts, concurrency, rounds, load_average: (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' '),
  series: Object.fromEntries(names.map((name) => [name, {
    per_s: Math.round(median(measured[name]!.map((run) => run.per_s))),
    cpu_ms_per_insert: +median(measured[name]!.map((run) => run.cpu_ms)).toFixed(3),
  }])),
}, null, 1))
for (const t of targets) await t.sql.end()
if (!process.env.BENCH_KEEP) for (const t of targets) await server.unsafe(`drop database if exists ${prefix}_${t.name} with (force)`)
await server.end()
