// Where a post create's time goes (issue 36, "creating a post stays ≥ 0.8× the raw insert baseline"), on a
// database bench/similar.ts kept (BENCH_KEEP=1): the create service against raw postgres.js writes of the
// same row, each series also with the term-count trigger (migration 0048) disabled. Throughput swings with
// the machine's load, so besides creates/s (4 writers) it reports CPU milliseconds per create: this process's
// (process.cpuUsage) plus the database's backends' (/proc/<pid>/stat of its connections; PostgreSQL on the
// same machine). On a saturated machine throughput follows CPU per create.
// Usage: bun bench/similar-create.ts <database url>   (BENCH_CREATES per series, default 400; BENCH_ROUNDS, default 5)
import postgres from 'postgres'
import { openDatabase } from '../server/db/client.ts'
import { users } from '../server/db/schema/index.ts'
import { newId } from '../server/lib/ids.ts'
import { createPost } from '../server/modules/posts/service.ts'

const url = process.argv[2]
if (!url) throw new Error('usage: bun bench/similar-create.ts <url of a database bench/similar.ts kept>')
const creates = Number(process.env.BENCH_CREATES ?? 400)
const roundCount = Number(process.env.BENCH_ROUNDS ?? 5)
const concurrency = 4
const database = openDatabase(url, '')
const db = database.db
const raw = postgres(url, { max: concurrency, onnotice: () => {} })
const [user] = await db.select().from(users).limit(1)
const [ids] = await raw<{ ws: string; board: string; status: string }[]>`select w.id as ws, b.id as board,
  (select s.id from statuses s where s.workspace_id = w.id and s.is_default) as status from workspaces w join boards b on b.workspace_id = w.id where w.slug = 'bench'`
if (!ids || !user) throw new Error('not a database of bench/similar.ts (BENCH_KEEP=1)')
const { ws, board, status } = ids
const caller = { kind: 'session' as const, user, sessionId: 'bench', impersonatorId: null }
const texts = await raw<{ title: string; body: string }[]>`select title, body from posts where id like 'post_bench%' order by id limit 500`
const draft = (i: number) => ({ title: `${texts[i % texts.length]!.title} ${i}`, body: texts[(i * 7) % texts.length]!.body })

const variants: Record<string, (i: number) => Promise<unknown>> = {
  // The least-work baseline: one INSERT of the row (every index and trigger of posts fires).
  raw: (i) => raw`insert into posts (id, workspace_id, board_id, title, body, status_id, language) values (${newId('post')}, ${ws}, ${board}, ${draft(i).title}, ${draft(i).body}, ${status}, 'en')`,
  // The least a post needs for its suggestion step: the row and its post.created outbox row, pipelined in one transaction.
  raw_with_event: (i) => raw.begin((tx) => {
    const id = newId('post')
    return [
      tx`insert into posts (id, workspace_id, board_id, title, body, status_id, language) values (${id}, ${ws}, ${board}, ${draft(i).title}, ${draft(i).body}, ${status}, 'en')`,
      tx`insert into events (id, workspace_id, type, data) values (${newId('event')}, ${ws}, 'post.created', ${tx.json({ post: { id, ...draft(i) } })})`,
    ]
  }),
  // The same statements as the create service, raw: lookups, the row, its first status, the post read back, its event.
  raw_same_statements: (i) => raw.begin(async (tx) => {
    const id = newId('post')
    await Promise.all([tx`select * from boards where workspace_id = ${ws} and slug = 'ideas'`, tx`select * from statuses where workspace_id = ${ws} and is_default limit 1`])
    await Promise.all([
      tx`insert into posts (id, workspace_id, board_id, title, body, status_id, language) values (${id}, ${ws}, ${board}, ${draft(i).title}, ${draft(i).body}, ${status}, 'en')`,
      tx`insert into status_changes (id, post_id, to_status_id) values (${newId('statusChange')}, ${id}, ${status})`,
      tx`select p.id, p.title, p.body, p.created_at, s.name, b.slug from posts p join statuses s on s.id = p.status_id join boards b on b.id = p.board_id where p.id = ${id}`,
      tx`insert into events (id, workspace_id, type, data) select ${newId('event')}, ${ws}, 'post.created', jsonb_build_object('post', to_jsonb(p) - 'search') from posts p where p.id = ${id}`,
    ])
  }),
  chorus: (i) => createPost(db, ws, caller, 'ideas', { ...draft(i), language: 'en' }),
}

const admin = postgres(url, { max: 1, onnotice: () => {} })
const TICKS_PER_S = 100
/** CPU ms the database's backends have used so far (user + system). */
async function backendCpuMs() {
  const pids = (await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`).map((row) => row.pid)
  let ticks = 0
  for (const pid of pids) {
    const fields = (await Bun.file(`/proc/${pid}/stat`).text().catch(() => '')).split(') ')[1]?.split(' ')
    if (fields) ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks * 1000 / TICKS_PER_S
}
async function series(write: (i: number) => Promise<unknown>) {
  let next = 0
  const backendBefore = await backendCpuMs()
  const processBefore = process.cpuUsage()
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => { while (next < creates) await write(next++) }))
  const seconds = (performance.now() - start) / 1000
  const own = process.cpuUsage(processBefore)
  const processMs = (own.user + own.system) / 1000
  const backendMs = (await backendCpuMs()) - backendBefore
  return { per_s: creates / seconds, cpu_ms: (processMs + backendMs) / creates, process_cpu_ms: processMs / creates }
}
const termTrigger = (on: boolean) => raw.unsafe(`alter table posts ${on ? 'enable' : 'disable'} trigger posts_term_counts_insert`)

const names = Object.keys(variants).flatMap((name) => [name, `${name} without term trigger`])
const measured: Record<string, Awaited<ReturnType<typeof series>>[]> = {}
for (let round = 0; round < roundCount; round++) {
  // The order turned every other round.
  for (const name of round % 2 ? [...names].reverse() : names) {
    const off = name.endsWith(' without term trigger')
    if (off) await termTrigger(false)
    try {
      (measured[name] ??= []).push(await series(variants[name.replace(' without term trigger', '')]!))
    } finally {
      if (off) await termTrigger(true)
    }
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
console.log(JSON.stringify({
  creates, concurrency, rounds: roundCount, load_average: (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' '),
  series: Object.fromEntries(names.map((name) => {
    const runs = measured[name]!
    return [name, {
      per_s: Math.round(median(runs.map((run) => run.per_s))),
      // Per round against the raw INSERT of that round (with the trigger as the series has it).
      per_s_ratio_to_raw: +median(runs.map((run, i) => run.per_s / measured[name.endsWith('trigger') ? 'raw without term trigger' : 'raw']![i]!.per_s)).toFixed(2),
      cpu_ms_per_create: +median(runs.map((run) => run.cpu_ms)).toFixed(2),
      of_which_this_process_ms: +median(runs.map((run) => run.process_cpu_ms)).toFixed(2),
    }]
  })),
}, null, 1))
await raw.end()
await admin.end()
await database.close()
