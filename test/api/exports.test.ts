import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { apiKeys, posts, statuses, webhooks, workspaces } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { addMember, boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
let admin: { client: TestClient; userId: string }
let member: { client: TestClient; userId: string }
let boardId: string
const BULK = 2345

const exportPath = (slug = ws.slug) => `/api/v1/workspaces/${slug}/export`

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true' })
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  boardId = (await boardFixture(h, ws.id, 'ideas')).id
  await boardFixture(h, other.id, 'ideas')
  await labelFixture(h, ws.id, 'ux')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
  member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
  expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['post.created'] })).status).toBe(201)
  const post = await api.post('/api/v1/boards/ideas/posts', { title: 'Labelled', labels: ['ux'] })
  expect((await api.post(`/api/v1/posts/${post.body.id}/comments`, { body: 'Internal note', internal: true })).status).toBe(201)
  expect((await api.post(`/api/v1/posts/${post.body.id}/votes`, { email: 'voter@example.com' })).status).toBe(200)
  expect((await member.client.post('/api/v1/boards/ideas/posts', { title: 'By the member' }, { headers: { 'x-workspace': ws.slug } })).status).toBe(201)
  // More rows than one page, straight into the database.
  const [status] = await h.db.select().from(statuses).where(eq(statuses.workspaceId, ws.id)).limit(1)
  for (let start = 0; start < BULK; start += 500) {
    await h.db.insert(posts).values(Array.from({ length: Math.min(500, BULK - start) }, (_, i) => ({ id: newId('post'), workspaceId: ws.id, boardId, statusId: status!.id, title: `Bulk ${start + i}`, body: 'x'.repeat(40) })))
  }
  await api.post('/api/v1/boards/ideas/posts', { title: 'Not in the other workspace' })
  await h.client({ authorization: `Bearer ${await other.key()}` }).post('/api/v1/boards/ideas/posts', { title: 'Other workspace post' })
}, 60_000)
afterAll(() => h.close())

describe('happy', () => {
  test('the owner downloads every section as one JSON attachment, every page of posts included', async () => {
    const res = await ws.owner.get(exportPath())
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('x-request-id')).toMatch(/^req_/)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="chorus-${ws.slug}-\\d{4}-\\d{2}-\\d{2}\\.json"$`))
    const body = res.body
    expect(body).toMatchObject({ format: 'chorus-workspace-export', version: 1, exported_at: expect.any(String) })
    for (const section of ['members', 'boards', 'statuses', 'labels', 'end_users', 'posts', 'comments', 'votes', 'status_changes', 'webhooks', 'api_keys']) {
      expect(Array.isArray(body[section])).toBe(true)
      expect(body.counts[section]).toBe(body[section].length)
    }
    expect(body.workspace).toMatchObject({ id: ws.id, slug: ws.slug })
    expect(body.members.map((m: any) => m.email).sort()).toEqual([`admin-${ws.slug}@example.com`, `member-${ws.slug}@example.com`, `owner-${ws.slug}@example.com`])
    expect(body.posts).toHaveLength(BULK + 3)
    const ids = body.posts.map((p: any) => p.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    expect(body.posts.every((p: any) => p.workspace_id === ws.id)).toBe(true)
    expect(body.posts.find((p: any) => p.title === 'Labelled').label_ids).toEqual([body.labels[0].id])
    expect(body.comments[0]).toMatchObject({ body: 'Internal note', internal: true })
    expect(body.end_users.map((e: any) => e.email)).toContain('voter@example.com')
    expect(body.votes).toHaveLength(1)
    expect(body.statuses.length).toBeGreaterThan(0)
    expect(body.status_changes.length).toBeGreaterThanOrEqual(3)
    expect(body.webhooks[0]).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['post.created'] })
    expect(body.posts[0].created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })

  test('no secret, hash or credential is in it', async () => {
    const res = await h.app.handle(new Request(`${BASE}${exportPath()}`, { headers: { cookie: [...ws.owner.jar].map(([k, v]) => `${k}=${v}`).join('; ') } }))
    const text = await res.text()
    const [workspace] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    const [hook] = await h.db.select().from(webhooks).where(eq(webhooks.workspaceId, ws.id))
    const keys = await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, ws.id))
    expect(text).not.toContain(workspace!.emailIntakeToken)
    expect(text).not.toContain(hook!.secret)
    for (const key of keys) expect(text).not.toContain(key.keyHash)
    expect(text).not.toMatch(/"(secret|previous_secret|key_hash|email_intake_token|search)"/)
    expect(JSON.parse(text).api_keys[0]).toMatchObject({ name: 'test key', start: expect.stringMatching(/^chorus_sk_/) })
  })

  test('it is one snapshot: a post written during the download is not in it', async () => {
    const res = await h.app.handle(new Request(`${BASE}${exportPath()}`, { headers: { cookie: [...ws.owner.jar].map(([k, v]) => `${k}=${v}`).join('; ') } }))
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = decoder.decode((await reader.read()).value, { stream: true })
    // On PGlite (one connection) the write waits for the export to finish; on Postgres it commits at once.
    const write = api.post('/api/v1/boards/ideas/posts', { title: 'Written during the export' })
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    expect((await write).status).toBe(201)
    const body = JSON.parse(text)
    expect(body.posts.some((p: any) => p.title === 'Written during the export')).toBe(false)
    expect((await ws.owner.get(exportPath())).body.posts.some((p: any) => p.title === 'Written during the export')).toBe(true)
  })

  test("a user's export holds their profile, memberships, sessions without tokens and what they wrote", async () => {
    const res = await member.client.get('/api/v1/user/export')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="chorus-account-/)
    const body = res.body
    expect(body).toMatchObject({ format: 'chorus-user-export', version: 1, user: { id: member.userId, email: `member-${ws.slug}@example.com` } })
    expect(body.memberships).toEqual([expect.objectContaining({ workspace_id: ws.id, workspace_slug: ws.slug, role: 'member', status: 'active' })])
    expect(body.sessions.length).toBeGreaterThan(0)
    expect(Object.keys(body.sessions[0]).sort()).toEqual(['created_at', 'expires_at', 'id', 'revoked_at', 'user_agent', 'user_id'])
    expect(body.posts.map((p: any) => p.title)).toEqual(['By the member'])
    for (const section of ['comments', 'votes', 'notification_subscriptions', 'notifications', 'api_keys_created']) expect(Array.isArray(body[section])).toBe(true)
    expect(body.counts.posts).toBe(1)
    const owners = await ws.owner.get('/api/v1/user/export')
    expect(owners.body.api_keys_created.length).toBe(1)
    expect(JSON.stringify(owners.body)).not.toContain('key_hash')
  })
})

describe('errors', () => {
  test('without a session both are 401', async () => {
    const anonymous = h.client()
    expect((await anonymous.get(exportPath())).status).toBe(401)
    expect((await anonymous.get('/api/v1/user/export')).status).toBe(401)
  })

  test('an unknown workspace is 404', async () => {
    expect((await ws.owner.get(exportPath('no-such-workspace'))).status).toBe(404)
  })
})

describe('security', () => {
  test('admins and members get 403 OWNER_ONLY; keys 403 DASHBOARD_ONLY; other owners 404', async () => {
    for (const client of [admin.client, member.client]) {
      const res = await client.get(exportPath())
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('OWNER_ONLY')
    }
    const byKey = await api.get(exportPath())
    expect(byKey.status).toBe(403)
    expect(byKey.body.code).toBe('DASHBOARD_ONLY')
    expect((await api.get('/api/v1/user/export')).body.code).toBe('DASHBOARD_ONLY')
    expect((await other.owner.get(exportPath())).status).toBe(404)
  })

  test("an owner's export never holds another workspace's rows", async () => {
    const body = (await other.owner.get(exportPath(other.slug))).body
    expect(body.posts.map((p: any) => p.title)).toEqual(['Other workspace post'])
    expect(JSON.stringify(body)).not.toContain(ws.id)
  })
})
