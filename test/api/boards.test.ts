import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { boards, posts } from '../../server/db/schema/index.ts'
import { addMember, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { insertPost } from '../helpers/posts.ts'
import { signIn } from '../helpers/session.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const boardsPath = (ws: WorkspaceFixture) => `/api/v1/workspaces/${ws.slug}/boards`

async function createBoard(ws: WorkspaceFixture, body: Record<string, unknown>) {
  const res = await ws.owner.post(boardsPath(ws), body)
  if (res.status !== 201) throw new Error(`board create failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

describe('boards: happy paths', () => {
  test('create returns the board; the row is in the workspace', async () => {
    const ws = await workspaceFixture(h)
    const res = await ws.owner.post(boardsPath(ws), { name: ' Ideas ', slug: 'ideas', description: 'What to build next' })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^brd_[0-9a-z]{25}$/), slug: 'ideas', name: 'Ideas', description: 'What to build next',
      is_private: false, post_count: 0, created_at: expect.stringMatching(/Z$/), updated_at: expect.stringMatching(/Z$/),
    })
    const [row] = await h.db.select().from(boards).where(eq(boards.id, res.body.id))
    expect(row).toMatchObject({ workspaceId: ws.id, slug: 'ideas', name: 'Ideas', isPrivate: false })
    const bare = await ws.owner.post(boardsPath(ws), { name: 'Bugs', slug: 'bugs', is_private: true })
    expect(bare.body).toMatchObject({ description: null, is_private: true })
  })

  test('keys with boards:read list and get every board, private ones included, with post counts that skip merged posts', async () => {
    const ws = await workspaceFixture(h)
    const ideas = await createBoard(ws, { name: 'Ideas', slug: 'ideas' })
    const internal = await createBoard(ws, { name: 'Internal', slug: 'internal', is_private: true })
    await createBoard(ws, { name: 'Empty', slug: 'empty' })
    const kept = await insertPost(h, ws.id, ideas.id)
    await insertPost(h, ws.id, ideas.id)
    await insertPost(h, ws.id, ideas.id, { mergedIntoId: kept.id })
    await insertPost(h, ws.id, internal.id)

    const key = await ws.key(['boards:read'])
    const list = await h.client().get('/api/v1/boards', { headers: bearer(key) })
    expect(list.status).toBe(200)
    expect(list.body.map((b: any) => [b.slug, b.post_count, b.is_private])).toEqual([['ideas', 2, false], ['internal', 1, true], ['empty', 0, false]])
    const one = await h.client().get('/api/v1/boards/internal', { headers: { 'x-api-key': key } })
    expect(one.status).toBe(200)
    expect(one.body).toMatchObject({ id: internal.id, slug: 'internal', post_count: 1, is_private: true })
    expect((await h.client().get('/api/boards/ideas', { headers: bearer(key) })).body.post_count).toBe(2)
  })

  test('a signed-in member reads boards with X-Workspace', async () => {
    const ws = await workspaceFixture(h)
    await createBoard(ws, { name: 'Ideas', slug: 'ideas', is_private: true })
    const member = await addMember(h, ws, `reader-${ws.slug}@example.com`, 'member')
    const list = await member.client.get('/api/v1/boards', { headers: { 'x-workspace': ws.slug } })
    expect(list.status).toBe(200)
    expect(list.body.map((b: any) => b.slug)).toEqual(['ideas'])
    expect((await member.client.get('/api/v1/boards/ideas', { headers: { 'x-workspace': ws.slug } })).status).toBe(200)
  })

  test('GET /workspaces/{slug}/boards lists them where they are created: keys and members, no X-Workspace', async () => {
    const ws = await workspaceFixture(h)
    await createBoard(ws, { name: 'Ideas', slug: 'ideas' })
    await createBoard(ws, { name: 'Internal', slug: 'internal', is_private: true })
    const key = await ws.key(['boards:read'])
    const byKey = await h.client().get(boardsPath(ws), { headers: bearer(key) })
    expect(byKey.status).toBe(200)
    expect(byKey.body).toEqual((await h.client().get('/api/v1/boards', { headers: bearer(key) })).body)
    expect(byKey.body.map((b: any) => [b.slug, b.is_private])).toEqual([['ideas', false], ['internal', true]])
    const member = await addMember(h, ws, `lister-${ws.slug}@example.com`, 'member')
    const bySession = await member.client.get(boardsPath(ws))
    expect(bySession.status).toBe(200)
    expect(bySession.body.map((b: any) => b.slug)).toEqual(['ideas', 'internal'])
    expect((await h.client().get(`/api/workspaces/${ws.slug}/boards`, { headers: bearer(key) })).body).toHaveLength(2)
  })

  test('update renames, re-slugs, clears the description and makes private', async () => {
    const ws = await workspaceFixture(h)
    const board = await createBoard(ws, { name: 'Ideas', slug: 'ideas', description: 'old' })
    await insertPost(h, ws.id, board.id)
    await Bun.sleep(5)
    const res = await ws.owner.patch(`${boardsPath(ws)}/ideas`, { name: 'Feature requests', slug: 'requests', description: null, is_private: true })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: board.id, name: 'Feature requests', slug: 'requests', description: null, is_private: true, post_count: 1 })
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(board.updated_at))
    const [row] = await h.db.select().from(boards).where(eq(boards.id, board.id))
    expect(row).toMatchObject({ name: 'Feature requests', slug: 'requests', description: null, isPrivate: true })
    expect((await ws.owner.get('/api/v1/boards/ideas', { headers: { 'x-workspace': ws.slug } })).status).toBe(404)
  })

  test('delete removes the board and its posts, and nothing else', async () => {
    const ws = await workspaceFixture(h)
    const doomed = await createBoard(ws, { name: 'Doomed', slug: 'doomed' })
    const kept = await createBoard(ws, { name: 'Kept', slug: 'kept' })
    await insertPost(h, ws.id, doomed.id)
    await insertPost(h, ws.id, doomed.id)
    const survivor = await insertPost(h, ws.id, kept.id)
    const res = await ws.owner.delete(`${boardsPath(ws)}/doomed`)
    expect(res.status).toBe(204)
    expect(res.body).toBeNull()
    expect(await h.db.select().from(boards).where(eq(boards.id, doomed.id))).toHaveLength(0)
    expect(await h.db.select().from(posts).where(eq(posts.boardId, doomed.id))).toHaveLength(0)
    expect((await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).map((p) => p.id)).toEqual([survivor.id])
  })
})

describe('boards: errors', () => {
  test('missing fields, wrong types, unknown fields, bad slugs: 422 and nothing written', async () => {
    const ws = await workspaceFixture(h)
    const bodies: [Record<string, unknown>, string][] = [
      [{ slug: 'ideas' }, 'body.name'],
      [{ name: 'Ideas' }, 'body.slug'],
      [{ name: 7, slug: 'ideas' }, 'body.name'],
      [{ name: '   ', slug: 'ideas' }, 'body.name'],
      [{ name: 'Ideas', slug: 'ideas', is_private: 'yes' }, 'body.is_private'],
      [{ name: 'Ideas', slug: 'ideas', description: 'x'.repeat(2001) }, 'body.description'],
      [{ name: 'Ideas', slug: 'ideas', position: 1 }, 'body.position'],
      ...['Ideas', 'has space', '-lead', 'trail-', 'double--dash', 'x', 'a'.repeat(49)].map((slug): [Record<string, unknown>, string] => [{ name: 'Ideas', slug }, 'body.slug']),
    ]
    for (const [body, loc] of bodies) {
      const res = await ws.owner.post(boardsPath(ws), body)
      expect(`${JSON.stringify(body).slice(0, 60)} ${res.status}`).toBe(`${JSON.stringify(body).slice(0, 60)} 422`)
      expect(res.body.code).toBe('VALIDATION_ERROR')
      expect(res.body.detail.map((d: any) => d.loc.join('.'))).toContain(loc)
    }
    await createBoard(ws, { name: 'Ideas', slug: 'ideas' })
    for (const body of [{ slug: 'Bad Slug' }, { is_private: 1 }, { owner: 'me' }]) {
      expect((await ws.owner.patch(`${boardsPath(ws)}/ideas`, body)).status).toBe(422)
    }
    expect(await h.db.select().from(boards).where(eq(boards.workspaceId, ws.id))).toEqual([expect.objectContaining({ slug: 'ideas', name: 'Ideas', isPrivate: false })])
  })

  test('a slug taken in the workspace is 409 SLUG_TAKEN; the same slug in another workspace is fine', async () => {
    const ws = await workspaceFixture(h)
    await createBoard(ws, { name: 'Ideas', slug: 'ideas' })
    await createBoard(ws, { name: 'Bugs', slug: 'bugs' })
    const taken = await ws.owner.post(boardsPath(ws), { name: 'Again', slug: 'ideas' })
    expect(taken.status).toBe(409)
    expect(taken.body.code).toBe('SLUG_TAKEN')
    const renamed = await ws.owner.patch(`${boardsPath(ws)}/bugs`, { slug: 'ideas' })
    expect(renamed.status).toBe(409)
    expect(renamed.body.code).toBe('SLUG_TAKEN')
    expect((await h.db.select().from(boards).where(eq(boards.workspaceId, ws.id))).map((b) => b.slug).sort()).toEqual(['bugs', 'ideas'])
    const other = await workspaceFixture(h)
    expect((await other.owner.post(boardsPath(other), { name: 'Ideas', slug: 'ideas' })).status).toBe(201)
  })

  test('unknown board slugs are 404 on read, update and delete', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['boards:read'])
    const res = await h.client().get('/api/v1/boards/nope', { headers: bearer(key) })
    expect(res.status).toBe(404)
    expect(res.body.code).toBe('NOT_FOUND')
    expect((await ws.owner.patch(`${boardsPath(ws)}/nope`, { name: 'x' })).status).toBe(404)
    expect((await ws.owner.delete(`${boardsPath(ws)}/nope`)).status).toBe(404)
  })
})

describe('boards: security', () => {
  test("another workspace's boards are 404 for its keys and its admins", async () => {
    const a = await workspaceFixture(h)
    const b = await workspaceFixture(h)
    const secret = await createBoard(b, { name: 'Secret', slug: 'secret-b' })
    const keyA = await a.key(['boards:read'])
    expect((await h.client().get('/api/v1/boards/secret-b', { headers: bearer(keyA) })).status).toBe(404)
    expect((await h.client().get('/api/v1/boards', { headers: bearer(keyA) })).body).toEqual([])
    expect((await a.owner.patch(`${boardsPath(a)}/secret-b`, { name: 'Mine' })).status).toBe(404)
    expect((await a.owner.delete(`${boardsPath(a)}/secret-b`)).status).toBe(404)
    expect((await a.owner.delete(`${boardsPath(b)}/secret-b`)).status).toBe(404)
    expect((await a.owner.get('/api/v1/boards/secret-b', { headers: { 'x-workspace': a.slug } })).status).toBe(404)
    const [row] = await h.db.select().from(boards).where(eq(boards.id, secret.id))
    expect(row?.name).toBe('Secret')
  })

  test('GET /workspaces/{slug}/boards: another workspace is 404 for keys and sessions, no credential 401, no scope 403', async () => {
    const mine = await workspaceFixture(h)
    const other = await workspaceFixture(h)
    await createBoard(other, { name: 'Secret', slug: 'secret', is_private: true })
    const key = await mine.key(['boards:read'])
    const byKey = await h.client().get(boardsPath(other), { headers: bearer(key) })
    expect([byKey.status, byKey.body.code]).toEqual([404, 'NOT_FOUND'])
    const bySession = await mine.owner.get(boardsPath(other))
    expect([bySession.status, bySession.body.code]).toEqual([404, 'NOT_FOUND'])
    expect(JSON.stringify(byKey.body) + JSON.stringify(bySession.body)).not.toContain('secret')
    expect((await h.client().get(boardsPath(other))).status).toBe(401)
    const unscoped = await h.client().get(boardsPath(mine), { headers: bearer(await mine.key(['posts:read'])) })
    expect(unscoped.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'boards:read' })
  })

  test('a key without boards:read is 403 INSUFFICIENT_SCOPE', async () => {
    const ws = await workspaceFixture(h)
    await createBoard(ws, { name: 'Ideas', slug: 'ideas' })
    const key = await ws.key(['posts:read', 'labels:read'])
    for (const path of ['/api/v1/boards', '/api/v1/boards/ideas']) {
      const res = await h.client().get(path, { headers: bearer(key) })
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'boards:read' })
    }
  })

  test('board writes are dashboard-only: a key with every scope is 403 DASHBOARD_ONLY', async () => {
    const ws = await workspaceFixture(h)
    await createBoard(ws, { name: 'Ideas', slug: 'ideas' })
    const key = await ws.key()
    const calls: [string, string, unknown?][] = [
      ['POST', boardsPath(ws), { name: 'New', slug: 'new' }],
      ['PATCH', `${boardsPath(ws)}/ideas`, { name: 'Renamed' }],
      ['DELETE', `${boardsPath(ws)}/ideas`],
    ]
    for (const [method, path, body] of calls) {
      const res = await h.client().call(method, path, { headers: bearer(key), body })
      expect(`${method} ${res.status} ${res.body.code}`).toBe(`${method} 403 DASHBOARD_ONLY`)
    }
    expect(await h.db.select().from(boards).where(eq(boards.workspaceId, ws.id))).toEqual([expect.objectContaining({ slug: 'ideas', name: 'Ideas' })])
  })

  test('plain members cannot write boards (403 FORBIDDEN); admins can', async () => {
    const ws = await workspaceFixture(h)
    await createBoard(ws, { name: 'Ideas', slug: 'ideas' })
    const member = await addMember(h, ws, `m-${ws.slug}@example.com`, 'member')
    for (const [method, path, body] of [['POST', boardsPath(ws), { name: 'New', slug: 'new' }], ['PATCH', `${boardsPath(ws)}/ideas`, { name: 'x' }], ['DELETE', `${boardsPath(ws)}/ideas`]] as const) {
      const res = await member.client.call(method, path, { body })
      expect(`${method} ${res.status} ${res.body.code}`).toBe(`${method} 403 FORBIDDEN`)
    }
    const admin = await addMember(h, ws, `a-${ws.slug}@example.com`, 'admin')
    expect((await admin.client.post(boardsPath(ws), { name: 'New', slug: 'new' })).status).toBe(201)
    expect((await h.db.select().from(boards).where(eq(boards.workspaceId, ws.id))).map((b) => b.slug).sort()).toEqual(['ideas', 'new'])
  })

  test('cookie sessions need X-Workspace (422) naming a workspace they belong to (else 404); no credential is 401', async () => {
    const ws = await workspaceFixture(h)
    const missing = await ws.owner.get('/api/v1/boards')
    expect(missing.status).toBe(422)
    expect(missing.body.detail[0].loc).toEqual(['header', 'x-workspace'])
    const foreign = await workspaceFixture(h)
    for (const slug of [foreign.slug, 'no-such-workspace']) {
      const res = await ws.owner.get('/api/v1/boards', { headers: { 'x-workspace': slug } })
      expect(res.status).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
    }
    const stranger = h.client()
    await signIn(h, stranger, `stranger-${ws.slug}@example.com`)
    expect((await stranger.get('/api/v1/boards', { headers: { 'x-workspace': ws.slug } })).status).toBe(404)
    const anonymous = await h.client().get('/api/v1/boards')
    expect(anonymous.status).toBe(401)
    expect(anonymous.body.code).toBe('UNAUTHENTICATED')
  })
})
