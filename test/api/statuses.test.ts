import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, asc, eq } from 'drizzle-orm'
import { events, posts, statusChanges, statuses } from '../../server/db/schema/index.ts'
import { addMember, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { insertPost } from '../helpers/posts.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const statusesPath = (ws: WorkspaceFixture) => `/api/v1/workspaces/${ws.slug}/statuses`
const DEFAULT_NAMES = ['Open', 'Under review', 'Planned', 'In progress', 'Complete', 'Closed']

/** The workspace's statuses as stored, in order: "name@position" with a trailing * on the default. */
async function stored(workspaceId: string) {
  const rows = await h.db.select().from(statuses).where(eq(statuses.workspaceId, workspaceId)).orderBy(asc(statuses.position))
  return rows.map((s) => `${s.name}@${s.position}${s.isDefault ? '*' : ''}`)
}

const statusId = async (workspaceId: string, name: string) =>
  (await h.db.select().from(statuses).where(and(eq(statuses.workspaceId, workspaceId), eq(statuses.name, name))))[0]!.id

async function boardOf(ws: WorkspaceFixture) {
  const res = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/boards`, { name: 'Ideas', slug: 'ideas' })
  return res.body.id as string
}

describe('statuses: happy paths', () => {
  test('a new workspace lists its default workflow in order, "Open" the default, with post counts', async () => {
    const ws = await workspaceFixture(h)
    const board = await boardOf(ws)
    const planned = await statusId(ws.id, 'Planned')
    const kept = await insertPost(h, ws.id, board, { statusId: planned })
    await insertPost(h, ws.id, board, { statusId: planned, mergedIntoId: kept.id })
    await insertPost(h, ws.id, board)

    const key = await ws.key(['statuses:read'])
    const res = await h.client().get('/api/v1/statuses', { headers: bearer(key) })
    expect(res.status).toBe(200)
    expect(res.body.map((s: any) => s.name)).toEqual(DEFAULT_NAMES)
    expect(res.body.map((s: any) => s.position)).toEqual([0, 1, 2, 3, 4, 5])
    expect(res.body.filter((s: any) => s.is_default).map((s: any) => s.name)).toEqual(['Open'])
    expect(res.body[0]).toEqual({
      id: expect.stringMatching(/^sts_[0-9a-z]{25}$/), name: 'Open', kind: 'open', color: '#6b7280',
      position: 0, is_default: true, post_count: 1, created_at: expect.stringMatching(/Z$/),
    })
    expect(res.body.map((s: any) => s.post_count)).toEqual([1, 0, 1, 0, 0, 0])
    expect(res.body.map((s: any) => s.kind)).toEqual(['open', 'open', 'planned', 'in_progress', 'complete', 'closed'])
    const cookie = await ws.owner.get('/api/v1/statuses', { headers: { 'x-workspace': ws.slug } })
    expect(cookie.body).toEqual(res.body)
  })

  test('create appends by default, inserts at a position, and can take over the default', async () => {
    const ws = await workspaceFixture(h)
    const appended = await ws.owner.post(statusesPath(ws), { name: 'Won\'t do', kind: 'closed' })
    expect(appended.status).toBe(201)
    expect(appended.body).toMatchObject({ name: "Won't do", kind: 'closed', color: '#6b7280', position: 6, is_default: false, post_count: 0 })
    const inserted = await ws.owner.post(statusesPath(ws), { name: 'Triage', kind: 'open', color: '#ABCDEF', position: 1, is_default: true })
    expect(inserted.status).toBe(201)
    expect(inserted.body).toMatchObject({ name: 'Triage', color: '#ABCDEF', position: 1, is_default: true })
    expect(await stored(ws.id)).toEqual(['Open@0', 'Triage@1*', 'Under review@2', 'Planned@3', 'In progress@4', 'Complete@5', 'Closed@6', "Won't do@7"])
    const far = await ws.owner.post(statusesPath(ws), { name: 'Archive', kind: 'closed', position: 500 })
    expect(far.body.position).toBe(8)
  })

  test('update renames, recolors, reorders (others renumbered) and switches the default', async () => {
    const ws = await workspaceFixture(h)
    const open = await statusId(ws.id, 'Open')
    const planned = await statusId(ws.id, 'Planned')
    const moved = await ws.owner.patch(`${statusesPath(ws)}/${open}`, { name: 'New', color: '#112233', position: 3 })
    expect(moved.status).toBe(200)
    expect(moved.body).toMatchObject({ id: open, name: 'New', color: '#112233', position: 3, is_default: true, kind: 'open' })
    expect(await stored(ws.id)).toEqual(['Under review@0', 'Planned@1', 'In progress@2', 'New@3*', 'Complete@4', 'Closed@5'])
    const up = await ws.owner.patch(`${statusesPath(ws)}/${open}`, { position: 0 })
    expect(up.body.position).toBe(0)
    expect(await stored(ws.id)).toEqual(['New@0*', 'Under review@1', 'Planned@2', 'In progress@3', 'Complete@4', 'Closed@5'])

    const switched = await ws.owner.patch(`${statusesPath(ws)}/${planned}`, { is_default: true, kind: 'in_progress' })
    expect(switched.status).toBe(200)
    expect(switched.body).toMatchObject({ is_default: true, kind: 'in_progress' })
    expect((await stored(ws.id)).filter((s) => s.endsWith('*'))).toEqual(['Planned@2*'])
    expect((await ws.owner.patch(`${statusesPath(ws)}/${planned}`, {})).body.name).toBe('Planned')
  })

  test('concurrent reorders and default switches leave positions 0..n-1 and exactly one default', async () => {
    const ws = await workspaceFixture(h)
    for (const name of ['Extra 1', 'Extra 2', 'Extra 3', 'Extra 4']) await ws.owner.post(statusesPath(ws), { name, kind: 'open' })
    const ids = (await h.db.select().from(statuses).where(eq(statuses.workspaceId, ws.id))).map((s) => s.id)
    // Several rounds, because a lock-order deadlock between waiting writers needs unlucky timing to show.
    for (let round = 0; round < 4; round++) {
      const results = await Promise.all(ids.flatMap((id, i) => [
        ws.owner.patch(`${statusesPath(ws)}/${id}`, { position: (i * 3 + round) % ids.length, ...(i % 3 === 1 && { is_default: true }) }),
        ws.owner.patch(`${statusesPath(ws)}/${id}`, { position: (ids.length - 1 - i + round) % ids.length }),
      ]))
      expect(results.map((res) => `${res.status} ${res.body.code ?? ''}`.trim())).toEqual(results.map(() => '200'))
    }
    const rows = await stored(ws.id)
    expect(rows.map((row) => Number(row.split('@')[1]!.replace('*', '')))).toEqual(ids.map((_, i) => i))
    expect(rows.filter((row) => row.endsWith('*'))).toHaveLength(1)
  })

  test('delete an unused status: 204 and the rest renumbered', async () => {
    const ws = await workspaceFixture(h)
    const res = await ws.owner.delete(`${statusesPath(ws)}/${await statusId(ws.id, 'Under review')}`)
    expect(res.status).toBe(204)
    expect(await stored(ws.id)).toEqual(['Open@0*', 'Planned@1', 'In progress@2', 'Complete@3', 'Closed@4'])
  })

  test('delete with move_to moves every post, merged ones included, in the same transaction', async () => {
    const ws = await workspaceFixture(h)
    const board = await boardOf(ws)
    const planned = await statusId(ws.id, 'Planned')
    const progress = await statusId(ws.id, 'In progress')
    const a = await insertPost(h, ws.id, board, { statusId: planned })
    const b = await insertPost(h, ws.id, board, { statusId: planned, mergedIntoId: a.id })
    const other = await insertPost(h, ws.id, board)
    const res = await ws.owner.delete(`${statusesPath(ws)}/${planned}?move_to=${progress}`)
    expect(res.status).toBe(204)
    expect(await h.db.select().from(statuses).where(eq(statuses.id, planned))).toHaveLength(0)
    const after = await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))
    expect(Object.fromEntries(after.map((p) => [p.id, p.statusId]))).toEqual({ [a.id]: progress, [b.id]: progress, [other.id]: other.statusId })
    const list = await ws.owner.get('/api/v1/statuses', { headers: { 'x-workspace': ws.slug } })
    expect(list.body.find((s: any) => s.id === progress).post_count).toBe(1)
    // Moved posts keep their history and raise status.changed like any other status change.
    const history = await h.db.select().from(statusChanges).where(eq(statusChanges.toStatusId, progress))
    expect(history.map((row) => row.postId).sort()).toEqual([a.id, b.id].sort())
    expect(history.every((row) => row.fromStatusId === planned && row.changedByUserId === ws.ownerId)).toBe(true)
    const changed = await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'status.changed')))
    expect(changed.map((e) => (e.data as any).post.id).sort()).toEqual([a.id, b.id].sort())
    expect(changed.every((e) => (e.data as any).from_status === 'Planned' && (e.data as any).to_status === 'In progress')).toBe(true)
  })
})

describe('statuses: errors', () => {
  test('missing fields, wrong types, unknown kinds and fields, bad colors and positions: 422 and nothing written', async () => {
    const ws = await workspaceFixture(h)
    const bodies: [Record<string, unknown>, string][] = [
      [{ kind: 'open' }, 'body.name'],
      [{ name: 'X' }, 'body.kind'],
      [{ name: 'X', kind: 'done' }, 'body.kind'],
      [{ name: '', kind: 'open' }, 'body.name'],
      [{ name: 'X', kind: 'open', color: 'red' }, 'body.color'],
      [{ name: 'X', kind: 'open', color: '#12345' }, 'body.color'],
      [{ name: 'X', kind: 'open', color: '#1234567' }, 'body.color'],
      [{ name: 'X', kind: 'open', position: -1 }, 'body.position'],
      [{ name: 'X', kind: 'open', position: 1.5 }, 'body.position'],
      [{ name: 'X', kind: 'open', position: '2' }, 'body.position'],
      [{ name: 'X', kind: 'open', is_default: 'true' }, 'body.is_default'],
      [{ name: 'X', kind: 'open', slug: 'x' }, 'body.slug'],
    ]
    for (const [body, loc] of bodies) {
      const res = await ws.owner.post(statusesPath(ws), body)
      expect(`${JSON.stringify(body)} ${res.status}`).toBe(`${JSON.stringify(body)} 422`)
      expect(res.body.detail.map((d: any) => d.loc.join('.'))).toContain(loc)
    }
    const open = await statusId(ws.id, 'Open')
    for (const body of [{ color: null }, { kind: 'later' }, { name: 42 }, { position: -3 }, { extra: true }]) {
      expect((await ws.owner.patch(`${statusesPath(ws)}/${open}`, body)).status).toBe(422)
    }
    expect(await stored(ws.id)).toEqual(DEFAULT_NAMES.map((name, i) => `${name}@${i}${i === 0 ? '*' : ''}`))
  })

  test('duplicate names are 409 CONFLICT on create and rename', async () => {
    const ws = await workspaceFixture(h)
    const dup = await ws.owner.post(statusesPath(ws), { name: ' Planned ', kind: 'planned' })
    expect(dup.status).toBe(409)
    expect(dup.body.code).toBe('CONFLICT')
    const rename = await ws.owner.patch(`${statusesPath(ws)}/${await statusId(ws.id, 'Closed')}`, { name: 'Complete', position: 0 })
    expect(rename.status).toBe(409)
    expect(rename.body.code).toBe('CONFLICT')
    expect(await stored(ws.id)).toEqual(DEFAULT_NAMES.map((name, i) => `${name}@${i}${i === 0 ? '*' : ''}`))
  })

  test('the default cannot be deleted or unset (409 CONFLICT)', async () => {
    const ws = await workspaceFixture(h)
    const open = await statusId(ws.id, 'Open')
    const del = await ws.owner.delete(`${statusesPath(ws)}/${open}?move_to=${await statusId(ws.id, 'Planned')}`)
    expect(del.status).toBe(409)
    expect(del.body.code).toBe('CONFLICT')
    const unset = await ws.owner.patch(`${statusesPath(ws)}/${open}`, { is_default: false })
    expect(unset.status).toBe(409)
    expect((await stored(ws.id))[0]).toBe('Open@0*')
  })

  test('a status with posts needs move_to naming another status of the workspace', async () => {
    const ws = await workspaceFixture(h)
    const other = await workspaceFixture(h)
    const board = await boardOf(ws)
    const planned = await statusId(ws.id, 'Planned')
    const post = await insertPost(h, ws.id, board, { statusId: planned })
    const path = `${statusesPath(ws)}/${planned}`

    const plain = await ws.owner.delete(path)
    expect(plain.status).toBe(409)
    expect(plain.body.code).toBe('CONFLICT')
    expect(plain.body.message).toContain('move_to')
    const self = await ws.owner.delete(`${path}?move_to=${planned}`)
    expect(self.status).toBe(422)
    expect(self.body.detail[0].loc).toEqual(['query', 'move_to'])
    for (const target of [await statusId(other.id, 'Complete'), 'sts_doesnotexist']) {
      const res = await ws.owner.delete(`${path}?move_to=${target}`)
      expect(res.status).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
    }
    expect(await h.db.select().from(statuses).where(eq(statuses.id, planned))).toHaveLength(1)
    expect((await h.db.select().from(posts).where(eq(posts.id, post.id)))[0]!.statusId).toBe(planned)
  })
})

describe('statuses: security', () => {
  test("another workspace's status ids are 404 and stay untouched", async () => {
    const a = await workspaceFixture(h)
    const b = await workspaceFixture(h)
    const foreign = await statusId(b.id, 'Planned')
    for (const res of [
      await a.owner.patch(`${statusesPath(a)}/${foreign}`, { name: 'Stolen' }),
      await a.owner.delete(`${statusesPath(a)}/${foreign}`),
      await a.owner.patch(`${statusesPath(a)}/sts_unknown`, { name: 'Ghost' }),
      await a.owner.patch(`${statusesPath(b)}/${foreign}`, { name: 'Stolen' }),
    ]) {
      expect(res.status).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
    }
    expect((await h.db.select().from(statuses).where(eq(statuses.id, foreign)))[0]?.name).toBe('Planned')
    const keyA = await a.key(['statuses:read'])
    const listed = await h.client().get('/api/v1/statuses', { headers: bearer(keyA) })
    expect(listed.body.map((s: any) => s.id)).not.toContain(foreign)
  })

  test('a key without statuses:read is 403 INSUFFICIENT_SCOPE', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['boards:read', 'posts:read'])
    const res = await h.client().get('/api/v1/statuses', { headers: { 'x-api-key': key } })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'statuses:read' })
  })

  test('status writes are dashboard-only: a key with every scope is 403 DASHBOARD_ONLY', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key()
    const planned = await statusId(ws.id, 'Planned')
    for (const [method, path, body] of [
      ['POST', statusesPath(ws), { name: 'New', kind: 'open' }],
      ['PATCH', `${statusesPath(ws)}/${planned}`, { name: 'Renamed' }],
      ['DELETE', `${statusesPath(ws)}/${planned}`, undefined],
    ] as const) {
      const res = await h.client().call(method, path, { headers: bearer(key), body })
      expect(`${method} ${res.status} ${res.body.code}`).toBe(`${method} 403 DASHBOARD_ONLY`)
    }
    expect(await stored(ws.id)).toHaveLength(6)
  })

  test('plain members cannot write statuses (403 FORBIDDEN) but can read them; admins can write', async () => {
    const ws = await workspaceFixture(h)
    const planned = await statusId(ws.id, 'Planned')
    const member = await addMember(h, ws, `m-${ws.slug}@example.com`, 'member')
    for (const [method, path, body] of [
      ['POST', statusesPath(ws), { name: 'New', kind: 'open' }],
      ['PATCH', `${statusesPath(ws)}/${planned}`, { is_default: true }],
      ['DELETE', `${statusesPath(ws)}/${planned}`, undefined],
    ] as const) {
      const res = await member.client.call(method, path, { body })
      expect(`${method} ${res.status} ${res.body.code}`).toBe(`${method} 403 FORBIDDEN`)
    }
    expect((await member.client.get('/api/v1/statuses', { headers: { 'x-workspace': ws.slug } })).status).toBe(200)
    const admin = await addMember(h, ws, `a-${ws.slug}@example.com`, 'admin')
    expect((await admin.client.delete(`${statusesPath(ws)}/${planned}`)).status).toBe(204)
    expect(await stored(ws.id)).toHaveLength(5)
  })

  test('cookie sessions without X-Workspace are 422; with a foreign one 404', async () => {
    const ws = await workspaceFixture(h)
    const other = await workspaceFixture(h)
    expect((await ws.owner.get('/api/v1/statuses')).status).toBe(422)
    expect((await ws.owner.get('/api/v1/statuses', { headers: { 'x-workspace': other.slug } })).status).toBe(404)
  })
})
