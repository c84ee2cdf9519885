import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { comments, endUsers, events, posts, votes } from '../../server/db/schema/index.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let key: string
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  key = await ws.key()
}, 60_000)
afterAll(() => h.close())

const api = () => h.client({ authorization: `Bearer ${key}` })
const newPost = async (title = 'A post') => (await api().post('/api/v1/boards/ideas/posts', { title })).body as { id: string }
const postRow = async (id: string) => (await h.db.select().from(posts).where(eq(posts.id, id)))[0]!

describe('votes, comments and merge: happy paths', () => {
  test('toggle on, toggle off; the count and the rows agree; events are written', async () => {
    const post = await newPost()
    const on = await api().post(`/api/v1/posts/${post.id}/votes`, { email: 'fan@example.com' })
    expect(on.status).toBe(200)
    expect(on.body).toEqual({ voted: true, votes: 1, verified: true })
    const list = await api().get(`/api/v1/posts/${post.id}/votes`)
    expect(list.body).toMatchObject({ total: 1, page: 1, per_page: 20, total_pages: 1 })
    expect(list.body.items[0]).toMatchObject({ post_id: post.id, voter: { type: 'end_user', email: 'fan@example.com' } })
    const off = await api().post(`/api/v1/posts/${post.id}/votes`, { email: 'fan@example.com' })
    expect(off.body).toEqual({ voted: false, votes: 0, verified: true })
    expect(await h.db.select().from(votes).where(eq(votes.postId, post.id))).toHaveLength(0)
    const kinds = (await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).filter((e) => (e.data as any).vote?.post_id === post.id).map((e) => e.type)
    expect(kinds).toEqual(['vote.created', 'vote.deleted'])
  })

  test('a member votes as themselves with an empty body', async () => {
    const post = await newPost()
    const res = await ws.owner.post(`/api/v1/posts/${post.id}/votes`, {}, { headers: { 'x-workspace': ws.slug } })
    expect(res.body).toEqual({ voted: true, votes: 1, verified: true })
    const [row] = await h.db.select().from(votes).where(eq(votes.postId, post.id))
    expect(row?.userId).toBe(ws.ownerId)
  })

  test('50 concurrent toggles by 50 voters, then 20 concurrent toggles back: the count stays exact', async () => {
    const post = await newPost('Popular')
    const voters = Array.from({ length: 50 }, (_, i) => `crowd${i}@example.com`)
    const first = await Promise.all(voters.map((email) => api().post(`/api/v1/posts/${post.id}/votes`, { email })))
    expect(first.every((res) => res.status === 200 && res.body.voted === true)).toBe(true)
    expect((await postRow(post.id)).voteCount).toBe(50)
    expect(await h.db.select().from(votes).where(eq(votes.postId, post.id))).toHaveLength(50)
    const second = await Promise.all(voters.slice(0, 20).map((email) => api().post(`/api/v1/posts/${post.id}/votes`, { email })))
    expect(second.every((res) => res.body.voted === false)).toBe(true)
    expect((await postRow(post.id)).voteCount).toBe(30)
    expect(await h.db.select().from(votes).where(eq(votes.postId, post.id))).toHaveLength(30)
  })

  test('threaded comments; the public count leaves internal notes out', async () => {
    const post = await newPost()
    const top = await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'First!', email: 'reader@example.com' })
    expect(top.status).toBe(201)
    expect(top.body).toMatchObject({ post_id: post.id, parent_id: null, internal: false, author: { type: 'end_user' } })
    const reply = await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'Thanks', parent_id: top.body.id })
    // A key writes for the team: the workspace's name, never the key's (issue 32).
    expect(reply.body).toMatchObject({ parent_id: top.body.id, author: { type: 'team', id: null, name: expect.stringMatching(/^Workspace /), email: null } })
    const note = await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'Customer is on Scale', internal: true })
    expect(note.status).toBe(201)
    expect((await postRow(post.id)).commentCount).toBe(2)

    const list = await api().get(`/api/v1/posts/${post.id}/comments`)
    expect(list.body.total).toBe(3)
    expect(list.body.items.map((c: any) => c.body)).toEqual(['First!', 'Thanks', 'Customer is on Scale'])
    const created = (await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'comment.created')))).filter((e) => (e.data as any).post_id === post.id)
    expect(created).toHaveLength(3)
  })

  test('edit and delete: author or admin; replies move up; counts follow', async () => {
    const post = await newPost()
    const headers = { 'x-workspace': ws.slug }
    const member = await addMember(h, ws, `commenter-${Date.now()}@example.com`, 'member')
    const mine = (await member.client.post(`/api/v1/posts/${post.id}/comments`, { body: 'mine' }, { headers })).body
    const reply = (await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'reply', parent_id: mine.id })).body
    const ownerComment = (await ws.owner.post(`/api/v1/posts/${post.id}/comments`, { body: 'owner' }, { headers })).body

    expect((await member.client.patch(`/api/v1/comments/${mine.id}`, { body: 'edited' }, { headers })).body.body).toBe('edited')
    const forbidden = await member.client.patch(`/api/v1/comments/${ownerComment.id}`, { body: 'hijack' }, { headers })
    expect(forbidden.status).toBe(403)
    expect((await ws.owner.patch(`/api/v1/comments/${mine.id}`, { body: 'moderated' }, { headers })).status).toBe(200)

    expect((await api().delete(`/api/v1/comments/${mine.id}`)).status).toBe(204)
    const [moved] = await h.db.select().from(comments).where(eq(comments.id, reply.id))
    expect(moved?.parentId).toBeNull()
    expect((await postRow(post.id)).commentCount).toBe(2)
    expect((await api().get(`/api/v1/comments/${mine.id}`)).status).toBe(404)
  })

  test('votes move deduplicated by voter, comments move, the source keeps merged_into and leaves lists', async () => {
    const source = await newPost('Duplicate')
    const target = await newPost('Original')
    for (const email of ['both@example.com', 'source-only@example.com']) await api().post(`/api/v1/posts/${source.id}/votes`, { email })
    await api().post(`/api/v1/posts/${target.id}/votes`, { email: 'both@example.com' })
    await api().post(`/api/v1/posts/${source.id}/comments`, { body: 'on the duplicate' })
    await api().post(`/api/v1/posts/${source.id}/comments`, { body: 'internal', internal: true })

    const res = await api().post(`/api/v1/posts/${source.id}/merge`, { into_post_id: target.id })
    expect(res.status).toBe(200)
    expect(res.body.post).toMatchObject({ id: source.id, merged_into: target.id, votes: 0 })
    expect(res.body.into).toMatchObject({ id: target.id, votes: 2, comment_count: 1 })
    expect(await h.db.select().from(votes).where(eq(votes.postId, target.id))).toHaveLength(2)
    expect(await h.db.select().from(votes).where(eq(votes.postId, source.id))).toHaveLength(0)
    expect(await h.db.select().from(comments).where(eq(comments.postId, target.id))).toHaveLength(2)
    const list = (await api().get('/api/v1/boards/ideas/posts?per_page=100')).body.items.map((p: any) => p.id)
    expect(list).toContain(target.id)
    expect(list).not.toContain(source.id)
    expect((await api().get(`/api/v1/posts/${source.id}`)).body.merged_into).toBe(target.id)
    const merged = await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'post.merged')))
    expect(merged.some((e) => (e.data as any).post.id === source.id)).toBe(true)
  })

  test('concurrent opposite merges: exactly one wins', async () => {
    const a = await newPost('Race A')
    const b = await newPost('Race B')
    const results = await Promise.all([
      api().post(`/api/v1/posts/${a.id}/merge`, { into_post_id: b.id }),
      api().post(`/api/v1/posts/${b.id}/merge`, { into_post_id: a.id }),
    ])
    expect(results.map((r) => r.status).sort()).toEqual([200, 409])
    const merged = [await postRow(a.id), await postRow(b.id)].filter((p) => p.mergedIntoId)
    expect(merged).toHaveLength(1)
  })
})

describe('votes, comments and merge: errors', () => {
  test('votes: a key must name the voter; bad input is 422; an unknown post is 404; nothing is counted', async () => {
    const post = await newPost()
    const anonymous = await api().post(`/api/v1/posts/${post.id}/votes`, {})
    expect(anonymous.status).toBe(422)
    expect(anonymous.body.code).toBe('VALIDATION_ERROR')
    for (const body of [{ email: 'x@example.com', end_user_id: 'eu_1' }, { email: 'not-mail' }, { email: 42 }, { email: 'x@example.com', weight: 2 }]) {
      const res = await api().post(`/api/v1/posts/${post.id}/votes`, body)
      expect({ body, status: res.status }).toEqual({ body, status: 422 })
    }
    // The post is looked up alongside the voter: its 404 still comes first, and the voter it would have created is rolled back.
    expect((await api().post('/api/v1/posts/post_nope/votes', { email: 'ghost-voter@example.com' })).status).toBe(404)
    expect((await api().post('/api/v1/posts/post_nope/votes', { email: 'x@example.com', end_user_id: 'eu_1' })).status).toBe(404)
    expect(await h.db.select().from(endUsers).where(eq(endUsers.email, 'ghost-voter@example.com'))).toHaveLength(0)
    const page = await api().get(`/api/v1/posts/${post.id}/votes?per_page=101`)
    expect(page.status).toBe(422)
    expect(page.body.detail[0].loc).toEqual(['query', 'per_page'])
    expect((await postRow(post.id)).voteCount).toBe(0)
    expect(await h.db.select().from(votes).where(eq(votes.postId, post.id))).toHaveLength(0)
  })

  test('bad input: empty body, unknown fields, a parent from another post', async () => {
    const post = await newPost()
    const other = await newPost()
    const foreignParent = (await api().post(`/api/v1/posts/${other.id}/comments`, { body: 'elsewhere' })).body
    expect((await api().post(`/api/v1/posts/${post.id}/comments`, { body: '' })).status).toBe(422)
    expect((await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'x', pinned: true })).status).toBe(422)
    const res = await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'x', parent_id: foreignParent.id })
    expect(res.status).toBe(422)
    expect(res.body.detail[0].loc).toEqual(['body', 'parent_id'])
    expect(await h.db.select().from(comments).where(eq(comments.postId, post.id))).toHaveLength(0)
  })

  test('edge cases: into itself 422, twice 409, into a merged post 409, across workspaces 404, votes on a merged post 409', async () => {
    const a = await newPost('A')
    const b = await newPost('B')
    const c = await newPost('C')
    const self = await api().post(`/api/v1/posts/${a.id}/merge`, { into_post_id: a.id })
    expect(self.status).toBe(422)
    expect((await api().post(`/api/v1/posts/${a.id}/merge`, { into_post_id: b.id })).status).toBe(200)
    expect((await api().post(`/api/v1/posts/${a.id}/merge`, { into_post_id: c.id })).status).toBe(409)
    expect((await api().post(`/api/v1/posts/${c.id}/merge`, { into_post_id: a.id })).status).toBe(409)
    expect((await api().post(`/api/v1/posts/${a.id}/votes`, { email: 'late@example.com' })).status).toBe(409)
    expect(await h.db.select().from(endUsers).where(eq(endUsers.email, 'late@example.com'))).toHaveLength(0)
    expect((await api().post(`/api/v1/posts/${a.id}/comments`, { body: 'late' })).status).toBe(409)

    const other = await workspaceFixture(h)
    await boardFixture(h, other.id, 'ideas')
    const foreign = (await h.client({ authorization: `Bearer ${await other.key()}` }).post('/api/v1/boards/ideas/posts', { title: 'Foreign' })).body
    expect((await api().post(`/api/v1/posts/${c.id}/merge`, { into_post_id: foreign.id })).status).toBe(404)
    expect((await postRow(c.id)).mergedIntoId).toBeNull()
    expect((await api().post(`/api/v1/posts/${c.id}/merge`, {})).status).toBe(422)
  })
})

describe('votes, comments and merge: security', () => {
  test('votes: without votes:write the key is 403 INSUFFICIENT_SCOPE and nothing is counted', async () => {
    const post = await newPost()
    const readOnly = await ws.key(['votes:read'])
    const denied = await h.client({ authorization: `Bearer ${readOnly}` }).post(`/api/v1/posts/${post.id}/votes`, { email: 'x@example.com' })
    expect(denied.status).toBe(403)
    expect(denied.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'votes:write' })
    expect((await postRow(post.id)).voteCount).toBe(0)
  })

  test("another workspace's key sees none of this workspace's posts, votes or comments", async () => {
    const post = await newPost()
    const comment = (await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'ours' })).body
    const other = await workspaceFixture(h)
    const foreign = h.client({ authorization: `Bearer ${await other.key()}` })
    for (const res of [
      await foreign.get(`/api/v1/posts/${post.id}/votes`),
      await foreign.post(`/api/v1/posts/${post.id}/votes`, { email: 'intruder@example.com' }),
      await foreign.get(`/api/v1/posts/${post.id}/comments`),
      await foreign.post(`/api/v1/posts/${post.id}/comments`, { body: 'intrusion' }),
      await foreign.get(`/api/v1/comments/${comment.id}`),
      await foreign.patch(`/api/v1/comments/${comment.id}`, { body: 'defaced' }),
      await foreign.delete(`/api/v1/comments/${comment.id}`),
    ]) {
      expect(res.status).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
    }
    expect((await postRow(post.id)).voteCount).toBe(0)
    const [row] = await h.db.select().from(comments).where(eq(comments.id, comment.id))
    expect(row?.body).toBe('ours')
  })

  test('a revoked key is 401 INVALID_API_KEY on every vote and comment route', async () => {
    const post = await newPost()
    const doomed = await ws.key(['votes:write', 'comments:write', 'votes:read', 'comments:read'], 'doomed')
    const [{ id: keyId }] = (await ws.owner.get(`/api/v1/workspaces/${ws.slug}/api-keys`)).body.filter((k: { name: string }) => k.name === 'doomed')
    expect((await ws.owner.delete(`/api/v1/workspaces/${ws.slug}/api-keys/${keyId}`)).status).toBe(204)
    const revoked = h.client({ authorization: `Bearer ${doomed}` })
    for (const res of [
      await revoked.post(`/api/v1/posts/${post.id}/votes`, { email: 'late@example.com' }),
      await revoked.get(`/api/v1/posts/${post.id}/votes`),
      await revoked.post(`/api/v1/posts/${post.id}/comments`, { body: 'late' }),
    ]) {
      expect(res.status).toBe(401)
      expect(res.body.code).toBe('INVALID_API_KEY')
    }
    expect(await h.db.select().from(comments).where(eq(comments.postId, post.id))).toHaveLength(0)
  })

  test('internal notes need comments:internal: hidden from other keys, 403 on create', async () => {
    const post = await newPost()
    const note = (await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'secret', internal: true })).body
    await api().post(`/api/v1/posts/${post.id}/comments`, { body: 'public' })
    const plainKey = await ws.key(['comments:read', 'comments:write'])
    const plain = h.client({ authorization: `Bearer ${plainKey}` })
    const list = await plain.get(`/api/v1/posts/${post.id}/comments`)
    expect(list.body.items.map((c: any) => c.body)).toEqual(['public'])
    expect(list.body.total).toBe(1)
    expect((await plain.get(`/api/v1/comments/${note.id}`)).status).toBe(404)
    const denied = await plain.post(`/api/v1/posts/${post.id}/comments`, { body: 'x', internal: true })
    expect(denied.status).toBe(403)
    expect(denied.body.required_scope).toBe('comments:internal')
    // A member sees everything.
    expect((await ws.owner.get(`/api/v1/posts/${post.id}/comments`, { headers: { 'x-workspace': ws.slug } })).body.total).toBe(2)
  })
})
