import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { apiKeys, members, workspaces } from '../../server/db/schema/index.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { addMember, uniqueSlug, workspaceFixture } from '../helpers/fixtures.ts'
import { signIn } from '../helpers/session.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

describe('workspaces: happy paths', () => {
  test('create makes the caller owner, on a 14-day startup trial', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'creator@example.com')
    const slug = uniqueSlug('acme')
    const res = await client.post('/api/v1/workspaces', { name: 'Acme', slug })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ slug, name: 'Acme', plan: 'startup', subscription_status: 'trialing', comped: false, past_due_since: null, role: 'owner', logo_url: null, favicon_url: null })
    expect(res.body.id).toMatch(/^ws_[0-9a-z]{25}$/)
    const trialDays = (Date.parse(res.body.current_period_end) - Date.now()) / 86_400_000
    expect(trialDays).toBeGreaterThan(13.9)
    expect(trialDays).toBeLessThan(14.1)
    const [member] = await h.db.select().from(members).where(eq(members.workspaceId, res.body.id))
    expect(member).toMatchObject({ userId: user.id, role: 'owner', status: 'active' })
  })

  test('list with a cookie: the user workspaces; with a key: exactly the key workspace', async () => {
    const a = await workspaceFixture(h)
    const second = await a.owner.post('/api/v1/workspaces', { name: 'Second', slug: uniqueSlug('second') })
    expect(second.status).toBe(201)
    const mine = await a.owner.get('/api/v1/workspaces')
    expect(mine.status).toBe(200)
    expect(mine.body.map((w: any) => w.slug)).toEqual([a.slug, second.body.slug])

    const key = await a.key(['workspace:read'])
    const keyed = await h.client().get('/api/v1/workspaces', { headers: { authorization: `Bearer ${key}` } })
    expect(keyed.status).toBe(200)
    expect(keyed.body).toHaveLength(1)
    expect(keyed.body[0]).toMatchObject({ slug: a.slug, role: null })
  })

  test('get by slug with cookie and key; update by admin', async () => {
    const ws = await workspaceFixture(h)
    expect((await ws.owner.get(`/api/v1/workspaces/${ws.slug}`)).body.role).toBe('owner')
    const key = await ws.key(['workspace:read'])
    const keyed = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: { 'x-api-key': key } })
    expect(keyed.status).toBe(200)
    expect(keyed.body.role).toBeNull()

    const newSlug = uniqueSlug('renamed')
    const updated = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { name: 'Renamed', slug: newSlug, settings: { allow_anonymous: false } })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ name: 'Renamed', slug: newSlug, settings: { allow_anonymous: false } })
    const [row] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(row).toMatchObject({ name: 'Renamed', slug: newSlug })
  })

  test('delete (owner) removes the workspace with its members and keys', async () => {
    const ws = await workspaceFixture(h)
    await ws.key()
    const res = await ws.owner.delete(`/api/v1/workspaces/${ws.slug}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'deleted', id: ws.id })
    expect(await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))).toHaveLength(0)
    expect(await h.db.select().from(members).where(eq(members.workspaceId, ws.id))).toHaveLength(0)
    expect(await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, ws.id))).toHaveLength(0)
  })
})

describe('workspaces: errors', () => {
  test('slug rules and a taken slug', async () => {
    const ws = await workspaceFixture(h)
    for (const slug of ['A', 'has space', '-lead', 'trail-', 'double--dash', 'x', 'a'.repeat(49)]) {
      const res = await ws.owner.post('/api/v1/workspaces', { name: 'Bad', slug })
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', 'slug'])
    }
    const taken = await ws.owner.post('/api/v1/workspaces', { name: 'Dup', slug: ws.slug })
    expect(taken.status).toBe(409)
    expect(taken.body.code).toBe('SLUG_TAKEN')
    const other = await workspaceFixture(h)
    const renameTaken = await other.owner.patch(`/api/v1/workspaces/${other.slug}`, { slug: ws.slug })
    expect(renameTaken.status).toBe(409)
    expect(renameTaken.body.code).toBe('SLUG_TAKEN')
  })

  test('missing name, wrong types, unknown fields: 422 and nothing written', async () => {
    const ws = await workspaceFixture(h)
    const before = (await h.db.select().from(workspaces)).length
    expect((await ws.owner.post('/api/v1/workspaces', { slug: uniqueSlug() })).status).toBe(422)
    expect((await ws.owner.post('/api/v1/workspaces', { name: 7, slug: uniqueSlug() })).status).toBe(422)
    expect((await ws.owner.post('/api/v1/workspaces', { name: 'x', slug: uniqueSlug(), plan: 'business' })).status).toBe(422)
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { brand_color: 'red' } })).status).toBe(422)
    expect((await h.db.select().from(workspaces)).length).toBe(before)
  })
})

describe('workspaces: security', () => {
  test('non-members get 404 (existence is not revealed)', async () => {
    const ws = await workspaceFixture(h)
    const stranger = h.client()
    await signIn(h, stranger, 'stranger@example.com')
    const res = await stranger.get(`/api/v1/workspaces/${ws.slug}`)
    expect(res.status).toBe(404)
    expect(res.body.code).toBe('NOT_FOUND')
    expect((await stranger.get('/api/v1/workspaces/does-not-exist')).status).toBe(404)
  })

  test("a key of one workspace gets 404 for another's", async () => {
    const a = await workspaceFixture(h)
    const b = await workspaceFixture(h)
    const key = await a.key()
    const res = await h.client().get(`/api/v1/workspaces/${b.slug}`, { headers: { authorization: `Bearer ${key}` } })
    expect(res.status).toBe(404)
  })

  test('members cannot change settings; admins cannot delete (OWNER_ONLY); keys cannot change settings', async () => {
    const ws = await workspaceFixture(h)
    const member = await addMember(h, ws, `m-${ws.slug}@example.com`, 'member')
    const admin = await addMember(h, ws, `a-${ws.slug}@example.com`, 'admin')
    const denied = await member.client.patch(`/api/v1/workspaces/${ws.slug}`, { name: 'Nope' })
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe('FORBIDDEN')
    const ownerOnly = await admin.client.delete(`/api/v1/workspaces/${ws.slug}`)
    expect(ownerOnly.status).toBe(403)
    expect(ownerOnly.body.code).toBe('OWNER_ONLY')
    const key = await ws.key()
    const keyed = await h.client().patch(`/api/v1/workspaces/${ws.slug}`, { name: 'Nope' }, { headers: { authorization: `Bearer ${key}` } })
    expect(keyed.status).toBe(403)
    expect(keyed.body.code).toBe('DASHBOARD_ONLY')
    const [row] = await h.db.select().from(workspaces).where(and(eq(workspaces.id, ws.id)))
    expect(row?.name).toBe(`Workspace ${ws.slug}`)
  })
})
