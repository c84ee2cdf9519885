import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { labels, postLabels, posts } from '../../server/db/schema/index.ts'
import { addMember, workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { insertPost } from '../helpers/posts.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const storedSlugs = async (workspaceId: string) => (await h.db.select().from(labels).where(eq(labels.workspaceId, workspaceId))).map((l) => l.slug).sort()

describe('labels: happy paths', () => {
  test('create with a key: the slug is derived from the name when absent', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['labels:write'])
    const res = await h.client().post('/api/v1/labels', { name: "  Won't fix — Later! ", color: '#FF0000' }, { headers: bearer(key) })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ id: expect.stringMatching(/^lbl_[0-9a-z]{25}$/), slug: 'wont-fix-later', name: "Won't fix — Later!", color: '#FF0000', created_at: expect.stringMatching(/Z$/) })
    const [row] = await h.db.select().from(labels).where(eq(labels.id, res.body.id))
    expect(row).toMatchObject({ workspaceId: ws.id, slug: 'wont-fix-later', color: '#FF0000' })

    const derived = async (name: string) => (await h.client().post('/api/v1/labels', { name }, { headers: bearer(key) })).body
    expect(await derived('Très Rapide')).toMatchObject({ slug: 'tres-rapide', color: null })
    expect(await derived('__API__ v2')).toMatchObject({ slug: 'api-v2' })
    // 50 characters whose slug is cut at 48, right on a dash, which is trimmed too.
    expect(await derived(`${'Abcdefg '.repeat(6)}xy`)).toMatchObject({ slug: 'abcdefg-'.repeat(6).slice(0, -1) })
    const explicit = await h.client().post('/api/v1/labels', { name: 'Bug', slug: 'defect' }, { headers: bearer(key) })
    expect(explicit.body.slug).toBe('defect')
  })

  test('list by name with labels:read; members create labels with a cookie', async () => {
    const ws = await workspaceFixture(h)
    const member = await addMember(h, ws, `m-${ws.slug}@example.com`, 'member')
    for (const name of ['Zeta', 'Alpha', 'Mid']) {
      expect((await member.client.post('/api/v1/labels', { name }, { headers: { 'x-workspace': ws.slug } })).status).toBe(201)
    }
    const key = await ws.key(['labels:read'])
    const res = await h.client().get('/api/v1/labels', { headers: bearer(key) })
    expect(res.status).toBe(200)
    expect(res.body.map((l: any) => l.name)).toEqual(['Alpha', 'Mid', 'Zeta'])
    expect((await ws.owner.get('/api/v1/labels', { headers: { 'x-workspace': ws.slug } })).body).toEqual(res.body)
  })

  test('update renames (the slug stays), re-slugs and clears the color', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['labels:write'])
    const created = (await h.client().post('/api/v1/labels', { name: 'Bug', color: '#123456' }, { headers: bearer(key) })).body
    const renamed = await h.client().patch(`/api/v1/labels/${created.id}`, { name: 'Defect' }, { headers: bearer(key) })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ id: created.id, name: 'Defect', slug: 'bug', color: '#123456' })
    const reslugged = await h.client().patch(`/api/v1/labels/${created.id}`, { slug: 'defect', color: null }, { headers: bearer(key) })
    expect(reslugged.body).toMatchObject({ name: 'Defect', slug: 'defect', color: null })
    const [row] = await h.db.select().from(labels).where(eq(labels.id, created.id))
    expect(row).toMatchObject({ name: 'Defect', slug: 'defect', color: null })
    expect((await h.client().patch(`/api/v1/labels/${created.id}`, {}, { headers: bearer(key) })).body.slug).toBe('defect')
  })

  test('delete: 204; posts lose the label and stay', async () => {
    const ws = await workspaceFixture(h)
    const board = (await ws.owner.post(`/api/v1/workspaces/${ws.slug}/boards`, { name: 'Ideas', slug: 'ideas' })).body
    const key = await ws.key(['labels:write'])
    const label = (await h.client().post('/api/v1/labels', { name: 'Bug' }, { headers: bearer(key) })).body
    const post = await insertPost(h, ws.id, board.id)
    await h.db.insert(postLabels).values({ postId: post.id, labelId: label.id })
    const res = await h.client().delete(`/api/v1/labels/${label.id}`, { headers: bearer(key) })
    expect(res.status).toBe(204)
    expect(await h.db.select().from(labels).where(eq(labels.id, label.id))).toHaveLength(0)
    expect(await h.db.select().from(postLabels).where(eq(postLabels.postId, post.id))).toHaveLength(0)
    expect(await h.db.select().from(posts).where(eq(posts.id, post.id))).toHaveLength(1)
    expect((await h.client().delete(`/api/v1/labels/${label.id}`, { headers: bearer(key) })).status).toBe(404)
  })
})

describe('labels: errors', () => {
  test('missing fields, wrong types, unknown fields, bad slugs and colors: 422 and nothing written', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['labels:write'])
    const bodies: [Record<string, unknown>, string][] = [
      [{}, 'body.name'],
      [{ name: 5 }, 'body.name'],
      [{ name: ' ' }, 'body.name'],
      [{ name: 'x'.repeat(51) }, 'body.name'],
      [{ name: 'Bug', color: 'red' }, 'body.color'],
      [{ name: 'Bug', color: '#abcd' }, 'body.color'],
      [{ name: 'Bug', color: '#GGGGGG' }, 'body.color'],
      [{ name: 'Bug', kind: 'bug' }, 'body.kind'],
      [{ name: '!', }, 'body.slug'],
      [{ name: 'a' }, 'body.slug'],
      [{ name: '日本語' }, 'body.slug'],
      ...['Bug', 'b', 'has space', '-x', 'y-', 'a--b', 'z'.repeat(49)].map((slug): [Record<string, unknown>, string] => [{ name: 'Bug', slug }, 'body.slug']),
    ]
    for (const [body, loc] of bodies) {
      const res = await h.client().post('/api/v1/labels', body, { headers: bearer(key) })
      expect(`${JSON.stringify(body).slice(0, 60)} ${res.status}`).toBe(`${JSON.stringify(body).slice(0, 60)} 422`)
      expect(res.body.code).toBe('VALIDATION_ERROR')
      expect(res.body.detail.map((d: any) => d.loc.join('.'))).toContain(loc)
    }
    const label = (await h.client().post('/api/v1/labels', { name: 'Bug' }, { headers: bearer(key) })).body
    for (const body of [{ slug: 'Bad' }, { color: 'blue' }, { name: '' }, { id: 'lbl_x' }]) {
      expect((await h.client().patch(`/api/v1/labels/${label.id}`, body, { headers: bearer(key) })).status).toBe(422)
    }
    expect(await h.db.select().from(labels).where(eq(labels.workspaceId, ws.id))).toEqual([expect.objectContaining({ name: 'Bug', slug: 'bug', color: null })])
  })

  test('a slug taken in the workspace is 409 SLUG_TAKEN, derived or explicit; another workspace may use it', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['labels:write'])
    await h.client().post('/api/v1/labels', { name: 'Bug' }, { headers: bearer(key) })
    const other = (await h.client().post('/api/v1/labels', { name: 'Other' }, { headers: bearer(key) })).body
    for (const res of [
      await h.client().post('/api/v1/labels', { name: 'BUG!' }, { headers: bearer(key) }),
      await h.client().post('/api/v1/labels', { name: 'Insect', slug: 'bug' }, { headers: bearer(key) }),
      await h.client().patch(`/api/v1/labels/${other.id}`, { slug: 'bug' }, { headers: bearer(key) }),
    ]) {
      expect(res.status).toBe(409)
      expect(res.body.code).toBe('SLUG_TAKEN')
    }
    expect(await storedSlugs(ws.id)).toEqual(['bug', 'other'])
    const second = await workspaceFixture(h)
    expect((await h.client().post('/api/v1/labels', { name: 'Bug' }, { headers: bearer(await second.key(['labels:write'])) })).status).toBe(201)
  })
})

describe('labels: security', () => {
  test("another workspace's label ids are 404 for keys and members, and stay untouched", async () => {
    const a = await workspaceFixture(h)
    const b = await workspaceFixture(h)
    const foreign = (await h.client().post('/api/v1/labels', { name: 'Theirs' }, { headers: bearer(await b.key(['labels:write'])) })).body
    const keyA = await a.key(['labels:read', 'labels:write'])
    for (const res of [
      await h.client().patch(`/api/v1/labels/${foreign.id}`, { name: 'Mine' }, { headers: bearer(keyA) }),
      await h.client().delete(`/api/v1/labels/${foreign.id}`, { headers: bearer(keyA) }),
      await a.owner.patch(`/api/v1/labels/${foreign.id}`, { name: 'Mine' }, { headers: { 'x-workspace': a.slug } }),
      await a.owner.delete(`/api/v1/labels/${foreign.id}`, { headers: { 'x-workspace': a.slug } }),
      await h.client().patch('/api/v1/labels/lbl_unknown', { name: 'Ghost' }, { headers: bearer(keyA) }),
    ]) {
      expect(res.status).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
    }
    expect((await h.db.select().from(labels).where(eq(labels.id, foreign.id)))[0]?.name).toBe('Theirs')
    expect((await h.client().get('/api/v1/labels', { headers: bearer(keyA) })).body).toEqual([])
  })

  test('keys need labels:read to list and labels:write to write (403 INSUFFICIENT_SCOPE)', async () => {
    const ws = await workspaceFixture(h)
    const reader = await ws.key(['labels:read'])
    const writer = await ws.key(['labels:write'])
    const label = (await h.client().post('/api/v1/labels', { name: 'Bug' }, { headers: bearer(writer) })).body
    const list = await h.client().get('/api/v1/labels', { headers: bearer(writer) })
    expect(list.status).toBe(403)
    expect(list.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'labels:read' })
    for (const res of [
      await h.client().post('/api/v1/labels', { name: 'New' }, { headers: bearer(reader) }),
      await h.client().patch(`/api/v1/labels/${label.id}`, { name: 'Renamed' }, { headers: bearer(reader) }),
      await h.client().delete(`/api/v1/labels/${label.id}`, { headers: bearer(reader) }),
    ]) {
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'labels:write' })
    }
    expect(await storedSlugs(ws.id)).toEqual(['bug'])
  })

  test('cookie sessions without X-Workspace are 422; with a foreign one 404; nothing is written', async () => {
    const ws = await workspaceFixture(h)
    const other = await workspaceFixture(h)
    const missing = await ws.owner.post('/api/v1/labels', { name: 'Bug' })
    expect(missing.status).toBe(422)
    expect(missing.body.detail[0].loc).toEqual(['header', 'x-workspace'])
    expect((await ws.owner.get('/api/v1/labels')).status).toBe(422)
    expect((await ws.owner.post('/api/v1/labels', { name: 'Bug' }, { headers: { 'x-workspace': other.slug } })).status).toBe(404)
    expect((await ws.owner.get('/api/v1/labels', { headers: { 'x-workspace': other.slug } })).status).toBe(404)
    expect(await storedSlugs(ws.id)).toEqual([])
    expect(await storedSlugs(other.id)).toEqual([])
  })
})
