import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { events, posts } from '../../server/db/schema/index.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let key: string
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  key = await ws.key()
  // A trigger that makes writing one particular event fail, to prove the change and its event commit together.
  await h.db.execute(sql.raw(`
    create function reject_boom_event() returns trigger language plpgsql as $$
    begin
      if new.data->'post'->>'title' = 'boom' then raise exception 'outbox unavailable'; end if;
      return new;
    end $$`))
  await h.db.execute(sql.raw('create trigger reject_boom before insert on events for each row execute function reject_boom_event()'))
}, 60_000)
afterAll(() => h.close())

describe('outbox atomicity', () => {
  test('when the event cannot be written, the change is rolled back too (500, no post, no event)', async () => {
    const api = h.client({ authorization: `Bearer ${key}` })
    const res = await api.post('/api/v1/boards/ideas/posts', { title: 'boom' })
    expect(res.status).toBe(500)
    expect(res.body.code).toBe('INTERNAL')
    expect(JSON.stringify(res.body)).not.toContain('outbox unavailable')
    expect(await h.db.select().from(posts).where(eq(posts.title, 'boom'))).toHaveLength(0)

    const ok = await api.post('/api/v1/boards/ideas/posts', { title: 'fine' })
    expect(ok.status).toBe(201)
    const written = await h.db.select().from(events).where(eq(events.workspaceId, ws.id))
    expect(written.map((e) => (e.data as any).post.title)).toEqual(['fine'])
  })

  test('a status change that fails to record rolls back the status too', async () => {
    const api = h.client({ authorization: `Bearer ${key}` })
    const post = (await api.post('/api/v1/boards/ideas/posts', { title: 'rename me' })).body
    const res = await api.patch(`/api/v1/posts/${post.id}`, { title: 'boom', status: 'Planned' })
    expect(res.status).toBe(500)
    const [row] = await h.db.select().from(posts).where(eq(posts.id, post.id))
    expect(row?.title).toBe('rename me')
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Open')
  })
})
