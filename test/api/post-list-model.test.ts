// The team's board list is read from a model kept on each post by triggers (migration 0060): its item as
// JSON text. After every kind of change to the post or to a row it shows (vote, comment, edit, status,
// labels, merge, a renamed label, status or board, an author's new name, e-mail or verification, a renamed
// key, a deleted author) the list must still equal what the process renders from the joined rows.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { apiKeys, endUsers, statuses } from '../../server/db/schema/index.ts'
import { listPosts } from '../../server/modules/posts/queries.ts'
import { withoutRevenue } from '../../server/modules/companies/demand.ts'
import { readPage } from '../../server/lib/paging.ts'

let h: Harness
let ws: WorkspaceFixture
let key: string
let noRevenue: string
let board = 'ideas'
const ids: Record<string, string> = {}
const api = () => h.client({ authorization: `Bearer ${key}` })
const asOwner = { headers: () => ({ 'x-workspace': ws.slug }) }

/** The list over HTTP, with and without revenue, equals the process's rendering of the joined rows; returns its items. */
async function expectListAsRendered(step: string) {
  const expected = await listPosts(h.db, { workspace: { id: ws.id }, board }, { sort: 'new' }, readPage({} as never))
  const res = await api().get(`/api/v1/boards/${board}/posts?sort=new`)
  expect({ step, status: res.status, body: res.body }).toEqual({ step, status: 200, body: expected })
  const hidden = await h.client({ authorization: `Bearer ${noRevenue}` }).get(`/api/v1/boards/${board}/posts?sort=new`)
  expect({ step, body: hidden.body }).toEqual({ step, body: { ...expected, items: expected.items.map(withoutRevenue) } })
  return res.body.items as { id: string; [field: string]: any }[]
}
const item = (items: { id: string }[], id: string) => items.find((candidate) => candidate.id === id) as any

beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await labelFixture(h, ws.id, 'api')
  key = await ws.key(undefined, 'list key')
  noRevenue = await ws.key(['posts:read'], 'no revenue')
  for (const [name, body] of [['byKey', { title: 'By the key', labels: ['api'] }], ['byEndUser', { title: 'By an end user', email: 'someone@example.com' }], ['target', { title: 'Merge target' }], ['merged', { title: 'Merged away' }]] as const) {
    const res = await api().post('/api/v1/boards/ideas/posts', body)
    expect(res.status).toBe(201)
    ids[name] = res.body.id
  }
  const res = await ws.owner.post('/api/v1/boards/ideas/posts', { title: 'By the owner' }, { headers: asOwner.headers() })
  expect(res.status).toBe(201)
  ids.byOwner = res.body.id
}, 60_000)
afterAll(() => h.close())

describe('the list read model follows', () => {
  test('votes, comments, edits, a status change, labels and a merge of the post itself', async () => {
    await expectListAsRendered('created')
    expect((await api().post(`/api/v1/posts/${ids.byKey}/votes`, { email: 'voter@example.com' })).status).toBe(200)
    expect((await api().post(`/api/v1/posts/${ids.byKey}/comments`, { body: 'A public comment' })).status).toBe(201)
    let items = await expectListAsRendered('voted and commented')
    expect(item(items, ids.byKey!)).toMatchObject({ votes: 1, comment_count: 1, demand: { voters: 1 } })
    expect((await api().patch(`/api/v1/posts/${ids.byKey}`, { title: 'Edited "title" \u00e9', body: 'Line\nbreak \u{1F600}', status: 'Planned', labels: [] })).status).toBe(200)
    items = await expectListAsRendered('edited')
    expect(item(items, ids.byKey!)).toMatchObject({ title: 'Edited "title" \u00e9', status: 'Planned', labels: [] })
    expect((await api().post(`/api/v1/posts/${ids.merged}/merge`, { into_post_id: ids.target })).status).toBe(200)
    items = await expectListAsRendered('merged')
    expect(item(items, ids.merged!)).toBeUndefined()
  })

  test('a renamed label, status and board', async () => {
    const [label] = (await api().get('/api/v1/labels')).body
    expect((await api().patch(`/api/v1/posts/${ids.byEndUser}`, { labels: ['api'] })).status).toBe(200)
    expect((await api().patch(`/api/v1/labels/${label.id}`, { slug: 'platform' })).status).toBe(200)
    let items = await expectListAsRendered('label renamed')
    expect(item(items, ids.byEndUser!).labels).toEqual(['platform'])
    const [open] = await h.db.select().from(statuses).where(sql`${statuses.workspaceId} = ${ws.id} and lower(${statuses.name}) = 'open'`)
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/statuses/${open!.id}`, { name: 'Being looked at' })).status).toBe(200)
    items = await expectListAsRendered('status renamed')
    expect(item(items, ids.byEndUser!).status).toBe('Being looked at')
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/boards/ideas`, { slug: 'wishes' })).status).toBe(200)
    board = 'wishes'
    items = await expectListAsRendered('board re-slugged')
    expect(items.every((candidate) => candidate.board === 'wishes')).toBe(true)
  })

  test("an author's new name, e-mail and verification, a renamed key, and a deleted author", async () => {
    expect((await ws.owner.patch('/api/v1/user/profile', { name: 'Renamed Owner' })).status).toBe(200)
    await h.db.update(endUsers).set({ name: 'Named Visitor', verifiedAt: new Date() }).where(eq(endUsers.email, 'someone@example.com'))
    await h.db.update(apiKeys).set({ name: 'renamed key' }).where(eq(apiKeys.name, 'list key'))
    let items = await expectListAsRendered('authors changed')
    expect(item(items, ids.byEndUser!)).toMatchObject({ author: { type: 'end_user', name: 'Named Visitor' }, verified: true })
    expect(item(items, ids.target!).author).toMatchObject({ type: 'api_key', name: 'renamed key' })
    expect(item(items, ids.byOwner!).author).toMatchObject({ type: 'member', name: 'Renamed Owner' })
    await h.db.delete(endUsers).where(eq(endUsers.email, 'someone@example.com'))
    items = await expectListAsRendered('author deleted')
    expect(item(items, ids.byEndUser!).author).toEqual({ type: 'deleted', id: null, name: 'Deleted user', email: null })
  })
})
