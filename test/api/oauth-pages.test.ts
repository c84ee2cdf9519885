import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import * as oauth from 'oauth4webapi'
import { oauthClients, oauthConsentRequests } from '../../server/db/schema/index.ts'
import { workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, type Harness } from '../helpers/harness.ts'
import { bearer, clientOptions, discover, REDIRECT, register, startAuthorization, type RegisteredClient } from '../helpers/oauth.ts'

let h: Harness
let as: oauth.AuthorizationServer
let ws: WorkspaceFixture
/** A client's own web server publishing its Client ID Metadata Document (and some broken ones). */
let site: ReturnType<typeof Bun.serve>
let siteUrl: string
beforeAll(async () => {
  // Private targets allowed, so the metadata documents can live on a loopback server.
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true' })
  as = await discover(h)
  ws = await workspaceFixture(h)
  site = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const url = new URL(request.url)
      const self = `${siteUrl}${url.pathname}`
      if (url.pathname === '/client.json') return Response.json({ client_id: self, client_name: 'Metadata App', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
      if (url.pathname === '/mismatch.json') return Response.json({ client_id: `${siteUrl}/other.json`, client_name: 'Liar', redirect_uris: [REDIRECT] })
      if (url.pathname === '/huge.json') return Response.json({ client_id: self, client_name: 'Huge', redirect_uris: [REDIRECT], padding: 'x'.repeat(10_000) })
      if (url.pathname === '/redirect.json') return Response.redirect(`${siteUrl}/client.json`, 302)
      return new Response('not found', { status: 404 })
    },
  })
  siteUrl = `http://127.0.0.1:${site.port}`
}, 120_000)
afterAll(async () => {
  site?.stop(true)
  await h?.close()
})

const formPost = (fields: [string, string][]) => ({ raw: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE } })
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1]

describe('happy', () => {
  test('the built-in consent page shows the app (unverified), where it goes, each scope in words and the workspaces', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner, { scope: 'posts:read comments:internal' })
    expect(started.location).toBe(`${BASE}/oauth/consent/${started.requestId}`)
    const page = await ws.owner.get(`/oauth/consent/${started.requestId}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    const html = page.body as string
    expect(html).toContain('Test Assistant')
    expect(html).toContain('Unverified app')
    expect(html).toContain('127.0.0.1:8976')
    expect(html).toContain('Read posts (feedback and ideas)')
    expect(html).toContain('Read and write internal team notes')
    expect(html).toContain(`value="${ws.id}"`)
    expect(html).not.toContain('<script')
    expect(csrfOf(html)).toBeString()
  })

  test('submitting the form (no JavaScript) answers 303 to the client with a code the client redeems', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner, { scope: 'workspace:read posts:read' })
    const csrf = csrfOf((await ws.owner.get(`/oauth/consent/${started.requestId}`)).body)!
    const res = await ws.owner.call('POST', `/oauth/consent/${started.requestId}`, formPost([['csrf', csrf], ['workspace_id', ws.id], ['scope', 'workspace:read'], ['decision', 'approve']]))
    expect(res.status).toBe(303)
    const params = oauth.validateAuthResponse(as, rc.client, new URL(res.headers.get('location')!), started.state)
    const tokens = await oauth.processAuthorizationCodeResponse(as, rc.client, await oauth.authorizationCodeGrantRequest(as, rc.client, rc.auth, params, REDIRECT, started.verifier, clientOptions(h)))
    expect(tokens.scope).toBe('workspace:read')
  })

  test('Client ID Metadata Document: an https-style URL as client_id, fetched, checked and used for the whole flow', async () => {
    const clientId = `${siteUrl}/client.json`
    const rc: RegisteredClient = { client: { client_id: clientId, token_endpoint_auth_method: 'none' }, auth: oauth.None() }
    const started = await startAuthorization(as, rc, ws.owner, { scope: 'workspace:read' })
    const [stored] = await h.db.select().from(oauthClients).where(eq(oauthClients.id, clientId))
    expect(stored).toMatchObject({ kind: 'cimd', name: 'Metadata App', redirectUris: [REDIRECT], authMethod: 'none' })
    const consent = await ws.owner.get(`/api/v1/oauth/consent/${started.requestId}`)
    expect(consent.body).toMatchObject({ client_id: clientId, client_name: 'Metadata App', client_verified: false })
    const decided = await ws.owner.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: ws.id })
    const params = oauth.validateAuthResponse(as, rc.client, new URL(decided.body.redirect_to), started.state)
    const tokens = await oauth.processAuthorizationCodeResponse(as, rc.client, await oauth.authorizationCodeGrantRequest(as, rc.client, rc.auth, params, REDIRECT, started.verifier, clientOptions(h)))
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}`, { headers: bearer(tokens.access_token) })).status).toBe(200)
  })
})

describe('errors', () => {
  test('metadata documents that lie about their client_id, are too large, redirect or are missing are refused on a page', async () => {
    for (const path of ['/mismatch.json', '/huge.json', '/redirect.json', '/missing.json']) {
      const res = await ws.owner.get(`/oauth/authorize?client_id=${encodeURIComponent(siteUrl + path)}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`)
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      expect(res.body).toContain('metadata document')
    }
    expect(await h.db.select().from(oauthClients).where(eq(oauthClients.id, `${siteUrl}/mismatch.json`))).toHaveLength(0)
  })

  test('the form needs a decision and, to allow, at least one permission; the request stays pending', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const csrf = csrfOf((await ws.owner.get(`/oauth/consent/${started.requestId}`)).body)!
    for (const fields of [[['decision', 'approve']], [['decision', 'maybe'], ['scope', 'posts:read']], [['scope', 'posts:read']]] as [string, string][][]) {
      const res = await ws.owner.call('POST', `/oauth/consent/${started.requestId}`, formPost([['csrf', csrf], ['workspace_id', ws.id], ...fields]))
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
    }
    const [row] = await h.db.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.id, started.requestId))
    expect(row!.status).toBe('pending')
  })

  test('the consent page without a session sends the user to sign in and back', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const res = await h.client().get(`/oauth/consent/${started.requestId}`)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${BASE}/signin?return_to=${encodeURIComponent(`/oauth/consent/${started.requestId}`)}`)
  })
})

describe('security', () => {
  test('CSRF on the consent form: no token, or a token of another request, is refused and grants nothing', async () => {
    const rc = await register(h, as)
    const started = await startAuthorization(as, rc, ws.owner)
    const other = await startAuthorization(as, rc, ws.owner)
    const otherCsrf = csrfOf((await ws.owner.get(`/oauth/consent/${other.requestId}`)).body)!
    for (const csrf of [[], [['csrf', otherCsrf]], [['csrf', 'forged']]] as [string, string][][]) {
      const res = await ws.owner.call('POST', `/oauth/consent/${started.requestId}`, formPost([...csrf, ['workspace_id', ws.id], ['decision', 'approve']]))
      expect(res.status).toBe(403)
      expect(res.headers.get('location')).toBeNull()
    }
    // And from a foreign origin, whatever the form holds.
    const csrf = csrfOf((await ws.owner.get(`/oauth/consent/${started.requestId}`)).body)!
    const foreign = await ws.owner.call('POST', `/oauth/consent/${started.requestId}`, { ...formPost([['csrf', csrf], ['workspace_id', ws.id], ['decision', 'approve']]), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' } })
    expect(foreign.status).toBe(403)
    const [row] = await h.db.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.id, started.requestId))
    expect(row!.status).toBe('pending')
  })

  test('a metadata URL pointing at a private address is refused when private targets are not allowed', async () => {
    const strict = await startHarness()
    try {
      const owner = (await workspaceFixture(strict)).owner
      const res = await owner.get(`/oauth/authorize?client_id=${encodeURIComponent('https://127.0.0.1:9/client.json')}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`)
      expect(res.status).toBe(400)
      expect(res.body).toContain('private')
      // Plain http is not a metadata URL at all there.
      const http = await owner.get(`/oauth/authorize?client_id=${encodeURIComponent(`${siteUrl}/client.json`)}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`)
      expect(http.status).toBe(400)
      expect(http.body).toContain('Unknown client_id')
    } finally {
      await strict.close()
    }
  }, 60_000)
})
