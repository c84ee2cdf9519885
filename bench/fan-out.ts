// The outbox fan-out, subscriber by subscriber (server/events/subscribers.ts), on a fresh local PostgreSQL
// database: how long each one's statements take in the fan-out transaction, for one `post.created` event
// (what each event of a steady stream costs) and for a batch of BENCH_BATCH (500, a backlog's round). The
// workspace is a new one (its owner's daily digest of new posts, one webhook endpoint); the posts' author
// is a team member (`team`) or an end user (`end_user`: subscribed to the post by its event). Each fan-out
// runs in a transaction rolled back after it, so every run writes the same rows; the median of the runs.
// BENCH_ROOT runs another checkout's code (a start to compare with) against the same kind of database.
// Usage: bun bench/fan-out.ts   (a Postgres at BENCH_POSTGRES_URL; BENCH_KEEP=1 keeps the database). Prints one JSON
// line per case.
import type { EventSubscriber } from '../server/events/subscriber.ts'

const root = process.env.BENCH_ROOT ?? new URL('..', import.meta.url).pathname
const batch = Number(process.env.BENCH_BATCH ?? 500)
const load = <T>(path: string): Promise<T> => import(`${root}/${path}`)

const { openDatabase } = await load<typeof import('../server/db/client.ts')>('server/db/client.ts')
const { openPostgresPool } = await load<typeof import('../server/db/postgres-pool.ts')>('server/db/postgres-pool.ts')
const { sql } = await load<typeof import('../server/db/sql-text.ts')>('server/db/sql-text.ts')
const { boards, endUsers, posts, statuses } = await load<typeof import('../server/db/schema/index.ts')>('server/db/schema/index.ts')
const { recordEvent } = await load<typeof import('../server/events/outbox.ts')>('server/events/outbox.ts')
const { SUBSCRIBERS } = await load<typeof import('../server/events/subscribers.ts')>('server/events/subscribers.ts')
const { newId } = await load<typeof import('../server/lib/ids.ts')>('server/lib/ids.ts')
const { createDns } = await load<typeof import('../server/lib/dns.ts')>('server/lib/dns.ts')
const { createOutbound } = await load<typeof import('../server/lib/outbound.ts')>('server/lib/outbound.ts')
const { createSecrets } = await load<typeof import('../server/lib/secrets.ts')>('server/lib/secrets.ts')
const { findOrCreateUser } = await load<typeof import('../server/modules/auth/service.ts')>('server/modules/auth/service.ts')
const { createWebhook } = await load<typeof import('../server/modules/webhooks/service.ts')>('server/modules/webhooks/service.ts')
const { createWorkspace } = await load<typeof import('../server/modules/workspaces/service.ts')>('server/modules/workspaces/service.ts')
const { benchDatabase } = await load<typeof import('./database.ts')>('bench/database.ts')

const bench = await benchDatabase('chorus_bench_fan_out')
const database = openDatabase(bench.url, '')
await database.migrate()
const db = database.db
const user = await findOrCreateUser(db, 'bench@example.com')
const workspace = await createWorkspace(db, user.id, { name: 'Bench', slug: 'bench' })
await createWebhook({ db, outbound: createOutbound({ dns: createDns(undefined), allowPrivate: true }), secrets: await createSecrets('bench-secret-'.repeat(4)) },
  workspace.id, { url: 'http://127.0.0.1:9/hook', events: ['post.created'] })
const [status] = await db.select().from(statuses).limit(1)
const boardId = newId('board')
await db.insert(boards).values({ id: boardId, workspaceId: workspace.id, slug: 'ideas', name: 'Ideas' })
const endUserId = newId('endUser')
await db.insert(endUsers).values({ id: endUserId, workspaceId: workspace.id, email: 'customer@example.com', verifiedAt: new Date() })
// The events name real posts (the subscriptions' foreign keys), one per event.
const postIds = Array.from({ length: batch }, () => newId('post'))
await db.insert(posts).values(postIds.map((id, i) => ({ id, workspaceId: workspace.id, boardId, statusId: status!.id, title: `Post ${i}` })))
const pool = openPostgresPool(bench.url, { poolSize: 2, applicationName: 'chorus-bench' })
const rolledBack = new Error('rolled back')

async function eventsOf(author: 'team' | 'end_user', count: number) {
  await pool.sql.rows(sql`delete from events`)
  await db.transaction(async (tx) => {
    for (const id of postIds.slice(0, count)) {
      await recordEvent(tx, workspace.id, 'post.created', {
        post: { id, title: 'A post', body: 'What it asks for, in a few words. '.repeat(4), board_id: boardId, author: author === 'team' ? { type: 'team', id: user.id } : { type: 'end_user', id: endUserId } },
      })
    }
  })
  return pool.sql.rows<Parameters<EventSubscriber['fanOut']>[1][number]>(sql`select id, workspace_id as "workspaceId", type, data, created_at::text as "createdAt" from events order by id`)
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!

for (const author of ['team', 'end_user'] as const) {
  for (const count of [1, batch]) {
    const rows = await eventsOf(author, count)
    const runs = count === 1 ? 800 : 40
    const result: Record<string, number> = {}
    for (const subscriber of SUBSCRIBERS) {
      const times: number[] = []
      for (let run = 0; run < runs; run++) {
        await pool.sql.transaction(async (tx) => {
          await tx.rows(sql`select 1`)
          const started = performance.now()
          await subscriber.fanOut(tx, rows, [workspace.id])
          // The first quarter warms the statements' plans up.
          if (run >= runs / 4) times.push(performance.now() - started)
          throw rolledBack
        }).catch((error) => { if (error !== rolledBack) throw error })
      }
      result[subscriber.name] = +median(times).toFixed(3)
    }
    console.log(JSON.stringify({ root, author, events: count, ms: result }))
  }
}

await pool.client.end({ timeout: 1 })
await database.close()
if (process.env.BENCH_KEEP) {
  console.log(`kept ${bench.url}`)
  await bench.admin.end()
} else {
  await bench.drop()
}
