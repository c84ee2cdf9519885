import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import * as oauth from 'oauth4webapi'
import { oauthClients, oauthConsentRequests, oauthGrants, oauthTokens } from '../../server/db/schema/index.ts'
import { sha256Hex } from '../../server/lib/secrets.ts'
import { workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, type Harness } from '../helpers/harness.ts'
import { authorizeAndExchange, bearer, clientOptions, discover, REDIRECT, refreshTokens, register, startAuthorization } from '../helpers/oauth.ts'

let h: Harness
let as: oauth.AuthorizationServer
let ws: WorkspaceFixture
beforeAll(async () => {
  h = await startHarness()
  as = await discover(h)
  ws = await workspaceFixture(h)
}, 60_000)
afterAll(() => h.close())

const form = (fields: Record<string, string>) => ({ raw: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })

/** Moves a rotated refresh token's rotation time into the past, as if the grace window had passed. */
const ageRotation = async (token: string, seconds: number) =>
  h.db.update(oauthTokens).set({ rotatedAt: new Date(Date.now() - seconds * 1000) }).where(eq(oauthTokens.tokenHash, await sha256Hex(token)))

describe('happy', () => {
  test('metadata names every endpoint; issuer is BASE_URL exactly; S256 only; iss and metadata documents supported', async () => {
    const res = await h.client().get('/.well-known/oauth-authorization-server')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/oauth/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      revocation_endpoint: `${BASE}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    })
    expect(res.body.scopes_supported).toContain('posts:read')
    expect(as.issuer).toBe(BASE)
  })

  test('public client: DCR → authorize → consent → code → token; the access token reads the workspace like an API key', async () => {
    const rc = await register(h, as, 'none')
    expect(rc.client.client_id).toMatch(/^oac_/)
    expect(rc.secret).toBeUndefined()
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read posts:read' })
    expect(tokens.access_token).toMatch(/^chorus_at_[0-9A-Za-z]{43}$/)
    expect(tokens.refresh_token).toMatch(/^chorus_rt_[0-9A-Za-z]{43}$/)
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.scope).toBe('workspace:read posts:read')
    // Only hashes are stored.
    const [row] = await h.db.select().from(oauthTokens).where(eq(oauthTokens.tokenHash, await sha256Hex(tokens.access_token)))
    expect(row).toMatchObject({ kind: 'access' })
    const [grant] = await h.db.select().from(oauthGrants).where(eq(oauthGrants.id, row!.familyId))
    expect(grant).toMatchObject({ workspaceId: ws.id, userId: ws.ownerId, scopes: ['workspace:read', 'posts:read'], revokedAt: null })

    const me = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(tokens.access_token) })
    expect(me.status).toBe(200)
    expect(me.body.id).toBe(ws.id)
    const [used] = await h.db.select().from(oauthGrants).where(eq(oauthGrants.id, grant!.id))
    expect(used!.lastUsedAt).not.toBeNull()
  })

  test('confidential client authenticates with client_secret_basic; the secret is stored hashed', async () => {
    const rc = await register(h, as, 'client_secret_basic')
    expect(rc.secret).toBeString()
    const [row] = await h.db.select().from(oauthClients).where(eq(oauthClients.id, rc.client.client_id))
    expect(row!.secretHash).toBe(await sha256Hex(rc.secret!))
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'posts:read' })
    expect(tokens.access_token).toMatch(/^chorus_at_/)
    // Without the secret the same client is refused.
    const bad = await oauth.refreshTokenGrantRequest(as, rc.client, oauth.ClientSecretBasic('wrong'), tokens.refresh_token!, clientOptions(h))
    expect(bad.status).toBe(401)
    expect(await bad.json()).toMatchObject({ error: 'invalid_client', code: 'UNAUTHENTICATED' })
  })

  test('refresh rotates; a rotated-out token within the grace window gets an access token and no refresh token', async () => {
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read' })
    const second = await refreshTokens(h, as, rc, tokens.refresh_token!)
    expect(second.refresh_token).toMatch(/^chorus_rt_/)
    expect(second.refresh_token).not.toBe(tokens.refresh_token)
    expect(second.access_token).not.toBe(tokens.access_token)

    // The race real MCP clients run: the old token again, moments later.
    const raced = await refreshTokens(h, as, rc, tokens.refresh_token!)
    expect(raced.access_token).toMatch(/^chorus_at_/)
    expect(raced.refresh_token).toBeUndefined()
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(raced.access_token) })).status).toBe(200)

    // The current token keeps rotating.
    const third = await refreshTokens(h, as, rc, second.refresh_token!)
    expect(third.refresh_token).toMatch(/^chorus_rt_/)
  })

  test('revocation (RFC 7009): an access token alone, then a refresh token with its family', async () => {
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read' })
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, rc.client, rc.auth, tokens.access_token, clientOptions(h)))
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(tokens.access_token) })).status).toBe(401)
    const fresh = await refreshTokens(h, as, rc, tokens.refresh_token!)
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(fresh.access_token) })).status).toBe(200)

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, rc.client, rc.auth, fresh.refresh_token!, clientOptions(h)))
    const after = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(fresh.access_token) })
    expect(after.status).toBe(401)
    expect(after.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"')
    // Unknown tokens are answered 200 too (nothing is revealed).
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, rc.client, rc.auth, 'chorus_rt_unknown', clientOptions(h)))
  })

  test('loopback redirect URIs match on any port (RFC 8252); the code and state come back with iss', async () => {
    const rc = await register(h, as)
    const other = 'http://127.0.0.1:51234/callback'
    const { tokens, redirectTo } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { redirectUri: other, state: 'st-123' })
    const url = new URL(redirectTo)
    expect(url.origin).toBe('http://127.0.0.1:51234')
    expect(url.searchParams.get('state')).toBe('st-123')
    expect(url.searchParams.get('iss')).toBe(BASE)
    // No scope asked for: every read scope, the changelog's included.
    expect(tokens.scope).toBe('workspace:read boards:read statuses:read labels:read posts:read comments:read votes:read webhooks:read notifications:read changelog:read companies:read')
  })

  test('the user is sent to sign-in and back to the same authorize URL when not signed in', async () => {
    const rc = await register(h, as)
    const path = `/oauth/authorize?client_id=${rc.client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`
    const res = await h.client().get(path)
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!)
    expect(location.pathname).toBe('/signin')
    expect(location.searchParams.get('return_to')).toBe(path)
    expect(await h.db.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.clientId, rc.client.client_id))).toHaveLength(0)
  })

  test('a deny answers the client with access_denied, state and iss', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const res = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: false, workspace_id: ws.id })
    expect(res.status).toBe(200)
    const url = new URL(res.body.redirect_to)
    expect(url.searchParams.get('error')).toBe('access_denied')
    expect(url.searchParams.get('state')).toBe(started.state)
    expect(url.searchParams.get('iss')).toBe(BASE)
    expect(() => oauth.validateAuthResponse(as, rc.client, url, started.state)).toThrow()
  })
})

describe('errors', () => {
  test('registration: bad redirect URIs, bad methods and non-JSON get RFC 7591 errors in the common shape, and nothing is stored', async () => {
    const before = (await h.db.select().from(oauthClients)).length
    const cases: [unknown, string][] = [
      [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example/cb#frag'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/${i}`) }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://app.example/cb'], client_name: 'x'.repeat(101) }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://app.example/cb'], grant_types: ['password'] }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://app.example/cb'], scope: 'posts:read admin:all' }, 'invalid_client_metadata'],
      [[1, 2], 'invalid_client_metadata'],
    ]
    for (const [body, error] of cases) {
      const res = await h.client().post('/oauth/register', body)
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ error, code: 'BAD_REQUEST' })
      expect(res.body.request_id).toMatch(/^req_/)
    }
    const garbage = await h.client().call('POST', '/oauth/register', { raw: '{not json', headers: { 'content-type': 'application/json' } })
    expect(garbage.status).toBe(400)
    expect(garbage.body.error).toBe('invalid_client_metadata')
    expect((await h.db.select().from(oauthClients)).length).toBe(before)
  })

  test('token endpoint: wrong grant type, missing fields, non-form body, unknown client', async () => {
    const rc = await register(h, as)
    const id = rc.client.client_id
    const cases: [Record<string, string>, number, string][] = [
      [{ grant_type: 'password', client_id: id }, 400, 'unsupported_grant_type'],
      [{ grant_type: 'authorization_code', client_id: id }, 400, 'invalid_request'],
      [{ grant_type: 'authorization_code', client_id: id, code: 'x' }, 400, 'invalid_request'],
      [{ grant_type: 'refresh_token', client_id: id }, 400, 'invalid_request'],
      [{ grant_type: 'refresh_token', client_id: id, refresh_token: 'chorus_rt_nope' }, 400, 'invalid_grant'],
      [{ grant_type: 'refresh_token', client_id: 'oac_unknown', refresh_token: 'x' }, 401, 'invalid_client'],
    ]
    for (const [fields, status, error] of cases) {
      const res = await h.client().call('POST', '/oauth/token', form(fields))
      expect(res.status).toBe(status)
      expect(res.body.error).toBe(error)
      expect(res.body.code).toBeString()
      expect(res.headers.get('cache-control')).toBe('no-store')
    }
    const json = await h.client().post('/oauth/token', { grant_type: 'refresh_token', client_id: id })
    expect(json.status).toBe(400)
    expect(json.body.error).toBe('invalid_request')
  })

  test('authorize: a bad client or redirect URI is shown as a page, never redirected', async () => {
    const rc = await register(h, as)
    const challenge = 'a'.repeat(43)
    for (const query of [
      `client_id=oac_unknown&redirect_uri=${encodeURIComponent(REDIRECT)}`,
      `client_id=${rc.client.client_id}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`,
      `client_id=${rc.client.client_id}&redirect_uri=${encodeURIComponent('http://127.0.0.1:8976/other')}`,
    ]) {
      const res = await ws.owner.get(`/oauth/authorize?${query}&response_type=code&code_challenge=${challenge}&code_challenge_method=S256`)
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      expect(res.headers.get('content-type')).toContain('text/html')
    }
  })

  test('authorize: other mistakes go back to the client with state and iss (unknown scope, foreign resource, wrong response type)', async () => {
    const rc = await register(h, as)
    const base = `/oauth/authorize?client_id=${rc.client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&state=s1&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`
    for (const [extra, error] of [
      ['&response_type=code&scope=posts:read%20root', 'invalid_scope'],
      ['&response_type=code&resource=https%3A%2F%2Fother.example%2Fmcp', 'invalid_target'],
      ['&response_type=token', 'unsupported_response_type'],
    ] as const) {
      const res = await ws.owner.get(base + extra)
      expect(res.status).toBe(302)
      const url = new URL(res.headers.get('location')!)
      expect(url.origin + url.pathname).toBe(REDIRECT)
      expect(url.searchParams.get('error')).toBe(error)
      expect(url.searchParams.get('state')).toBe('s1')
      expect(url.searchParams.get('iss')).toBe(BASE)
    }
  })
})

describe('security', () => {
  test('plain PKCE is refused, and so is a missing challenge', async () => {
    const rc = await register(h, as)
    for (const pkce of ['&code_challenge=abc&code_challenge_method=plain', '', `&code_challenge=${'a'.repeat(43)}`]) {
      const res = await ws.owner.get(`/oauth/authorize?client_id=${rc.client.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&state=s${pkce}`)
      expect(res.status).toBe(302)
      const url = new URL(res.headers.get('location')!)
      expect(url.searchParams.get('error')).toBe('invalid_request')
      expect(url.searchParams.get('code')).toBeNull()
    }
  })

  test('a wrong code_verifier or redirect_uri at the token endpoint is invalid_grant', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const decided = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id })
    const code = new URL(decided.body.redirect_to).searchParams.get('code')!
    const wrongVerifier = await h.client().call('POST', '/oauth/token', form({ grant_type: 'authorization_code', client_id: rc.client.client_id, code, redirect_uri: REDIRECT, code_verifier: oauth.generateRandomCodeVerifier() }))
    expect(wrongVerifier.status).toBe(400)
    expect(wrongVerifier.body.error).toBe('invalid_grant')
    const wrongRedirect = await h.client().call('POST', '/oauth/token', form({ grant_type: 'authorization_code', client_id: rc.client.client_id, code, redirect_uri: 'http://127.0.0.1:8976/elsewhere', code_verifier: started.verifier }))
    expect(wrongRedirect.body.error).toBe('invalid_grant')
  })

  test('another client cannot redeem a code', async () => {
    const rc = await register(h, as)
    const thief = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const decided = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id })
    const code = new URL(decided.body.redirect_to).searchParams.get('code')!
    const res = await h.client().call('POST', '/oauth/token', form({ grant_type: 'authorization_code', client_id: thief.client.client_id, code, redirect_uri: REDIRECT, code_verifier: started.verifier }))
    expect(res.body.error).toBe('invalid_grant')
  })

  test('code replay: the second use fails and revokes the tokens of the first', async () => {
    const rc = await register(h, as)
    const first = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read' })
    const replay = await h.client().call('POST', '/oauth/token', form({ grant_type: 'authorization_code', client_id: rc.client.client_id, code: first.code, redirect_uri: REDIRECT, code_verifier: first.verifier }))
    expect(replay.status).toBe(400)
    expect(replay.body.error).toBe('invalid_grant')
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(first.tokens.access_token) })).status).toBe(401)
    const [row] = await h.db.select().from(oauthTokens).where(eq(oauthTokens.tokenHash, await sha256Hex(first.tokens.access_token)))
    const [grant] = await h.db.select().from(oauthGrants).where(eq(oauthGrants.id, row!.familyId))
    expect(grant!.revokedReason).toBe('code_replay')
  })

  test('an expired code (60 s) is refused', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const decided = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id })
    await h.db.update(oauthConsentRequests).set({ codeExpiresAt: new Date(Date.now() - 1000) }).where(eq(oauthConsentRequests.id, started.requestId))
    const code = new URL(decided.body.redirect_to).searchParams.get('code')!
    const res = await h.client().call('POST', '/oauth/token', form({ grant_type: 'authorization_code', client_id: rc.client.client_id, code, redirect_uri: REDIRECT, code_verifier: started.verifier }))
    expect(res.body.error).toBe('invalid_grant')
  })

  test('refresh-token reuse after the grace window revokes the whole family', async () => {
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read' })
    const second = await refreshTokens(h, as, rc, tokens.refresh_token!)
    await ageRotation(tokens.refresh_token!, 31)
    await expect(refreshTokens(h, as, rc, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    // The whole family is dead: the current refresh token and every access token.
    await expect(refreshTokens(h, as, rc, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    const res = await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(second.access_token) })
    expect(res.status).toBe(401)
    expect(res.body.code).toBe('INVALID_API_KEY')
    const [row] = await h.db.select().from(oauthTokens).where(eq(oauthTokens.tokenHash, await sha256Hex(second.access_token)))
    const [grant] = await h.db.select().from(oauthGrants).where(eq(oauthGrants.id, row!.familyId))
    expect(grant!.revokedReason).toBe('refresh_reuse')
  })

  test('concurrent refreshes with one token: one rotation, the other inside the grace window; the family survives', async () => {
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read' })
    const results = await Promise.all([refreshTokens(h, as, rc, tokens.refresh_token!), refreshTokens(h, as, rc, tokens.refresh_token!)])
    expect(results.filter((r) => r.refresh_token).length).toBe(1)
    for (const r of results) expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(r.access_token) })).status).toBe(200)
  })

  test('another client cannot use or revoke a refresh token', async () => {
    const rc = await register(h, as)
    const other = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, ws.owner, ws.id, { scope: 'workspace:read' })
    await expect(refreshTokens(h, as, other, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, other.client, other.auth, tokens.refresh_token!, clientOptions(h)))
    expect((await refreshTokens(h, as, rc, tokens.refresh_token!)).refresh_token).toMatch(/^chorus_rt_/)
  })
})

describe('strict rotation (OAUTH_REFRESH_GRACE_SECONDS=0)', () => {
  test('any reuse of a rotated token revokes the family at once', async () => {
    const strict = await startHarness({ OAUTH_REFRESH_GRACE_SECONDS: '0' })
    try {
      const strictAs = await discover(strict)
      const sws = await workspaceFixture(strict)
      const rc = await register(strict, strictAs)
      const { tokens } = await authorizeAndExchange(strict, strictAs, rc, sws.owner, sws.id, { scope: 'workspace:read' })
      const second = await refreshTokens(strict, strictAs, rc, tokens.refresh_token!)
      await expect(refreshTokens(strict, strictAs, rc, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
      expect((await strict.client().get(`/api/v1/workspaces/${sws.slug}`, { headers: bearer(second.access_token) })).status).toBe(401)
    } finally {
      await strict.close()
    }
  }, 60_000)
})
