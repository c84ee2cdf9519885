// Several server processes on one PostgreSQL: `WEB_CONCURRENCY` processes behind one port (a supervisor
// restarts one that dies), and what they must agree on (key revocation, rate-limit budgets) is agreed
// at once. These always run against the Postgres at 127.0.0.1:5432 (or TEST_POSTGRES_URL), on both CI
// passes; without one they fail loudly rather than being skipped.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir, totalmem } from 'node:os'
import postgres from 'postgres'
import { createApp } from '../../server/app.ts'
import { ENGINE_DEFAULTS } from '../../server/cluster.ts'
import { getConfig } from '../../server/config.ts'
import type { Database } from '../../server/db/client.ts'
import { rowsOf } from '../../server/db/client.ts'
import { counterKey } from '../../server/lib/rate-limit.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, freshRateWindow, TestClient, TEST_SECRET, type Harness } from '../helpers/harness.ts'
import { freePort } from '../helpers/ports.ts'
import { eventually } from '../helpers/receiver.ts'
import { ADMIN_URL, freshPostgresDatabase, startServerProcess } from '../helpers/server-process.ts'

const ROOT = new URL('../..', import.meta.url).pathname

let databaseUrl: string
let database: Database
let drop: () => Promise<void>
let h: Harness
let ws: WorkspaceFixture
const children = new Set<ReturnType<typeof Bun.spawn>>()

beforeAll(async () => {
  const fresh = await freshPostgresDatabase('chorus_m', 'The multi-process tests')
  ;({ url: databaseUrl, database, drop } = fresh)
  const config = getConfig({ SECRET_KEY: TEST_SECRET, LOG_LEVEL: 'silent', BASE_URL: BASE, RATE_LIMIT_PER_IP: '100000' })
  const { app, ctx } = await createApp({ config, database })
  h = { app, ctx, db: ctx.db, database, databaseUrl, queries: [], client: (defaults?: Record<string, string>) => new TestClient((request) => app.handle(request), defaults), close: async () => ctx.limiter.close() }
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
}, 60_000)

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await h?.close()
  await drop?.()
})

/** A client of a server process on `port`, with `from`'s cookies (the owner's session works on every process). */
function clientOf(port: number, defaults: Record<string, string> = {}, from?: TestClient) {
  const client = new TestClient((request) => {
    const url = new URL(request.url)
    return fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body: request.body })
  }, defaults)
  for (const [name, value] of from?.jar ?? []) client.jar.set(name, value)
  return client
}

/**
 * Kills every LISTEN connection of the test database while it refuses new connections, so no process can
 * listen again, and runs `during` with a connection opened before (a database's connections are switched off
 * from another database); then lets connections in again.
 */
async function whileNoOneListens(during: (admin: postgres.Sql) => Promise<void>) {
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  const server = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  const name = new URL(databaseUrl).pathname.slice(1)
  await admin`select 1`
  try {
    await server.unsafe(`alter database ${name} allow_connections false`)
    const killed = await admin`select pg_terminate_backend(pid) as done from pg_stat_activity where datname = current_database() and query ilike 'listen %' and pid <> pg_backend_pid()`
    expect(killed.length).toBeGreaterThan(0)
    await Bun.sleep(200)
    await during(admin)
  } finally {
    await server.unsafe(`alter database ${name} allow_connections true`)
    await server.end()
    await admin.end()
  }
}

/** The environment a running process started with. */
function environOf(pid: number): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, 'utf8')
  return Object.fromEntries(raw.split('\0').filter(Boolean).map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]))
}

/** `bun server/index.ts` as `npm start` runs it, collecting its JSON log lines. */
function startCluster(env: Record<string, string>) {
  const child = Bun.spawn([process.execPath, 'server/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', TEST_POSTGRES_URL: '', SECRET_KEY: TEST_SECRET, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  children.add(child)
  const lines: any[] = []
  let errors = ''
  // Info lines go to stdout, warnings and errors to stderr: both are collected as log lines.
  const collect = async (stream: ReadableStream<Uint8Array>, raw?: (text: string) => void) => {
    const decoder = new TextDecoder()
    let buffered = ''
    const reader = stream.getReader()
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      const text = decoder.decode(chunk.value)
      raw?.(text)
      buffered += text
      const parts = buffered.split('\n')
      buffered = parts.pop()!
      for (const line of parts) { try { lines.push(JSON.parse(line)) } catch {} }
    }
  }
  void collect(child.stdout)
  const stderr = collect(child.stderr, (text) => { errors += text }).then(() => errors)
  const listening = () => lines.filter((line) => line.msg === 'chorus listening')
  return { child, lines, listening, stderr }
}

describe('happy', () => {
  test('WEB_CONCURRENCY=2: two processes serve one port; one killed is replaced while the other keeps answering; SIGTERM stops all', async () => {
    const port = freePort()
    const cluster = startCluster({ DATABASE_URL: databaseUrl, PORT: String(port), WEB_CONCURRENCY: '2' })
    const first = await eventually(() => cluster.listening().length === 2 && cluster.listening(), 30_000, 'two listening processes')
    expect(first.map((line) => line.process).sort()).toEqual(['0', '1'])
    expect(new Set(first.map((line) => line.pid)).size).toBe(2)
    expect(first.every((line) => line.port === port)).toBe(true)
    expect(cluster.lines.find((line) => line.msg === 'chorus supervising')).toMatchObject({ processes: 2, pid: cluster.child.pid })
    // Each process starts with the engine settings: the JS heap sized for 1 GiB (or the machine's RAM when less), no FTL tier, heap growth 1.75×.
    for (const { pid } of first) {
      expect(environOf(pid)).toMatchObject({ BUN_JSC_forceRAMSize: String(Math.min(1024 ** 3, totalmem())), BUN_JSC_useFTLJIT: '0', BUN_JSC_smallHeapGrowthFactor: '1.75' })
    }

    const api = clientOf(port, { authorization: `Bearer ${await ws.key()}` })
    const answers = await Promise.all(Array.from({ length: 40 }, () => api.get('/api/v1/boards/ideas/posts')))
    expect(answers.every((res) => res.status === 200)).toBe(true)

    const victim = first.find((line) => line.process === '0')!
    process.kill(victim.pid, 'SIGKILL')
    // The survivor answers while the supervisor starts a replacement.
    for (let i = 0; i < 20; i++) expect((await api.get('/api/v1/health')).status).toBe(200)
    const replaced = await eventually(() => cluster.listening().find((line) => line.process === '0' && line.pid !== victim.pid), 30_000, 'the replacement process')
    expect(cluster.lines.find((line) => line.msg === 'server process exited; restarting')).toMatchObject({ level: 'warn', process: 0, signal: 'SIGKILL' })
    expect(replaced.port).toBe(port)

    cluster.child.kill('SIGTERM')
    expect(await cluster.child.exited).toBe(0)
    const pids = [first.find((line) => line.process === '1')!.pid, replaced.pid]
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow()
    expect(cluster.lines.filter((line) => line.level === 'error')).toEqual([])
  }, 90_000)
})

describe('happy: the engine settings', () => {
  test('an operator\'s BUN_JSC_* values reach every server process unchanged; the ones not set keep their defaults', async () => {
    const cluster = startCluster({ DATABASE_URL: databaseUrl, PORT: String(freePort()), WEB_CONCURRENCY: '2', BUN_JSC_forceRAMSize: '536870912', BUN_JSC_useFTLJIT: '1' })
    const listening = await eventually(() => cluster.listening().length === 2 && cluster.listening(), 30_000, 'two listening processes')
    for (const { pid } of listening) {
      expect(environOf(pid)).toMatchObject({ BUN_JSC_forceRAMSize: '536870912', BUN_JSC_useFTLJIT: '1', BUN_JSC_smallHeapGrowthFactor: ENGINE_DEFAULTS.BUN_JSC_smallHeapGrowthFactor })
    }
    cluster.child.kill('SIGTERM')
    expect(await cluster.child.exited).toBe(0)
  }, 60_000)

  test('npm start and the Docker image start a process with the same settings as the supervisor', async () => {
    const start = (await Bun.file(`${import.meta.dir}/../../package.json`).json()).scripts.start as string
    const dockerfile = await Bun.file(`${import.meta.dir}/../../docker/Dockerfile`).text()
    for (const [name, value] of Object.entries(ENGINE_DEFAULTS)) {
      expect(start).toContain(`${name}=\${${name}:-${value}}`)
      expect(dockerfile).toMatch(new RegExp(`^ENV .*\\b${name}=${value.replace('.', '\\.')}(\\s|$)`, 'm'))
    }
  })
})

describe('errors', () => {
  test('a WEB_CONCURRENCY that is not a whole number stops start-up with one line naming it', async () => {
    const cluster = startCluster({ DATABASE_URL: databaseUrl, PORT: String(freePort()), WEB_CONCURRENCY: 'many' })
    expect(await cluster.child.exited).toBe(1)
    expect((await cluster.stderr).trim()).toBe('Invalid configuration: WEB_CONCURRENCY: must be a whole number, got "many"')
  })

  test('a supervisor killed outright takes its server processes with it (none is left serving on its own)', async () => {
    const cluster = startCluster({ DATABASE_URL: databaseUrl, PORT: String(freePort()), WEB_CONCURRENCY: '2' })
    const pids = (await eventually(() => cluster.listening().length === 2 && cluster.listening(), 30_000, 'two listening processes')).map((line) => line.pid as number)
    cluster.child.kill('SIGKILL')
    await eventually(() => pids.every((pid) => { try { return process.kill(pid, 0) && false } catch { return true } }), 20_000, 'the server processes gone')
    expect(cluster.lines.filter((line) => line.msg === 'shutting down').map((line) => line.signal)).toEqual(['supervisor exited', 'supervisor exited'])
  }, 60_000)

  test('a process stopped the moment it says it is listening still shuts down cleanly (exit 0, its shutdown logged)', async () => {
    // The signal handlers are installed before start-up: a stop right after "chorus listening" used to find
    // none now and then, and the process died of the signal (the supervisor then exited 1).
    for (let round = 0; round < 10; round++) {
      const server = startCluster({ DATABASE_URL: databaseUrl, PORT: '0' })
      await eventually(() => server.listening().length === 1, 30_000, 'the server listening')
      server.child.kill('SIGTERM')
      expect(await server.child.exited).toBe(0)
      expect(server.lines.some((line) => line.msg === 'shutting down' && line.signal === 'SIGTERM')).toBe(true)
    }
  }, 90_000)

  test('a supervisor stopped while its processes are still starting exits 0 and leaves none behind', async () => {
    for (const delay of [0, 300, 900]) {
      const cluster = startCluster({ DATABASE_URL: databaseUrl, PORT: String(freePort()), WEB_CONCURRENCY: '2' })
      await eventually(() => cluster.lines.some((line) => line.msg === 'chorus supervising'), 30_000, 'the supervisor')
      await Bun.sleep(delay)
      cluster.child.kill('SIGTERM')
      expect(await cluster.child.exited).toBe(0)
      expect(cluster.lines.filter((line) => line.level === 'error')).toEqual([])
      // The supervisor waits for every process it started; those that got as far as listening are gone too.
      for (const { pid } of cluster.listening()) expect(() => process.kill(pid, 0)).toThrow()
    }
  }, 90_000)

  test('the embedded database runs one process whatever WEB_CONCURRENCY says, and says so', async () => {
    const dataDir = await mkdtemp(`${tmpdir()}/chorus-procs-`)
    try {
      const cluster = startCluster({ DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(freePort()), WEB_CONCURRENCY: '4' })
      await eventually(() => cluster.listening().length === 1, 60_000, 'the server listening')
      await eventually(() => cluster.lines.some((line) => /WEB_CONCURRENCY applies to PostgreSQL/.test(line.msg)), 5000, 'the note')
      expect(cluster.lines.some((line) => line.msg === 'chorus supervising')).toBe(false)
      expect(cluster.listening()[0]).toMatchObject({ database: 'pglite', process: null, pid: cluster.child.pid })
      cluster.child.kill('SIGTERM')
      expect(await cluster.child.exited).toBe(0)
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})

describe('security', () => {
  test('a path under /api is served as /api/v1 over HTTP: the client\'s address counts, the log names the path asked for', async () => {
    const port = freePort()
    const server = startCluster({ DATABASE_URL: databaseUrl, PORT: String(port), WEB_CONCURRENCY: '1' })
    await eventually(() => server.listening().length === 1, 30_000, 'a listening process')
    await freshRateWindow(20)
    const base = `http://127.0.0.1:${port}`
    for (const path of ['/api/health', '/api/v1/health']) {
      const res = await fetch(base + path)
      expect({ path, status: res.status, body: await res.json() }).toMatchObject({ path, status: 200, body: { status: 'ok' } })
    }
    // Anonymous writes count against the client's address before anything else (the flood guard), at either address.
    for (const path of ['/api/v1/auth/magic-link', '/api/auth/magic-link']) {
      const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'not an address' }) })
      expect({ path, status: res.status }).toEqual({ path, status: 422 })
      expect(res.headers.get('x-request-id')).toStartWith('req_')
    }
    const rows = rowsOf<{ count: number }>(await h.db.execute(sql`select count from rate_limit_counters where key = ${counterKey('write:ip:127.0.0.1', 60)}`))
    expect(rows.map((row) => row.count)).toEqual([2])
    // Each access line is written after its response went out, so they may arrive in another order.
    const asked = ['/api/health', '/api/v1/health', '/api/v1/auth/magic-link', '/api/auth/magic-link']
    const logged = await eventually(() => {
      const paths = server.lines.filter((line) => line.msg === 'request').map((line) => line.path as string)
      return asked.every((path) => paths.includes(path)) && paths
    }, 5000, 'the access log lines')
    expect(logged.toSorted()).toEqual(asked.toSorted())
    server.child.kill('SIGTERM')
    expect(await server.child.exited).toBe(0)
  }, 60_000)

  test('a key revoked through one process is refused by the other within the same second', async () => {
    // The owner's session cookie is bound to the service's BASE_URL, which every process shares.
    const [a, b] = await Promise.all([1, 2].map(() => startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE }, children)))
    const key = await ws.key(['posts:read'], 'revoke me')
    const onB = clientOf(b!.port, { authorization: `Bearer ${key}` })
    expect((await onB.get('/api/v1/boards/ideas/posts')).status).toBe(200)
    const ownerOnA = clientOf(a!.port, {}, ws.owner)
    const keys = await ownerOnA.get(`/api/v1/workspaces/${ws.slug}/api-keys`)
    expect(keys.status).toBe(200)
    const id = keys.body.find((item: any) => item.name === 'revoke me').id
    const revokedAt = Date.now()
    expect((await ownerOnA.delete(`/api/v1/workspaces/${ws.slug}/api-keys/${id}`)).status).toBe(204)
    const refused = await onB.get('/api/v1/boards/ideas/posts')
    expect(Date.now() - revokedAt).toBeLessThan(1000)
    expect(refused.status).toBe(401)
    expect(refused.body.code).toBe('INVALID_API_KEY')
  }, 60_000)

  test('a process whose listening connection is killed serves no credential from memory until it listens again: a key revoked meanwhile is refused at once', async () => {
    const b = await startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE }, children)
    const key = await ws.key(['posts:read'], 'listener lost')
    const onB = clientOf(b.port, { authorization: `Bearer ${key}` })
    // Twice: the second answer comes from B's key cache.
    for (let i = 0; i < 2; i++) expect((await onB.get('/api/v1/boards/ideas/posts')).status).toBe(200)
    // B's listener killed while the database refuses new connections, so it cannot come back meanwhile.
    await whileNoOneListens(async (admin) => {
      // Revoked while no notification can reach B: no trigger's NOTIFY is heard, yet B refuses the key.
      await admin`update api_keys set revoked_at = now() where name = 'listener lost'`
      const refused = await onB.get('/api/v1/boards/ideas/posts')
      expect(refused.status).toBe(401)
      expect(refused.body.code).toBe('INVALID_API_KEY')
    })
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    // B listens again (it retries every 2 s), and a revocation announced to it is refused within the second.
    await eventually(async () => (await admin`select 1 from pg_stat_activity where datname = current_database() and query ilike 'listen %'`).length > 0, 10_000, 'B listening again')
    const again = await ws.key(['posts:read'], 'listener back')
    const onBAgain = clientOf(b.port, { authorization: `Bearer ${again}` })
    for (let i = 0; i < 2; i++) expect((await onBAgain.get('/api/v1/boards/ideas/posts')).status).toBe(200)
    const revokedAt = Date.now()
    await admin`update api_keys set revoked_at = now() where name = 'listener back'`
    const refusedAgain = await onBAgain.get('/api/v1/boards/ideas/posts')
    expect(Date.now() - revokedAt).toBeLessThan(1000)
    expect(refusedAgain.status).toBe(401)
    await admin.end()
  }, 60_000)

  test('the keyed post and list read the change count in their own statement: a change not announced yet is caught there (another key changed: 200; this key revoked: 401, also for a missing post)', async () => {
    const b = await startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE }, children)
    const key = await ws.key(['posts:read'], 'unannounced')
    const onB = clientOf(b.port, { authorization: `Bearer ${key}` })
    const writer = h.client({ authorization: `Bearer ${await ws.key(['posts:write'], 'writer')}` })
    const post = (await writer.post('/api/v1/boards/ideas/posts', { title: 'Counted in the statement' })).body
    // The first request claims a lease on the key's budget; the next ones are served from it and B's key cache.
    for (let i = 0; i < 3; i++) expect((await onB.get(`/api/v1/posts/${post.id}`)).status).toBe(200)
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    // Changes with the notifying triggers off: only the count moves, as between a commit and its notification's arrival.
    const unannounced = (change: string) => admin.begin(async (tx) => {
      await tx`set local session_replication_role = replica`
      await tx.unsafe(change)
      await tx`update cache_changes set n = n + 1 where id = 1`
    })
    await unannounced(`update api_keys set name = 'another key renamed' where id = 'none'`)
    const still = await onB.get(`/api/v1/posts/${post.id}`)
    expect(still.status).toBe(200)
    expect(still.body.title).toBe('Counted in the statement')
    expect((await onB.get('/api/v1/boards/ideas/posts')).body.items.some((item: { id: string }) => item.id === post.id)).toBe(true)
    await unannounced(`update api_keys set revoked_at = now() where name = 'unannounced'`)
    for (const path of [`/api/v1/posts/${post.id}`, '/api/v1/posts/post_missing', '/api/v1/boards/ideas/posts', '/api/v1/boards/missing/posts']) {
      const refused = await onB.get(path)
      expect(`${path}: ${refused.status} ${refused.body.code}`).toBe(`${path}: 401 INVALID_API_KEY`)
    }
    await admin.end()
  }, 60_000)

  test('the public cache: a post written through one process is in the other\'s next cached read within 100 ms; with its listening connection killed, a process serves no public page from memory', async () => {
    const [a, b] = await Promise.all([1, 2].map(() => startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE }, children)))
    const key = await ws.key(['posts:write'], 'public cache')
    const onA = clientOf(a!.port, { authorization: `Bearer ${key}` })
    const onB = clientOf(b!.port)
    const list = `/api/v1/public/${ws.slug}/boards/ideas/posts?sort=new`
    const board = `/portal/${ws.slug}/boards/ideas?sort=new`
    const titles = async () => (await onB.get(list)).body.items.map((post: { title: string }) => post.title) as string[]
    /**
     * How long after `since` the first read of B that showed the change was sent. Reads are sent every 5 ms
     * without waiting for each other, so a loaded machine's slow answers do not count as the change's delay: as
     * a client sees it, a read sent that long after the write's answer already shows the write.
     */
    const seenOnB = async (path: string, check: (body: any) => boolean, since: number) => {
      const shown: number[] = []
      const reads: Promise<void>[] = []
      while (!shown.length) {
        if (Date.now() - since > 5000) throw new Error(`B never showed the change at ${path}`)
        const started = Date.now()
        reads.push(onB.get(path).then((res) => void (check(res.body) && shown.push(started - since))))
        await Promise.race([Bun.sleep(5), Promise.all(reads)])
      }
      await Promise.all(reads)
      return Math.min(...shown)
    }
    // Twice each: the second answers come from B's public cache.
    for (let i = 0; i < 2; i++) {
      expect((await onB.get(list)).status).toBe(200)
      expect((await onB.get(board)).status).toBe(200)
    }
    const written = Date.now()
    expect((await onA.post('/api/v1/boards/ideas/posts', { title: 'Written on A' })).status).toBe(201)
    const committed = Date.now()
    expect(await seenOnB(list, (body) => body.items.some((post: any) => post.title === 'Written on A'), committed)).toBeLessThan(100)
    expect(await seenOnB(board, (body) => body.includes('Written on A'), committed)).toBeLessThan(100)
    expect(committed - written).toBeLessThan(5000)

    // B's listening connection killed while the database refuses new ones: B cannot hear a change, so it reads.
    await whileNoOneListens(async (admin) => {
      // Written with no one listening (straight in SQL, as another tool would): no notification reaches B.
      await admin`update posts set title = 'Renamed unheard' where title = 'Written on A'`
      expect(await titles()).toContain('Renamed unheard')
    })
    // Listening again (B retries every 2 s), B keeps answers again and drops them at the next write.
    const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} })
    await eventually(async () => (await admin`select 1 from pg_stat_activity where datname = current_database() and query ilike 'listen %'`).length >= 2, 10_000, 'A and B listening again')
    await admin.end()
    for (let i = 0; i < 2; i++) expect(await titles()).toContain('Renamed unheard')
    expect((await onA.post('/api/v1/boards/ideas/posts', { title: 'Written after' })).status).toBe(201)
    expect(await seenOnB(list, (body) => body.items.some((post: any) => post.title === 'Written after'), Date.now())).toBeLessThan(1000)
  }, 60_000)

  test('a member demoted through one process loses the admin role on the other within a second (its membership was cached there)', async () => {
    const b = await startServerProcess({ DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE }, children)
    const member = await addMember(h, ws, `demoted-${Date.now()}@example.com`, 'admin')
    const onB = clientOf(b.port, {}, member.client)
    for (let i = 0; i < 2; i++) expect((await onB.get(`/api/v1/workspaces/${ws.slug}/webhooks`)).status).toBe(200)
    const demoted = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/members/${member.userId}`, { role: 'member' })
    expect(demoted.status).toBe(200)
    const at = Date.now()
    const refused = await eventually(async () => {
      const res = await onB.get(`/api/v1/workspaces/${ws.slug}/webhooks`)
      return res.status === 403 && res
    }, 1000, 'the demotion on the other process')
    expect(Date.now() - at).toBeLessThan(1000)
    expect(refused.body.code).toBe('FORBIDDEN')
    // A read every member may make still works there.
    expect((await onB.get(`/api/v1/workspaces/${ws.slug}/boards`)).status).toBe(200)
  }, 60_000)

  test('one key\'s rate-limit budget is shared by every process: what one spends, the other cannot', async () => {
    const env = { DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, RATE_LIMIT_PER_KEY: '6' }
    const [a, b] = await Promise.all([1, 2].map(() => startServerProcess(env, children)))
    const key = await ws.key(['posts:read'], 'budget')
    await freshRateWindow(20)
    const remaining: string[] = []
    for (const port of [a!.port, b!.port, a!.port, b!.port, a!.port, b!.port]) {
      const res = await clientOf(port, { authorization: `Bearer ${key}` }).get('/api/v1/boards/ideas/posts')
      expect(res.status).toBe(200)
      remaining.push(res.headers.get('ratelimit-remaining')!)
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0'])
    for (const port of [a!.port, b!.port]) {
      const res = await clientOf(port, { authorization: `Bearer ${key}` }).get('/api/v1/boards/ideas/posts')
      expect(res.status).toBe(429)
      expect(res.body.code).toBe('RATE_LIMITED')
    }
    // The counters live in the database, one row per key and window, not in either process.
    const [{ id }] = rowsOf<{ id: string }>(await h.db.execute(sql`select id from api_keys where name = 'budget'`)) as [{ id: string }]
    const rows = rowsOf<{ count: number }>(await h.db.execute(sql`select count from rate_limit_counters where key = ${counterKey(`key:${id}`, 60)}`))
    expect(rows.map((row) => row.count)).toEqual([8])
  }, 60_000)
})
