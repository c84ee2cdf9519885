// An import killed for real (issue 39, docs/import.md#how-an-import-runs): a server process on PostgreSQL
// runs an import with CHORUS_TEST_CRASH_AT=import:batch and SIGKILLs itself after a few committed batches;
// a second process resumes the job from its checkpoint. The rows must equal those of an uninterrupted
// import of the same file (counts and a checksum of their content), and the import makes no event,
// webhook delivery, notification or e-mail. Runs on the PGlite pass too: real processes need PostgreSQL.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { seedDemo } from '../../scripts/seed.ts'
import { rowsOf, type Database } from '../../server/db/client.ts'
import { createApiKey } from '../../server/modules/api-keys/service.ts'
import { createWorkspace } from '../../server/modules/workspaces/service.ts'
import { BASE, TEST_SECRET } from '../helpers/harness.ts'
import { freshPostgresDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

const POSTS = 300
const BATCH = 25
const CRASH_AFTER = 5

/** 300 posts with 1–4 voters each (some by the customer's id, so verified, with demand) and an inline comment on every tenth. */
function csv() {
  const lines = ['id,board,title,body,status,author_email,author_id,created_at,vote_count,voters,comments']
  for (let i = 0; i < POSTS; i++) {
    const voters = Array.from({ length: 1 + (i % 4) }, (_, v) => `v${(i + v * 17) % 60}@example.com`).join('|')
    const comments = i % 10 ? '' : `"[{""author_email"":""c${i}@example.com"",""body"":""Comment on ${i}""}]"`
    lines.push(`p${i},${i % 2 ? 'Ideas' : 'Bugs'},Idea ${i},"Body, of ${i}",${i % 3 ? 'Open' : 'Planned'},a${i % 13}@example.com,${i % 5 ? '' : `cust-${i % 7}`},2024-02-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z,${i % 9 ? 0 : 50},${voters},${comments}`)
  }
  return lines.join('\n') + '\n'
}

describe('imports in real processes on PostgreSQL', () => {
  let database: Database
  let databaseUrl: string
  let drop: () => Promise<void>
  let dataDir: string
  const children = new Set<ReturnType<typeof Bun.spawn>>()
  const keys: Record<string, string> = {}
  let seedEvents: string[] = []

  beforeAll(async () => {
    const fresh = await freshPostgresDatabase('chorus_import_crash', 'The import crash test')
    ;({ database, url: databaseUrl, drop } = fresh)
    dataDir = await mkdtemp(join(tmpdir(), 'chorus-import-crash-'))
    const seeded = await seedDemo(database.db, BASE)
    keys.demo = seeded.apiKey!
    // A second workspace of the same owner takes the uninterrupted import.
    const [owner] = rowsOf<{ created_by: string }>(await database.db.execute(sql`select user_id as created_by from members where workspace_id = ${seeded.workspaceId} limit 1`))
    const other = await createWorkspace(database.db, owner!.created_by, { name: 'Whole', slug: 'whole' })
    seedEvents = rowsOf<{ id: string }>(await database.db.execute(sql`select id from events`)).map((event) => event.id)
    keys.whole = (await createApiKey(database.db, other.id, owner!.created_by, { name: 'Import', scopes: ['imports:write'] })).secret
  }, 60_000)
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL')
    await drop?.()
    await rm(dataDir, { recursive: true, force: true })
  })

  const start = (env: Record<string, string> = {}) => startServerProcess({
    DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE, DATA_DIR: dataDir, RATE_LIMIT_PER_KEY: '100000', WEB_CONCURRENCY: '1',
    IMPORT_BATCH_SIZE: String(BATCH), ...env,
  }, children)

  const upload = async (server: ServerProcess, slug: string) => {
    const body = new FormData()
    body.set('format', 'csv')
    body.set('file', new Blob([csv()], { type: 'text/csv' }), 'posts.csv')
    const response = await fetch(`http://127.0.0.1:${server.port}/api/v1/workspaces/${slug}/imports`, { method: 'POST', headers: { authorization: `Bearer ${keys[slug === 'demo' ? 'demo' : 'whole']}` }, body })
    return { status: response.status, body: await response.json() as { id: string; status: string } }
  }
  const status = async (server: ServerProcess, slug: string, id: string) =>
    (await (await fetch(`http://127.0.0.1:${server.port}/api/v1/workspaces/${slug}/imports/${id}`, { headers: { authorization: `Bearer ${keys[slug === 'demo' ? 'demo' : 'whole']}` } })).json()) as Record<string, any>
  const finished = async (server: ServerProcess, slug: string, id: string) => {
    for (let i = 0; i < 600; i++) {
      const body = await status(server, slug, id)
      if (body.status === 'completed' || body.status === 'failed') return body
      await Bun.sleep(100)
    }
    throw new Error(`import ${id} did not finish`)
  }

  /** What the import made in a workspace: counts, and an md5 of every imported post's content, its voters and its comments. */
  const imported = async (slug: string) => {
    const [row] = rowsOf<Record<string, unknown>>(await database.db.execute(sql`with ws as (select id from workspaces where slug = ${slug}),
      mine as (select p.* from posts p join external_refs r on r.local_id = p.id and r.kind = 'post' where p.workspace_id = (select id from ws))
      select (select count(*)::int from mine) as posts,
        (select count(*)::int from votes v where v.post_id in (select id from mine)) as votes,
        (select count(*)::int from comments c where c.post_id in (select id from mine)) as comments,
        (select count(*)::int from external_refs where workspace_id = (select id from ws)) as refs,
        md5(coalesce((select string_agg(concat_ws('|', m.title, m.body, b.slug, s.name, m.vote_count, m.comment_count, m.created_at::text, m.demand_verified_voters, a.email, a.external_id,
          (select string_agg(concat(e.email, ':', e.verified_at is not null), ',' order by e.email) from votes v join end_users e on e.id = v.end_user_id where v.post_id = m.id),
          (select string_agg(concat(c.body, ':', ce.email), ',' order by c.body) from comments c left join end_users ce on ce.id = c.author_end_user_id where c.post_id = m.id)), E'\n' order by m.title)
          from mine m join boards b on b.id = m.board_id join statuses s on s.id = m.status_id left join end_users a on a.id = m.author_end_user_id), '')) as checksum`))
    return row!
  }
  /**
   * Everything an import must not make, across the database. Notifications are those of events other than
   * the seed's (the servers' dispatchers fan the seed's events out to its members meanwhile).
   */
  const sideEffects = async () => rowsOf<Record<string, number>>(await database.db.execute(sql`select
    (select count(*)::int from events) as events, (select count(*)::int from webhook_deliveries) as deliveries,
    (select count(*)::int from notification_events where event_id not in (select id from events where id = any(${sql.param(seedEvents)}::text[]))) as notifications,
    (select count(*)::int from subscriber_updates) as subscriber_updates,
    (select count(*)::int from email_outbox) as emails, (select count(*)::int from changelog_emails) as changelog_emails`))[0]

  test('SIGKILLed after 5 batches, resumed by a second process, it ends with the rows of an uninterrupted import', async () => {
    const before = await sideEffects()
    const doomed = await start({ CHORUS_TEST_CRASH_AT: 'import:batch', CHORUS_TEST_CRASH_AFTER: String(CRASH_AFTER) })
    const created = await upload(doomed, 'demo')
    expect(created.status).toBe(202)
    // The process kills itself from inside the import, with no clean-up.
    expect(await doomed.child.exited).not.toBe(0)
    expect(doomed.child.signalCode).toBe('SIGKILL')
    const cut = await imported('demo')
    expect(cut.posts).toBe(CRASH_AFTER * BATCH)
    const [row] = rowsOf<{ state: string; checkpoint: { pass: string; records: number } }>(await database.db.execute(sql`select state, checkpoint from imports where id = ${created.body.id}`))
    expect(row).toEqual({ state: 'pending', checkpoint: { pass: 'post', records: CRASH_AFTER * BATCH } })

    // A second process claims the job at once (the dead one's lock went with its connection) and finishes it.
    const server = await start()
    try {
      const resumed = await finished(server, 'demo', created.body.id)
      expect(resumed.status).toBe('completed')
      expect(resumed.attempts).toBe(2)
      expect(resumed.counts.posts).toEqual({ created: POSTS, merged: 0, skipped: 0 })
      expect(server.stdout()).toContain('import started')

      const whole = await upload(server, 'whole')
      expect(whole.status).toBe(202)
      const done = await finished(server, 'whole', whole.body.id)
      expect(done.status).toBe('completed')
      expect(done.attempts).toBe(1)
      // (Boards differ: the demo workspace already has Ideas and Bugs, which the import merges into.)
      for (const entity of ['posts', 'votes', 'comments', 'users']) expect(resumed.counts[entity]).toEqual(done.counts[entity])

      const [a, b] = [await imported('demo'), await imported('whole')]
      expect(a.posts).toBe(POSTS)
      expect(a.votes).toBe(Array.from({ length: POSTS }, (_, i) => 1 + (i % 4)).reduce((sum, n) => sum + n, 0))
      expect(a.comments).toBe(POSTS / 10)
      expect(a).toEqual(b)
      expect(await sideEffects()).toEqual(before)
    } finally {
      server.child.kill('SIGTERM')
      await server.child.exited
    }
  }, 120_000)

  test('npm run import takes Fider\'s backup.zip, and names what is wrong with a zip that is not one', async () => {
    const run = async (file: string) => {
      const child = Bun.spawn([process.execPath, 'scripts/import.ts', '--workspace', 'whole', '--from', 'fider', file], {
        cwd: new URL('../..', import.meta.url).pathname, env: { ...process.env, DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE, DATA_DIR: dataDir, TEST_POSTGRES_URL: '' }, stdout: 'pipe', stderr: 'pipe',
      })
      return { code: await child.exited, stdout: await new Response(child.stdout).text(), stderr: await new Response(child.stderr).text() }
    }
    const done = await run('test/fixtures/imports/fider-backup.zip')
    expect(done.code).toBe(0)
    const body = JSON.parse(done.stdout)
    expect(body.status).toBe('completed')
    expect(body.counts.posts.created).toBe(2)
    expect(body.counts.votes.created).toBe(3)
    const notBackup = join(dataDir, 'not-a-backup.zip')
    const { zipSync, strToU8 } = await import('fflate')
    await Bun.write(notBackup, zipSync({ 'readme.txt': strToU8('hello') }))
    const refused = await run(notBackup)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('not a Fider backup: it has no tenants.json, users.json, posts.json, post_votes.json')
  }, 60_000)
})
