// Security round 3, part B (issue 41): end-user identity, logs and idempotency across a crash.
// Each test reproduces one finding of the audit; docs/security.md#end-user-identity states the rules.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { seedDemo } from '../../scripts/seed.ts'
import type { Database } from '../../server/db/client.ts'
import { idempotencyKeys, posts } from '../../server/db/schema/index.ts'
import { BASE, TEST_SECRET } from '../helpers/harness.ts'
import { freshPostgresDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'

describe('idempotency across a crash (real server processes on PostgreSQL)', () => {
  let database: Database
  let databaseUrl: string
  let apiKey: string
  let drop: () => Promise<void>
  const children = new Set<ReturnType<typeof Bun.spawn>>()

  beforeAll(async () => {
    const fresh = await freshPostgresDatabase('chorus_idem', 'The idempotency crash tests')
    ;({ database, url: databaseUrl, drop } = fresh)
    apiKey = (await seedDemo(database.db, BASE)).apiKey!
  }, 60_000)
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL')
    await drop?.()
  })

  const start = (crashAt?: string) => startServerProcess({
    DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE, RATE_LIMIT_PER_KEY: '100000', WEB_CONCURRENCY: '1',
    ...(crashAt ? { CHORUS_TEST_CRASH_AT: crashAt } : {}),
  }, children)
  const send = (server: ServerProcess, key: string, title: string) =>
    fetch(`http://127.0.0.1:${server.port}/api/v1/boards/ideas/posts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ title }),
    })
  const postsTitled = async (title: string) => (await database.db.select({ id: posts.id }).from(posts).where(eq(posts.title, title))).length

  // Each named point of a keyed write: before the handler, inside the effect's transaction (before its
  // commit), after the commit and before the stored answer, after the answer. The process dies there
  // (SIGKILL), a new one starts, the lease runs out, and the client retries with the same key.
  const cases: { point: string; retry: number; replayed?: boolean }[] = [
    { point: 'idempotency:after-claim', retry: 201 },
    { point: 'idempotency:in-transaction', retry: 201 },
    { point: 'idempotency:before-answer', retry: 409 },
    { point: 'idempotency:after-answer', retry: 201, replayed: true },
  ]
  for (const { point, retry, replayed } of cases) {
    test(`killed at ${point}: exactly one post for the key`, async () => {
      const key = `crash-${point}`
      const title = `Crash test ${point}`
      const doomed = await start(point)
      const lost = await send(doomed, key, title).then((response) => response.status, () => 'connection lost')
      expect(lost).toBe('connection lost')
      expect(await doomed.child.exited).not.toBe(0)

      const server = await start()
      // The dead request's lease (60 s) has run out by the time the client retries.
      await database.db.update(idempotencyKeys).set({ createdAt: sql`now() - interval '2 minutes'` }).where(eq(idempotencyKeys.key, key))
      const again = await send(server, key, title)
      expect(again.status).toBe(retry)
      const body = await again.json()
      if (retry === 409) expect(body.code).toBe('CONFLICT')
      else expect(body.title).toBe(title)
      expect(again.headers.get('idempotent-replayed')).toBe(replayed ? 'true' : null)
      // And once more, now that the key is settled either way.
      expect((await send(server, key, title)).status).toBe(retry)
      expect(await postsTitled(title)).toBe(1)
      server.child.kill('SIGTERM')
      await server.child.exited
    }, 90_000)
  }
})
