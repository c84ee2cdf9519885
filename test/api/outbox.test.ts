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

describe('happy', () => {
  test('a post and its status change commit together with their events, in the workspace that made them', async () => {
    const mine = await workspaceFixture(h)
    await boardFixture(h, mine.id, 'ideas')
    const api = h.client({ authorization: `Bearer ${await mine.key()}` })
    const created = await api.post('/api/v1/boards/ideas/posts', { title: 'Dark mode' })
    expect(created.status).toBe(201)
    const postId: string = created.body.id
    expect(postId).toMatch(/^post_[0-9a-z]{25}$/)
    expect(created.body).toMatchObject({ title: 'Dark mode', status: 'Open' })
    const afterCreate = await h.db.select().from(events).where(eq(events.workspaceId, mine.id))
    expect(afterCreate.map((e) => e.type)).toEqual(['post.created'])
    expect((afterCreate[0]!.data as any).post).toMatchObject({ id: postId, title: 'Dark mode' })

    const changed = await api.patch(`/api/v1/posts/${postId}`, { status: 'Planned' })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ id: postId, status: 'Planned' })
    const [row] = await h.db.select().from(posts).where(eq(posts.id, postId))
    expect(row?.workspaceId).toBe(mine.id)
    const afterChange = await h.db.select().from(events).where(eq(events.workspaceId, mine.id))
    expect(afterChange.map((e) => e.type).sort()).toEqual(['post.created', 'post.updated', 'status.changed'])
    expect((afterChange.find((e) => e.type === 'status.changed')!.data as any)).toMatchObject({ from_status: 'Open', to_status: 'Planned' })
  })
})

describe('errors', () => {
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

describe('security', () => {
  test("another workspace's key cannot change a post: 404 in the error shape, the post and the outbox untouched", async () => {
    const owner = h.client({ authorization: `Bearer ${key}` })
    const post = (await owner.post('/api/v1/boards/ideas/posts', { title: 'guarded' })).body
    const eventsBefore = (await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).length
    const intruder = await workspaceFixture(h)
    const foreign = h.client({ authorization: `Bearer ${await intruder.key()}` })
    const res = await foreign.patch(`/api/v1/posts/${post.id}`, { title: 'taken', status: 'Planned' })
    expect(res.status).toBe(404)
    expect(res.body.code).toBe('NOT_FOUND')
    expect(typeof res.body.message).toBe('string')
    const [row] = await h.db.select().from(posts).where(eq(posts.id, post.id))
    expect(row).toMatchObject({ title: 'guarded', workspaceId: ws.id })
    expect((await owner.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Open')
    expect(await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).toHaveLength(eventsBefore)
    expect(await h.db.select().from(events).where(eq(events.workspaceId, intruder.id))).toHaveLength(0)
  })
})
