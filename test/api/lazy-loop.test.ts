// The worker's rare loops (mailer, suggester, imports) start with their first job (server/background/lazy-loop.ts):
// a row committed on their tables starts one, so does a row already waiting when the worker starts, and
// nothing else does (a listener's reconnect only re-runs the probe).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { lazyLoop } from '../../server/background/lazy-loop.ts'
import { sql } from '../../server/db/sql-text.ts'
import { newId } from '../../server/lib/ids.ts'
import { workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { eventually } from '../helpers/receiver.ts'

let h: Harness
let ws: WorkspaceFixture

beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
}, 60_000)
afterAll(() => h?.close())

/** A lazy loop over `events` whose probe finds events of `marker`; counts its starts. */
function watch(marker: string) {
  const started: number[] = []
  const loop = lazyLoop({
    listen: h.database.listenForWork, runner: h.database.sql, tables: ['events'],
    pending: sql`select 1 from events where data->>'marker' = ${marker} limit 1`,
    start: async () => (started.push(Date.now()), { stop: async () => {} }),
    onError: (error) => { throw error },
  })
  return { started, loop }
}

const addEvent = (marker: string) =>
  h.database.sql.rows(sql`insert into events (id, workspace_id, type, data) values (${newId('event')}, ${ws.id}, 'post.updated', ${JSON.stringify({ marker })}::jsonb)`)

describe('a rare loop of the background worker', () => {
  test('nothing waiting: it does not start, and holds nothing but a listener; a committed row starts it once', async () => {
    const { started, loop } = watch(`none-${ws.id}`)
    await Bun.sleep(400)
    expect(started).toHaveLength(0)
    await addEvent(`other-${ws.id}`)
    await eventually(() => started.length === 1)
    await addEvent(`other-${ws.id}`)
    await Bun.sleep(200)
    expect(started).toHaveLength(1)
    await loop.stop()
  })

  test('a row already waiting when it starts: it starts at once', async () => {
    const marker = `waiting-${ws.id}`
    await addEvent(marker)
    const { started, loop } = watch(marker)
    await eventually(() => started.length === 1)
    await loop.stop()
  })

  test('stopped before any work: it never starts', async () => {
    const { started, loop } = watch(`stopped-${ws.id}`)
    await loop.stop()
    await addEvent(`after-stop-${ws.id}`)
    await Bun.sleep(300)
    expect(started).toHaveLength(0)
  })
})
