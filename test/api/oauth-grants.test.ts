import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import type * as oauth from 'oauth4webapi'
import { oauthConsentRequests, oauthGrants, posts } from '../../server/db/schema/index.ts'
import { addMember, boardFixture, setSubscription, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { Chorus } from '../../sdk/src/index.ts'
import { BASE, startHarness, type Harness } from '../helpers/harness.ts'
import { authorizeAndExchange, bearer, discover, register, startAuthorization } from '../helpers/oauth.ts'

let h: Harness
let as: oauth.AuthorizationServer
let ws: WorkspaceFixture
beforeAll(async () => {
  h = await startHarness()
  as = await discover(h)
  ws = await workspaceFixture(h)
}, 60_000)
afterAll(() => h.close())

const familyOf = async (workspaceId: string) => (await h.db.select().from(oauthGrants).where(eq(oauthGrants.workspaceId, workspaceId)))

describe('happy', () => {
  test('consent request: client (unverified), redirect URI, scopes in words, grantable workspaces', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner, { scope: 'posts:read posts:write' })
    const res = await ws.owner.get(`/api/v1/oauth/consent/${started.requestId}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      request_id: started.requestId,
      client_id: rc.client.client_id,
      client_name: 'Test Assistant',
      client_verified: false,
      redirect_uri: 'http://127.0.0.1:8976/callback',
      scopes: [{ scope: 'posts:read', description: 'Read posts (feedback and ideas)' }, { scope: 'posts:write', description: 'Create, change, merge and delete posts' }],
      workspaces: [{ id: ws.id, slug: ws.slug, name: `Workspace ${ws.slug}` }],
    })
  })

  test('scopes can be narrowed; the token carries only those', async () => {
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read posts:read posts:write', scopes: ['workspace:read'] })
    expect(tokens.scope).toBe('workspace:read')
    const res = await h.client().get('/api/v1/boards', { headers: bearer(tokens.access_token) })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'boards:read' })
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="boards:read"')
  })

  test('an access token writes as the user who granted it', async () => {
    const own = await workspaceFixture(h)
    await boardFixture(h, own.id, 'ideas')
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, own.owner, own.id, { scope: 'posts:write posts:read' })
    const created = await h.client().post('/api/v1/boards/ideas/posts', { title: 'From an assistant' }, { headers: bearer(tokens.access_token) })
    expect(created.status).toBe(201)
    const [row] = await h.db.select().from(posts).where(eq(posts.id, created.body.id))
    expect(row!.authorUserId).toBe(own.ownerId)
    expect(row!.authorKeyId).toBeNull()
  })

  test('grants: admins see every grant of the workspace, members their own; delete stops the tokens at once', async () => {
    const own = await workspaceFixture(h)
    const admin = await addMember(h, own, `admin-${own.slug}@example.com`, 'admin')
    const rc = await register(h, as)
    const ownerGrant = await authorizeAndExchange(h, as, rc, own.owner, own.id, { scope: 'workspace:read' })
    await authorizeAndExchange(h, as, rc, admin.client, own.id, { scope: 'workspace:read' })

    const list = await own.owner.get(`/api/v1/oauth/grants?workspace_id=${own.id}`)
    expect(list.status).toBe(200)
    expect(list.body).toHaveLength(2)
    expect(list.body[0]).toMatchObject({ client_id: rc.client.client_id, client_name: 'Test Assistant', workspace_id: own.id, scopes: ['workspace:read'] })
    expect(list.body[0].family_id).toMatch(/^ogf_/)
    expect(Object.keys(list.body[0]).sort()).toEqual(['client_id', 'client_name', 'created_at', 'family_id', 'last_used_at', 'scopes', 'user_id', 'workspace_id'])

    const ownerFamily = list.body.find((g: { user_id: string }) => g.user_id === own.ownerId).family_id
    expect((await h.client().get(`/api/v1/workspaces/${own.slug}`, { headers: bearer(ownerGrant.tokens.access_token) })).status).toBe(200)
    const deleted = await own.owner.delete(`/api/v1/oauth/grants/${ownerFamily}`)
    expect(deleted.status).toBe(204)
    const refused = await h.client().get(`/api/v1/workspaces/${own.slug}`, { headers: bearer(ownerGrant.tokens.access_token) })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
    const refresh = await h.client().call('POST', '/oauth/token', { raw: new URLSearchParams({ grant_type: 'refresh_token', client_id: rc.client.client_id, refresh_token: ownerGrant.tokens.refresh_token! }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(refresh.body.error).toBe('invalid_grant')
    // Idempotent, and gone from the list.
    expect((await own.owner.delete(`/api/v1/oauth/grants/${ownerFamily}`)).status).toBe(204)
    expect((await own.owner.get(`/api/v1/oauth/grants?workspace_id=${own.id}`)).body).toHaveLength(1)
  })

  test('the SDK lists and deletes grants with a dashboard session', async () => {
    const own = await workspaceFixture(h)
    const rc = await register(h, as)
    await authorizeAndExchange(h, as, rc, own.owner, own.id, { scope: 'workspace:read' })
    const cookie = [...own.owner.jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const chorus = new Chorus({
      credentials: 'include',
      baseUrl: `${BASE}/api/v1`,
      fetch: (url, init) => h.app.handle(new Request(url, { ...init, headers: { ...(init?.headers as Record<string, string>), cookie, origin: BASE } })),
    })
    const grants = await chorus.oauthGrants.list(own.id)
    expect(grants).toHaveLength(1)
    expect(grants[0]!.client_name).toBe('Test Assistant')
    await chorus.oauthGrants.delete(grants[0]!.family_id)
    expect((await chorus.oauthGrants.list(own.id)) as unknown).toEqual([])
  })
})

describe('errors', () => {
  test('consent decision: wrong types, missing and unknown fields are 422, and the request stays pending', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    for (const body of [{ approve: 'yes', workspace_id: ws.id }, { approve: true }, { approve: true, workspace_id: ws.id, extra: 1 }, { approve: true, workspace_id: ws.id, scopes: [] }]) {
      const res = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
      expect(res.body.detail[0].loc[0]).toBe('body')
    }
    const [row] = await h.db.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.id, started.requestId))
    expect(row!.status).toBe('pending')
    expect(row!.codeHash).toBeNull()
  })

  test('unknown and malformed request ids are 404; grants need a workspace the user belongs to', async () => {
    expect((await ws.owner.get('/api/v1/oauth/consent/ocr_nope')).status).toBe(404)
    expect((await ws.owner.get('/api/v1/oauth/consent/ocr_0000000000000000000000000')).status).toBe(404)
    const other = await workspaceFixture(h)
    expect((await ws.owner.get(`/api/v1/oauth/grants?workspace_id=${other.id}`)).status).toBe(404)
    expect((await ws.owner.get('/api/v1/oauth/grants')).status).toBe(422)
    expect((await ws.owner.delete('/api/v1/oauth/grants/ogf_0000000000000000000000000')).status).toBe(404)
  })

  test('consent and grants need a dashboard session: 401 without, 403 DASHBOARD_ONLY with a token', async () => {
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read' })
    expect((await h.client().get(`/api/v1/oauth/grants?workspace_id=${ws.id}`)).status).toBe(401)
    const res = await h.client().get(`/api/v1/oauth/grants?workspace_id=${ws.id}`, { headers: bearer(tokens.access_token) })
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('DASHBOARD_ONLY')
  })
})

describe('security', () => {
  test('expired consent request (10 minutes) is refused and yields no code', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    await h.db.update(oauthConsentRequests).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(oauthConsentRequests.id, started.requestId))
    expect((await ws.owner.get(`/api/v1/oauth/consent/${started.requestId}`)).status).toBe(404)
    const res = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id })
    expect(res.status).toBe(404)
    const [row] = await h.db.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.id, started.requestId))
    expect(row!.codeHash).toBeNull()
  })

  test('a consent request is single use', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const answers = await Promise.all([1, 2].map(() => ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409])
    expect((await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: false, workspace_id: ws.id })).status).toBe(409)
  })

  test("another user cannot see or answer someone's consent request (404)", async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const stranger = await workspaceFixture(h)
    expect((await stranger.owner.get(`/api/v1/oauth/consent/${started.requestId}`)).status).toBe(404)
    expect((await stranger.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: stranger.id })).status).toBe(404)
  })

  test('consent for a workspace where the user is only a member is 403; for a foreign workspace 404', async () => {
    const own = await workspaceFixture(h)
    const member = await addMember(h, own, `member-${own.slug}@example.com`, 'member')
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, member.client)
    expect((await member.client.get(`/api/v1/oauth/consent/${started.requestId}`)).body.workspaces).toEqual([])
    const res = await member.client.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: own.id })
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('FORBIDDEN')
    expect((await member.client.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id })).status).toBe(404)
    expect(await familyOf(own.id)).toHaveLength(0)
  })

  test('widened scopes are refused (422) and nothing is granted', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner, { scope: 'posts:read' })
    const res = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id, scopes: ['posts:read', 'posts:write'] })
    expect(res.status).toBe(422)
    expect(res.body.detail[0].loc).toEqual(['body', 'scopes'])
    const [row] = await h.db.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.id, started.requestId))
    expect(row!.status).toBe('pending')
  })

  test('CSRF: a cookie-authenticated consent POST from a foreign origin is refused', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const res = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id }, { headers: { origin: 'https://evil.example' } })
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('CSRF_REJECTED')
    const [row] = await h.db.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.id, started.requestId))
    expect(row!.status).toBe('pending')
  })

  test('a token of workspace A is refused on workspace B', async () => {
    const a = await workspaceFixture(h)
    const b = await workspaceFixture(h)
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, a.owner, a.id, { scope: 'workspace:read' })
    expect((await h.client().get(`/api/v1/workspaces/${a.slug}`, { headers: bearer(tokens.access_token) })).status).toBe(200)
    const res = await h.client().get(`/api/v1/workspaces/${b.slug}`, { headers: bearer(tokens.access_token) })
    expect(res.status).toBe(404)
  })

  test('a grant someone else made in a workspace I only belong to is not mine to see or delete', async () => {
    const own = await workspaceFixture(h)
    const member = await addMember(h, own, `m2-${own.slug}@example.com`, 'member')
    const rc = await register(h, as)
    await authorizeAndExchange(h, as, rc, own.owner, own.id, { scope: 'workspace:read' })
    const [grant] = await familyOf(own.id)
    expect((await member.client.get(`/api/v1/oauth/grants?workspace_id=${own.id}`)).body).toEqual([])
    expect((await member.client.delete(`/api/v1/oauth/grants/${grant!.id}`)).status).toBe(404)
    const [after] = await familyOf(own.id)
    expect(after!.revokedAt).toBeNull()
  })

  test('dashboard-only routes answer 403 DASHBOARD_ONLY to a token; the subscription gate applies', async () => {
    const own = await workspaceFixture(h)
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, own.owner, own.id, { scope: 'workspace:read' })
    const keys = await h.client().get(`/api/v1/workspaces/${own.slug}/api-keys`, { headers: bearer(tokens.access_token) })
    expect(keys.status).toBe(403)
    expect(keys.body.code).toBe('DASHBOARD_ONLY')
    await setSubscription(h, own.id, { plan: 'free', subscriptionStatus: 'none' })
    const gated = await h.client().get(`/api/v1/workspaces/${own.slug}`, { headers: bearer(tokens.access_token) })
    expect(gated.status).toBe(403)
    expect(gated.body.code).toBe('SUBSCRIPTION_INACTIVE')
  })

  test('a token stops when its user leaves the workspace, and a token for the MCP resource is refused by the REST API', async () => {
    const own = await workspaceFixture(h)
    const admin = await addMember(h, own, `leaver-${own.slug}@example.com`, 'admin')
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, admin.client, own.id, { scope: 'workspace:read' })
    expect((await h.client().get(`/api/v1/workspaces/${own.slug}`, { headers: bearer(tokens.access_token) })).status).toBe(200)
    expect((await own.owner.delete(`/api/v1/workspaces/${own.slug}/members/${admin.userId}`)).status).toBe(204)
    expect((await h.client().get(`/api/v1/workspaces/${own.slug}`, { headers: bearer(tokens.access_token) })).status).toBe(401)

    const mcp = await authorizeAndExchange(h, as, rc, own.owner, own.id, { scope: 'workspace:read', resource: 'http://localhost:3000/mcp' })
    expect((await h.client().get(`/api/v1/workspaces/${own.slug}`, { headers: bearer(mcp.tokens.access_token) })).status).toBe(401)
    const api = await authorizeAndExchange(h, as, rc, own.owner, own.id, { scope: 'workspace:read', resource: 'http://localhost:3000/api/v1' })
    expect((await h.client().get(`/api/v1/workspaces/${own.slug}`, { headers: bearer(api.tokens.access_token) })).status).toBe(200)
  })

  test('a forged state is caught by the client: the response carries the state the server was given', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner, { state: 'genuine-state' })
    const decided = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id })
    const url = new URL(decided.body.redirect_to)
    expect(url.searchParams.get('state')).toBe('genuine-state')
    const { validateAuthResponse } = await import('oauth4webapi')
    expect(() => validateAuthResponse(as, rc.client, url, 'forged-state')).toThrow(/state/)
    // A response claiming another issuer is refused as well (RFC 9207).
    url.searchParams.set('iss', 'https://evil.example')
    expect(() => validateAuthResponse(as, rc.client, url, 'genuine-state')).toThrow()
  })
})
