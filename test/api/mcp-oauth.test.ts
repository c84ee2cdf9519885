import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { eq } from 'drizzle-orm'
import { oauthGrants, posts } from '../../server/db/schema/index.ts'
import { BASE, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { bearer, REDIRECT } from '../helpers/oauth.ts'

// The MCP SDK's own OAuth client (auth provider + Streamable HTTP transport) against /mcp, with this
// server as its authorization server: 401 → protected-resource metadata → AS metadata → dynamic
// registration → authorize (the test plays the signed-in admin and approves) → code → tokens → tools.
// The app listens on a real loopback port; the SDK addresses it by the configured base URL and the
// transport's fetch carries each request to the port, so every URL the SDK checks is the public one.

let h: Harness
let server: ReturnType<typeof Bun.serve>
let ws: WorkspaceFixture
const clients: Client[] = []

beforeAll(async () => {
  h = await startHarness()
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => h.app.handle(request) })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
}, 60_000)
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  server.stop(true)
  await h.close()
})

const requested: string[] = []
/** Sends a request meant for the public base URL to the app's real port, recording the path. */
const toPort = (input: string | URL | Request, init?: RequestInit) => {
  const target = new URL(input instanceof Request ? input.url : input)
  requested.push(`${init?.method ?? 'GET'} ${target.pathname}`)
  return fetch(`http://127.0.0.1:${server.port}${target.pathname}${target.search}`, init)
}

/** An MCP client's OAuth state, all in memory; `redirectToAuthorization` records where the user would be sent. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier?: string
  authorizationUrl?: URL
  get redirectUrl() { return REDIRECT }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'SDK Assistant', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }
  clientInformation() { return this.client }
  saveClientInformation(info: OAuthClientInformationMixed) { this.client = info }
  tokens() { return this.saved }
  saveTokens(tokens: OAuthTokens) { this.saved = tokens }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url }
  saveCodeVerifier(verifier: string) { this.verifier = verifier }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved')
    return this.verifier
  }
}

const mcpUrl = () => new URL(`${BASE}/mcp`)
const transportFor = (provider: MemoryProvider) => new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider, fetch: toPort })

async function connect(provider: MemoryProvider) {
  const client = new Client({ name: 'chorus-oauth-test', version: '1.0.0' })
  await client.connect(transportFor(provider))
  clients.push(client)
  return client
}

/** The signed-in user's leg: open the authorize URL with the session, approve on the consent API, return the code. */
async function approve(browser: TestClient, authorizationUrl: URL, workspaceId: string, scopes?: string[]) {
  const authorize = await browser.get(`${authorizationUrl.pathname}${authorizationUrl.search}`)
  expect(authorize.status).toBe(302)
  const requestId = /\/oauth\/consent\/(ocr_[0-9a-z]+)$/.exec(authorize.headers.get('location')!)?.[1]
  expect(requestId).toBeDefined()
  const decided = await browser.post(`/api/v1/oauth/consent/${requestId}`, { approve: true, workspace_id: workspaceId, ...(scopes ? { scopes } : {}) })
  expect(decided.status).toBe(200)
  const redirect = new URL(decided.body.redirect_to)
  expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT)
  expect(redirect.searchParams.get('state')).toBe(authorizationUrl.searchParams.get('state'))
  return redirect.searchParams.get('code')!
}

/** The whole SDK flow: a first connect that ends in the redirect, the user's approval, finishAuth, and a connected client. */
async function authorizedClient(browser: TestClient, workspaceId: string, scopes?: string[]) {
  const provider = new MemoryProvider()
  const first = new Client({ name: 'chorus-oauth-test', version: '1.0.0' })
  const transport = transportFor(provider)
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError)
  expect(provider.authorizationUrl).toBeDefined()
  await transport.finishAuth(await approve(browser, provider.authorizationUrl!, workspaceId, scopes))
  expect(provider.saved?.access_token).toBeString()
  return { provider, client: await connect(provider) }
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args }) as { isError?: boolean; content: { type: string; text: string }[] }
  return { isError: result.isError === true, body: JSON.parse(result.content[0]!.text) }
}

const rawMcp = (token: string, body: unknown) => toPort(`${BASE}/mcp`, {
  method: 'POST',
  headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify(body),
})

/** A token for the REST API (not the MCP resource), through the same authorize → consent → token steps. */
async function apiToken(browser: TestClient, workspaceId: string) {
  const provider = new MemoryProvider()
  const transport = transportFor(provider)
  await expect(new Client({ name: 'x', version: '1' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError)
  const url = new URL(provider.authorizationUrl!)
  url.searchParams.set('resource', `${BASE}/api/v1`)
  const code = await approve(browser, url, workspaceId)
  const response = await toPort(`${BASE}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: provider.verifier!, client_id: provider.client!.client_id, resource: `${BASE}/api/v1` }),
  })
  expect(response.status).toBe(200)
  return (await response.json()).access_token as string
}

describe('happy', () => {
  test('the SDK client discovers, registers, is authorized by the admin, and uses the tools', async () => {
    requested.length = 0
    const provider = new MemoryProvider()
    const transport = transportFor(provider)
    await expect(new Client({ name: 'chorus-oauth-test', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError)
    // The SDK found its way from the 401 to registration and the authorize URL on its own.
    expect(requested).toEqual(expect.arrayContaining(['POST /mcp', 'GET /.well-known/oauth-protected-resource', 'POST /oauth/register']))
    expect(provider.client?.client_id).toBeString()
    const authorizationUrl = provider.authorizationUrl!
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${BASE}/mcp`)
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorizationUrl.searchParams.get('client_id')).toBe(provider.client!.client_id)

    await transport.finishAuth(await approve(ws.owner, authorizationUrl, ws.id))
    // A copy: bun's toMatchObject writes its matchers into the object it checks.
    expect({ ...provider.saved }).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i), access_token: expect.any(String), refresh_token: expect.any(String) })

    const client = await connect(provider)
    expect(client.getServerVersion()?.name).toBe('chorus')
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['search_posts', 'create_post', 'list_boards']))

    const created = await call(client, 'create_post', { board: 'ideas', title: 'Keyboard shortcuts for triage' })
    expect(created.isError).toBe(false)
    const [row] = await h.db.select().from(posts).where(eq(posts.id, created.body.id))
    expect(row).toMatchObject({ workspaceId: ws.id, title: 'Keyboard shortcuts for triage', authorUserId: ws.ownerId, authorKeyId: null })

    const found = await call(client, 'search_posts', { query: 'keyboard shortcuts' })
    expect(found.isError).toBe(false)
    expect(found.body.posts.map((post: { id: string }) => post.id)).toEqual([created.body.id])

    const [grant] = await h.db.select().from(oauthGrants).where(eq(oauthGrants.clientId, provider.client!.client_id))
    expect(grant).toMatchObject({ workspaceId: ws.id, userId: ws.ownerId, resource: `${BASE}/mcp` })
  })
})

describe('errors', () => {
  test('a token bound to the MCP resource is refused by the REST API', async () => {
    const { provider } = await authorizedClient(ws.owner, ws.id)
    const refused = await h.client().get('/api/v1/boards', { headers: bearer(provider.saved!.access_token) })
    expect(refused.status).toBe(401)
    expect(refused.body.code).toBe('INVALID_API_KEY')
  })

  test('a token bound to the REST API is refused by /mcp with an invalid_token challenge', async () => {
    const token = await apiToken(ws.owner, ws.id)
    expect((await h.client().get('/api/v1/boards', { headers: bearer(token) })).status).toBe(200)
    const refused = await rawMcp(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })
})

describe('security', () => {
  test('a revoked grant stops the SDK client at once: 401 invalid_token', async () => {
    const { provider, client } = await authorizedClient(ws.owner, ws.id)
    expect((await call(client, 'list_boards')).isError).toBe(false)
    const [grant] = await h.db.select().from(oauthGrants).where(eq(oauthGrants.clientId, provider.client!.client_id))
    const deleted = await ws.owner.delete(`/api/v1/oauth/grants/${grant!.id}`)
    expect(deleted.status).toBe(204)
    const raw = await rawMcp(provider.saved!.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(raw.status).toBe(401)
    expect(raw.headers.get('www-authenticate')).toContain('error="invalid_token"')
    // The SDK cannot recover by itself: its refresh of the revoked family is refused (invalid_grant).
    requested.length = 0
    const failed = await client.callTool({ name: 'list_boards', arguments: {} }).catch((error) => error)
    expect(failed).toBeInstanceOf(InvalidGrantError)
    expect(requested[0]).toBe('POST /mcp')
    expect(requested.filter((entry) => entry === 'POST /mcp')).toHaveLength(1)
    expect(requested).toContain('POST /oauth/token')
  })

  test('a token without posts:write gets 403 insufficient_scope naming it on create_post; nothing is written', async () => {
    const { provider, client } = await authorizedClient(ws.owner, ws.id, ['boards:read', 'posts:read'])
    expect(provider.saved!.scope?.split(' ').sort()).toEqual(['boards:read', 'posts:read'])
    expect((await call(client, 'search_posts', {})).isError).toBe(false)
    const before = await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))
    const raw = await rawMcp(provider.saved!.access_token, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'create_post', arguments: { board: 'ideas', title: 'Sneaky' } } })
    expect(raw.status).toBe(403)
    const challenge = raw.headers.get('www-authenticate')!
    expect(challenge).toContain('error="insufficient_scope"')
    expect(challenge).toContain('scope="posts:write"')
    // Through the SDK: it tries to step up by refreshing, is refused the same way, and gives up with the 403.
    const refused = await client.callTool({ name: 'create_post', arguments: { board: 'ideas', title: 'Sneaky' } }).catch((error) => error)
    expect(refused).toBeInstanceOf(StreamableHTTPError)
    expect((refused as StreamableHTTPError).code).toBe(403)
    // A refresh cannot widen the grant: the rotated token still lacks posts:write.
    expect(provider.saved!.scope?.split(' ').sort()).toEqual(['boards:read', 'posts:read'])
    expect(await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).toHaveLength(before.length)
  })
})
