// Start and stop as an operator sees them (issue 38): `bun server/index.ts` as a real process says what
// it does and where to go, and each failure no restart cures is one line on stderr and exit 78, the
// supervisor included (it gives up instead of restarting for ever).
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { availableCores } from '../../server/cluster.ts'
import { templatePath } from '../../server/db/template.ts'
import { EXIT_CANNOT_START } from '../../server/startup.ts'
import { TEST_SECRET } from '../helpers/harness.ts'
import { freePort } from '../helpers/ports.ts'
import { eventually } from '../helpers/receiver.ts'
import { ADMIN_URL } from '../helpers/server-process.ts'

const ROOT = new URL('../..', import.meta.url).pathname
const children = new Set<ReturnType<typeof Bun.spawn>>()
const directories: string[] = []
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  for (const directory of directories) await rm(directory, { recursive: true, force: true })
})

async function dataDir() {
  const directory = await mkdtemp(`${tmpdir()}/chorus-start-`)
  directories.push(directory)
  return directory
}

/** The server as `npm start` runs it; `lines` are its JSON log lines (stdout), `stderr` all of stderr once it exits. */
function start(env: Record<string, string>) {
  const child = Bun.spawn([process.execPath, 'server/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', TEST_POSTGRES_URL: '', SECRET_KEY: TEST_SECRET, DATABASE_URL: '', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  children.add(child)
  const lines: any[] = []
  void (async () => {
    const decoder = new TextDecoder()
    let buffered = ''
    const reader = child.stdout.getReader()
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffered += decoder.decode(chunk.value)
      const parts = buffered.split('\n')
      buffered = parts.pop()!
      for (const line of parts) { try { lines.push(JSON.parse(line)) } catch {} }
    }
  })()
  return { child, lines, stderr: new Response(child.stderr).text() }
}

const unset = (env: Record<string, string>) => Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''))

describe('happy', () => {
  test('a fresh start from the install template says what it does, then where to go; health reports the release', async () => {
    // The template is made at install time (postinstall); make it here when this checkout has none yet.
    if (!(await Bun.file(templatePath()).exists())) expect(Bun.spawnSync([process.execPath, 'scripts/db-template.ts'], { cwd: ROOT }).exitCode).toBe(0)
    const directory = await dataDir()
    const port = freePort()
    const server = start(unset({ DATA_DIR: directory, PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, DATABASE_URL: '' }))
    const ready = await eventually(() => server.lines.find((line) => line.msg.startsWith('chorus ready')), 120_000, 'the ready line')
    const messages = server.lines.map((line) => line.msg as string)
    expect(messages[0]).toBe(`creating the embedded database in ${directory} from the install's template`)
    // The template holds every migration: nothing is left to apply.
    expect(messages).toContain(`database up to date (${(await Bun.file(`${ROOT}server/db/migrations/meta/_journal.json`).json()).entries.length} migrations)`)
    expect(messages.indexOf('chorus listening')).toBeLessThan(messages.indexOf(ready.msg))
    expect(ready).toMatchObject({ sign_in: `http://127.0.0.1:${port}/signin`, portal: null, docs: `http://127.0.0.1:${port}/docs` })
    expect(ready.msg).toBe(`chorus ready: sign in at http://127.0.0.1:${port}/signin; no workspace yet (create one once signed in, or run \`npm run seed\` for a demo); API reference at http://127.0.0.1:${port}/docs`)
    const health = await (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).json()
    expect(health).toMatchObject({ status: 'ok', version: '1.0.0', server_version: (await Bun.file(`${ROOT}package.json`).json()).version, database: 'ok' })
    // The background worker may still be loading when the server is ready for requests.
    expect(['starting', 'ok']).toContain(health.background)
    expect((await fetch(`http://127.0.0.1:${port}/signin`)).status).toBe(200)
    server.child.kill('SIGTERM')
    expect(await server.child.exited).toBe(0)

    // The second start opens what the first created, and names the first workspace's portal.
    const { openDatabase } = await import('../../server/db/client.ts')
    const { workspaces } = await import('../../server/db/schema/index.ts')
    const database = openDatabase(undefined, directory)
    await database.db.insert(workspaces).values({ id: 'ws_0000000000000000000000001', name: 'Acme', slug: 'acme' } as never)
    await database.close()
    const again = start(unset({ DATA_DIR: directory, PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` }))
    const second = await eventually(() => again.lines.find((line) => line.msg.startsWith('chorus ready')), 120_000, 'the second ready line')
    expect(again.lines[0].msg).toBe(`opening the embedded database in ${directory}`)
    expect(second.portal).toBe(`http://127.0.0.1:${port}/portal/acme`)
    expect(second.msg).toContain(`the acme portal at http://127.0.0.1:${port}/portal/acme`)
    again.child.kill('SIGTERM')
    expect(await again.child.exited).toBe(0)
  }, 240_000)

  test('WEB_CONCURRENCY defaults to the cgroup CPU limit, not the host cores (v2 and v1 files, none, unlimited)', async () => {
    const root = await dataDir()
    const cgroup = async (files: Record<string, string>) => {
      const directory = await mkdtemp(`${root}/cg-`)
      for (const [name, content] of Object.entries(files)) {
        await mkdir(`${directory}/${name.split('/').slice(0, -1).join('/')}`, { recursive: true })
        await writeFile(`${directory}/${name}`, content)
      }
      return directory
    }
    expect(availableCores(32, await cgroup({ 'cpu.max': '100000 100000\n' }))).toBe(1)
    expect(availableCores(32, await cgroup({ 'cpu.max': '150000 100000\n' }))).toBe(2)
    expect(availableCores(2, await cgroup({ 'cpu.max': '800000 100000\n' }))).toBe(2)
    expect(availableCores(32, await cgroup({ 'cpu.max': 'max 100000\n' }))).toBe(32)
    expect(availableCores(32, await cgroup({ 'cpu/cpu.cfs_quota_us': '300000\n', 'cpu/cpu.cfs_period_us': '100000\n' }))).toBe(3)
    expect(availableCores(32, await cgroup({ 'cpu/cpu.cfs_quota_us': '-1\n', 'cpu/cpu.cfs_period_us': '100000\n' }))).toBe(32)
    expect(availableCores(8, `${root}/no-cgroup-here`)).toBe(8)
  })
})

describe('errors: one line, exit 78', () => {
  test('a port in use', async () => {
    const taken = Bun.serve({ port: 0, hostname: '0.0.0.0', fetch: () => new Response('someone else') })
    try {
      const server = start({ DATA_DIR: await dataDir(), PORT: String(taken.port) })
      expect(await server.child.exited).toBe(EXIT_CANNOT_START)
      expect((await server.stderr).trim()).toBe(`Port ${taken.port} is in use by another process: stop it, or set PORT to a free port`)
    } finally {
      taken.stop(true)
    }
  }, 120_000)

  test('an unreachable PostgreSQL: one process, and a supervisor of two, give up after DATABASE_WAIT_SECONDS with one line naming the address', async () => {
    const port = freePort()
    for (const concurrency of ['1', '2']) {
      const began = Date.now()
      const server = start({ DATABASE_URL: `postgres://postgres:secret-password@127.0.0.1:${port}/chorus`, DATABASE_WAIT_SECONDS: '2', PORT: String(freePort()), WEB_CONCURRENCY: concurrency })
      expect(await server.child.exited).toBe(EXIT_CANNOT_START)
      const stderr = (await server.stderr).trim()
      expect(stderr).toBe(`Cannot reach PostgreSQL at 127.0.0.1:${port} (ECONNREFUSED); gave up after 2 s: start it, or fix DATABASE_URL (DATABASE_WAIT_SECONDS sets the wait)`)
      expect(stderr).not.toContain('secret-password')
      // Bounded: the wait plus start-up, not a restart loop.
      expect(Date.now() - began).toBeLessThan(60_000)
      expect(server.lines.filter((line) => /restarting/.test(line.msg))).toEqual([])
      expect(server.lines.some((line) => line.msg === `waiting for PostgreSQL at 127.0.0.1:${port} (up to 2 s)`)).toBe(true)
    }
  }, 150_000)

  test('a PostgreSQL that answers but refuses (no such database) is one line at once, no wait', async () => {
    const url = new URL(ADMIN_URL)
    url.pathname = '/chorus_no_such_database'
    const server = start({ DATABASE_URL: url.toString(), DATABASE_WAIT_SECONDS: '60', PORT: String(freePort()) })
    expect(await server.child.exited).toBe(EXIT_CANNOT_START)
    expect((await server.stderr).trim()).toMatch(new RegExp(`^PostgreSQL at ${url.hostname}:${url.port || 5432} refused the connection: .*chorus_no_such_database.* \\(check DATABASE_URL\\)$`))
  }, 60_000)

  test('a data directory held by another process', async () => {
    const directory = await dataDir()
    const first = start(unset({ DATA_DIR: directory, PORT: '0' }))
    await eventually(() => first.lines.some((line) => line.msg === 'chorus listening'), 120_000, 'the first server')
    const second = start(unset({ DATA_DIR: directory, PORT: '0' }))
    expect(await second.child.exited).toBe(EXIT_CANNOT_START)
    const escaped = directory.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    expect((await second.stderr).trim()).toMatch(new RegExp(`^The embedded database ${escaped} is in use by the chorus server \\(pid ${first.child.pid} on [^,]+, since [^)]+\\); it allows one process at a time: stop that process first \\(or use a PostgreSQL DATABASE_URL\\)\\.$`))
    first.child.kill('SIGTERM')
    expect(await first.child.exited).toBe(0)
  }, 240_000)
})
