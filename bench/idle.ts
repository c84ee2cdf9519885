// An idle server: memory and the work it does when nobody calls it. Starts `bun server/index.ts` on
// PGlite (a fresh DATA_DIR) and on a fresh local PostgreSQL database, waits until it is ready, lets it
// settle, then for BENCH_SECONDS (20) records its CPU time (all threads), and on PostgreSQL how many
// of its connections ran any statement meanwhile (pg_stat_activity.state_change). Raw baseline: a bare Bun.serve + postgres.js process holding one
// connection, measured the same way.
// Usage: npm run bench:idle   (needs a Postgres at BENCH_POSTGRES_URL).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import type postgres from 'postgres'
import { benchDatabase } from './database.ts'
import { freePort } from '../test/helpers/ports.ts'
import { engineEnv } from '../server/cluster.ts'
import { writeSection } from './report.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 20)
const ROOT = new URL('..', import.meta.url).pathname
const SECRET = 'bench-secret-key-long-enough-0123456789abcdef'
const TICKS_PER_SECOND = 100

const status = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
function cpuMs(pid: number) {
  const stat = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8') as string
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
}

async function waitForPort(port: number) {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status < 500) return
    } catch {}
    await Bun.sleep(100)
  }
  throw new Error(`nothing answered on ${port}`)
}

const RAW = `
import postgres from 'postgres'
const sql = postgres(process.env.DATABASE_URL, { max: 1 })
await sql\`select 1\`
Bun.serve({ port: Number(process.env.PORT), fetch: async () => Response.json(await sql\`select 1 as ok\`) })
`

async function measure(label: string, command: string[], env: Record<string, string>, port: number, database?: { sql: postgres.Sql; name: string }) {
  const child = Bun.spawn(command, { cwd: ROOT, env: { ...process.env, ...(command.includes('server/index.ts') && engineEnv(process.env)), ...env, PORT: String(port), LOG_LEVEL: 'silent', WEB_CONCURRENCY: '1' }, stdout: 'ignore', stderr: 'inherit' })
  try {
    await waitForPort(port)
    await Bun.sleep(3000)
    const cpuBefore = cpuMs(child.pid)
    const started = new Date()
    await Bun.sleep(seconds * 1000)
    const cpu = cpuMs(child.pid) - cpuBefore
    // A client backend's state_change moves whenever it runs a statement: any that moved did work.
    const active = database
      ? Number((await database.sql`select count(*)::int as n from pg_stat_activity where datname = ${database.name} and backend_type = 'client backend' and pid <> pg_backend_pid() and state_change > ${started}`)[0]!.n)
      : null
    const connections = database
      ? Number((await database.sql`select count(*)::int as n from pg_stat_activity where datname = ${database.name} and backend_type = 'client backend' and pid <> pg_backend_pid()`)[0]!.n)
      : null
    const line = { label, rss: status(child.pid, 'VmRSS'), cpuMsPerMinute: (cpu * 60) / seconds, connections, active }
    console.log(line)
    return line
  } finally {
    child.kill('SIGTERM')
    await child.exited
  }
}

const bench = await benchDatabase('chorus_bench_idle')
const { name, admin: watcher } = bench
const dataDir = await mkdtemp(`${tmpdir()}/chorus-idle-`)
const rawFile = `${ROOT}bench/.raw-idle.ts`
await Bun.write(rawFile, RAW)
try {
  const rows = [
    await measure('raw Bun.serve + postgres.js (PostgreSQL)', ['bun', rawFile], { DATABASE_URL: bench.url }, freePort(), { sql: watcher, name }),
    await measure('Chorus on PostgreSQL', ['bun', 'server/index.ts'], { DATABASE_URL: bench.url, SECRET_KEY: SECRET }, freePort(), { sql: watcher, name }),
    await measure('Chorus on PGlite (embedded)', ['bun', 'server/index.ts'], { DATA_DIR: dataDir, SECRET_KEY: SECRET }, freePort()),
  ]
  await writeSection('Idle: memory and background work', [
    `Each server started alone, then left idle: measured for ${seconds} s after 3 s of settling. CPU is the process's user + system time (every thread) scaled to a minute. On PostgreSQL, "ran SQL" counts the server's connections whose \`pg_stat_activity.state_change\` moved during the window, i.e. that ran any statement. Chorus runs its event dispatcher, webhook delivery loop and mailer, which sleep until a NOTIFY wakes them (backstop 30 s, so a window longer than that would show one round).`,
    '',
    '| server | RSS | CPU per idle minute | connections | connections that ran SQL while idle |',
    '|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.label} | ${row.rss.toFixed(0)} MiB | ${row.cpuMsPerMinute.toFixed(0)} ms | ${row.connections ?? '–'} | ${row.active ?? '–'} |`),
  ])
} finally {
  await rm(rawFile, { force: true })
  await rm(dataDir, { recursive: true, force: true })
  await bench.drop()
}
