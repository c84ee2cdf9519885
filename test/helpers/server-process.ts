// `bun server/index.ts` as a child process, for tests of what only a real process shows (crashes,
// restarts, several processes on one database) and for the benchmarks, which load a real server.
import postgres from 'postgres'
import { openDatabase } from '../../server/db/client.ts'

const ROOT = new URL('../..', import.meta.url).pathname

export interface ServerProcess {
  child: ReturnType<typeof Bun.spawn>
  /** The HTTP port it listens on (it is started with PORT=0). */
  port: number
  /** Everything it writes to stderr, once it has exited. */
  stderr: Promise<string>
  /** Everything it has written to stdout so far (its info and debug log lines). */
  stdout(): string
}

/** Starts the server with `env` added to this process's; resolves once its webhook delivery is ready. */
export async function startServerProcess(env: Record<string, string>, children?: Set<ReturnType<typeof Bun.spawn>>): Promise<ServerProcess> {
  const child = Bun.spawn([process.execPath, 'server/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', TEST_POSTGRES_URL: '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  children?.add(child)
  const reader = child.stdout.getReader()
  let output = ''
  const deadline = Date.now() + 30_000
  while (!output.includes('webhook delivery ready')) {
    const chunk = await Promise.race([reader.read(), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => null)])
    if (!chunk || chunk.done) throw new Error(`server did not start: ${output}${await new Response(child.stderr).text()}`)
    output += new TextDecoder().decode(chunk.value)
  }
  const port = JSON.parse(output.split('\n').find((line) => line.includes('chorus listening'))!).port as number
  // Keep draining both pipes so a full one never blocks the child.
  void (async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) output += new TextDecoder().decode(chunk.value)
  })().catch(() => {})
  return { child, port, stderr: new Response(child.stderr).text(), stdout: () => output }
}

export const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/**
 * A fresh, migrated database on the PostgreSQL at ADMIN_URL, for tests that need one even on the
 * PGlite pass (real processes share it); fails loudly, naming `purpose`, when there is no server.
 */
export async function freshPostgresDatabase(prefix: string, purpose: string) {
  const admin = postgres(ADMIN_URL, { max: 2, onnotice: () => {}, connect_timeout: 5 })
  try {
    await admin`select 1`
  } catch (error) {
    throw new Error(`${purpose} need PostgreSQL at ${ADMIN_URL} (set TEST_POSTGRES_URL): ${error}`)
  }
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await admin.unsafe(`create database ${name}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const database = openDatabase(url.toString(), '')
  await database.migrate()
  return {
    admin,
    name,
    url: url.toString(),
    database,
    async drop() {
      await database.close()
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}
