import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { and, eq } from 'drizzle-orm'
import { comments, labels, posts, statuses, votes } from '../../server/db/schema/index.ts'
import { BASE, startHarness, type Harness } from '../helpers/harness.ts'
import { boardFixture, labelFixture, setSubscription, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { insertPost } from '../helpers/posts.ts'

// The MCP SDK's own client over its Streamable HTTP transport, against the app on a real loopback port.

let h: Harness
let server: ReturnType<typeof Bun.serve>
let url: string
let a: WorkspaceFixture
let b: WorkspaceFixture
let fullKey: string
const clients: Client[] = []

beforeAll(async () => {
  h = await startHarness()
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => h.app.handle(request) })
  url = `http://127.0.0.1:${server.port}`
  a = await workspaceFixture(h)
  b = await workspaceFixture(h)
  fullKey = await a.key()
}, 60_000)
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {})
  server.stop(true)
  await h.close()
})

async function connect(key?: string) {
  const client = new Client({ name: 'chorus-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : undefined)
  await client.connect(transport)
  clients.push(client)
  return client
}

/** Calls a tool and parses its JSON text result. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args }) as { isError?: boolean; content: { type: string; text: string }[] }
  return { isError: result.isError === true, body: JSON.parse(result.content[0]!.text) }
}

const rawMcp = (headers: Record<string, string>, body: unknown) => fetch(`${url}/mcp`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  body: JSON.stringify(body),
})

describe('happy', () => {
  test('protected-resource metadata names the MCP resource, this server as the authorization server, and the scopes', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const response = await h.client().get(path)
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ resource: `${BASE}/mcp`, authorization_servers: [BASE], bearer_methods_supported: ['header'] })
      expect(response.body.scopes_supported).toContain('posts:write')
    }
  })

  test('the client lists the ten tools, each described with its scope and an input schema', async () => {
    const client = await connect(fullKey)
    expect(client.getServerVersion()?.name).toBe('chorus')
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual(['comment_on_post', 'create_post', 'draft_changelog_entry', 'find_duplicates', 'get_post', 'list_boards', 'list_changelog_entries', 'merge_posts', 'search_posts', 'update_post', 'vote_on_post'])
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(60)
      expect(tool.description).toMatch(/Needs the [a-z]+:(read|write) scope/)
      expect(tool.inputSchema.type).toBe('object')
    }
    expect(tools.find((tool) => tool.name === 'get_post')!.annotations?.readOnlyHint).toBe(true)
    expect(Object.keys(tools.find((tool) => tool.name === 'create_post')!.inputSchema.properties!)).toEqual(expect.arrayContaining(['board', 'title', 'body', 'labels', 'email']))
  })

  test('changelog tools draft an entry (never published) and list it', async () => {
    const client = await connect(fullKey)
    const drafted = await call(client, 'draft_changelog_entry', { title: 'Drafted by an assistant', body: 'Hello <b>there</b>' })
    expect(drafted.isError).toBe(false)
    expect(drafted.body).toMatchObject({ title: 'Drafted by an assistant', published_at: null, post_ids: [] })
    expect(drafted.body.url).toBe(`${BASE}/portal/${a.slug}/changelog#${drafted.body.id}`)
    const listed = await call(client, 'list_changelog_entries', { state: 'draft' })
    expect(listed.body.entries.map((entry: any) => entry.id)).toContain(drafted.body.id)
    const readOnly = await connect(await a.key(['changelog:read']))
    const refused = await readOnly.callTool({ name: 'draft_changelog_entry', arguments: { title: 'No' } }).catch((error: Error) => error)
    expect(String((refused as any)?.message ?? JSON.stringify(refused))).toMatch(/insufficient_scope|403|changelog:write/)
  })

  test('every tool works through the services: list, create, search, get, update, comment, vote, merge', async () => {
    await boardFixture(h, a.id, 'ideas')
    await labelFixture(h, a.id, 'ux')
    const client = await connect(fullKey)

    const boards = await call(client, 'list_boards')
    expect(boards.isError).toBe(false)
    expect(boards.body).toEqual([{ slug: 'ideas', name: 'Ideas', description: null, is_private: false, post_count: 0 }])

    const created = await call(client, 'create_post', { board: 'ideas', title: 'Dark mode for the dashboard', body: 'Our team works at night', email: 'night@customer.example' })
    expect(created.isError).toBe(false)
    expect(created.body).toMatchObject({ title: 'Dark mode for the dashboard', board: 'ideas', status: 'Open', votes: 0, author: expect.any(String) })
    expect(created.body.url).toBe(`${BASE}/portal/${a.slug}/posts/${created.body.id}`)
    const [row] = await h.db.select().from(posts).where(eq(posts.id, created.body.id))
    expect(row?.workspaceId).toBe(a.id)

    const found = await call(client, 'search_posts', { query: 'dark mode' })
    expect(found.body.posts.map((post: { id: string }) => post.id)).toEqual([created.body.id])
    const inBoard = await call(client, 'search_posts', { board: 'ideas', query: 'night' })
    expect(inBoard.body.posts).toHaveLength(1)
    expect((await call(client, 'search_posts', { query: 'spreadsheet export' })).body.posts).toEqual([])
    // Duplicates of a draft, and search in another language (German stems, unaccented).
    const similar = await call(client, 'find_duplicates', { title: 'Dark theme for the dashboard', body: 'We work at night' })
    expect(similar.isError).toBe(false)
    expect(similar.body.candidates[0]).toMatchObject({ post: { id: created.body.id }, score: expect.any(Number), reasons: expect.arrayContaining([expect.stringContaining('shared terms')]) })
    expect((await call(client, 'find_duplicates', { post_id: created.body.id })).body.candidates).toEqual([])
    expect((await call(client, 'find_duplicates', {})).isError).toBe(true)
    const german = await call(client, 'create_post', { board: 'ideas', title: 'Größere Schrift in den Einstellungen', body: 'Die Schrift ist zu klein' })
    expect((await call(client, 'search_posts', { query: 'grosse schriften' })).body.posts.map((post: { id: string }) => post.id)).toEqual([german.body.id])

    const got = await call(client, 'get_post', { post_id: created.body.id })
    expect(got.body).toMatchObject({ id: created.body.id, body: 'Our team works at night', merged_into: null })

    const updated = await call(client, 'update_post', { post_id: created.body.id, status: 'planned', labels: ['ux'] })
    expect(updated.isError).toBe(false)
    expect(updated.body).toMatchObject({ status: 'Planned', labels: ['ux'] })
    const [planned] = await h.db.select().from(statuses).where(and(eq(statuses.workspaceId, a.id), eq(statuses.id, (await h.db.select().from(posts).where(eq(posts.id, created.body.id)))[0]!.statusId)))
    expect(planned?.name).toBe('Planned')

    const comment = await call(client, 'comment_on_post', { post_id: created.body.id, body: 'Planned for Q3' })
    expect(comment.body).toMatchObject({ post_id: created.body.id, internal: false, url: created.body.url })
    expect(await h.db.select().from(comments).where(eq(comments.id, comment.body.id))).toHaveLength(1)

    const vote = await call(client, 'vote_on_post', { post_id: created.body.id, email: 'fan@customer.example' })
    expect(vote.body).toMatchObject({ post_id: created.body.id, voted: true, votes: 1 })
    expect(await h.db.select().from(votes).where(eq(votes.postId, created.body.id))).toHaveLength(1)

    const duplicate = await call(client, 'create_post', { board: 'ideas', title: 'Night theme please' })
    const merged = await call(client, 'merge_posts', { post_id: duplicate.body.id, into_post_id: created.body.id })
    expect(merged.isError).toBe(false)
    expect(merged.body.merged).toMatchObject({ id: duplicate.body.id, merged_into: created.body.id })
    expect(merged.body.into.id).toBe(created.body.id)
    const [source] = await h.db.select().from(posts).where(eq(posts.id, duplicate.body.id))
    expect(source?.mergedIntoId).toBe(created.body.id)
  })
})

describe('errors', () => {
  test('without a credential: 401 with the resource_metadata challenge, and the SDK client cannot connect', async () => {
    const response = await rawMcp({}, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource"`)
    expect(await response.json()).toMatchObject({ code: 'UNAUTHENTICATED', request_id: expect.any(String) })
    await expect(connect()).rejects.toThrow()
  })

  test('a malformed key is 401 invalid_token', async () => {
    const response = await rawMcp({ authorization: 'Bearer chorus_sk_nope' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  test('a body that is not JSON is 400 in the error shape, a JSON scalar an invalid JSON-RPC request; GET (no event stream) is 405', async () => {
    const headers = { authorization: `Bearer ${fullKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const bad = await fetch(`${url}/mcp`, { method: 'POST', headers, body: '{"jsonrpc":' })
    expect(bad.status).toBe(400)
    expect((await bad.json()).code).toBe('BAD_REQUEST')
    const scalar = await fetch(`${url}/mcp`, { method: 'POST', headers, body: '42' })
    expect(scalar.status).toBe(400)
    expect((await scalar.json()).error.code).toBe(-32600)
    const stream = await fetch(`${url}/mcp`, { headers: { authorization: `Bearer ${fullKey}`, accept: 'text/event-stream' } })
    expect(stream.status).toBe(405)
    expect(stream.headers.get('allow')).toBe('POST')
  })

  test('errors inside a tool come back as tool errors in the error shape: unknown post, unknown board, unknown status, invalid arguments', async () => {
    const client = await connect(fullKey)
    const missing = await call(client, 'get_post', { post_id: 'post_doesnotexist' })
    expect(missing).toEqual({ isError: true, body: { code: 'NOT_FOUND', message: 'Post not found' } })
    expect((await call(client, 'create_post', { board: 'nope', title: 'x' })).body.code).toBe('NOT_FOUND')
    const status = await call(client, 'search_posts', { board: 'ideas', status: 'no-such-status' })
    expect(status.body).toMatchObject({ code: 'VALIDATION_ERROR', detail: [{ loc: ['arguments', 'status'] }] })
    const invalid = await client.callTool({ name: 'create_post', arguments: { board: 'ideas', title: '' } })
    expect(invalid.isError).toBe(true)
    expect(await h.db.select().from(posts).where(eq(posts.title, ''))).toHaveLength(0)
    const voter = await call(client, 'vote_on_post', { post_id: (await call(client, 'search_posts', {})).body.posts[0].id })
    expect(voter.body).toMatchObject({ code: 'VALIDATION_ERROR' })
  })
})

describe('security', () => {
  test('a tool whose scope the key lacks is 403 insufficient_scope naming it; nothing is written', async () => {
    const readOnly = await a.key(['boards:read', 'posts:read'], 'read only')
    const client = await connect(readOnly)
    expect((await call(client, 'list_boards')).isError).toBe(false)
    const before = await h.db.select().from(posts).where(eq(posts.workspaceId, a.id))
    const refused = await client.callTool({ name: 'create_post', arguments: { board: 'ideas', title: 'Sneaky' } }).catch((error) => error)
    expect(refused).toBeInstanceOf(StreamableHTTPError)
    expect((refused as StreamableHTTPError).code).toBe(403)

    const raw = await rawMcp({ authorization: `Bearer ${readOnly}` }, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'vote_on_post', arguments: { post_id: before[0]!.id, email: 'x@example.com' } } })
    expect(raw.status).toBe(403)
    expect(raw.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource", error="insufficient_scope", scope="votes:write"`)
    expect(await raw.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'votes:write' })
    expect(await h.db.select().from(posts).where(eq(posts.workspaceId, a.id))).toHaveLength(before.length)

    const internal = await a.key(['posts:read', 'comments:write'], 'no internal')
    const note = await call(await connect(internal), 'comment_on_post', { post_id: before[0]!.id, body: 'secret', internal: true })
    expect(note.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'comments:internal' })
  })

  test('a key of another workspace sees none of its posts and cannot merge across workspaces', async () => {
    const board = await boardFixture(h, b.id, 'ideas')
    const theirs = await insertPost(h, b.id, board.id, { title: 'Workspace B only' })
    const client = await connect(fullKey)
    expect((await call(client, 'get_post', { post_id: theirs.id })).body.code).toBe('NOT_FOUND')
    expect((await call(client, 'update_post', { post_id: theirs.id, status: 'planned' })).body.code).toBe('NOT_FOUND')
    expect((await call(client, 'comment_on_post', { post_id: theirs.id, body: 'hi' })).body.code).toBe('NOT_FOUND')
    const ours = (await call(client, 'search_posts', {})).body.posts[0].id
    expect((await call(client, 'merge_posts', { post_id: ours, into_post_id: theirs.id })).body.code).toBe('NOT_FOUND')
    const search = await call(client, 'search_posts', { query: 'Workspace B only' })
    expect(search.body.posts).toEqual([])
    const [unchanged] = await h.db.select().from(posts).where(eq(posts.id, theirs.id))
    expect(unchanged?.statusId).toBe(theirs.statusId)
    expect(await h.db.select().from(comments).where(eq(comments.postId, theirs.id))).toHaveLength(0)
    expect(await h.db.select().from(labels).where(eq(labels.workspaceId, b.id))).toHaveLength(0)
  })

  test('a revoked key stops at once: 401 invalid_token on the next request', async () => {
    const key = await a.key(['boards:read'], 'to revoke')
    const client = await connect(key)
    expect((await call(client, 'list_boards')).isError).toBe(false)
    const listed = await a.owner.get(`/api/v1/workspaces/${a.slug}/api-keys`)
    const id = listed.body.find((entry: { name: string }) => entry.name === 'to revoke').id
    expect((await a.owner.delete(`/api/v1/workspaces/${a.slug}/api-keys/${id}`)).status).toBe(204)
    const refused = await client.callTool({ name: 'list_boards', arguments: {} }).catch((error) => error)
    expect((refused as StreamableHTTPError).code).toBe(401)
    const raw = await rawMcp({ authorization: `Bearer ${key}` }, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(raw.status).toBe(401)
    expect(raw.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  test('tools stop when the subscription is no longer active (the gate of the REST twins)', async () => {
    const c = await workspaceFixture(h)
    await boardFixture(h, c.id, 'ideas')
    const key = await c.key()
    await setSubscription(h, c.id, { subscriptionStatus: 'canceled' })
    const client = await connect(key)
    expect((await call(client, 'create_post', { board: 'ideas', title: 'After lapse' })).body.code).toBe('SUBSCRIPTION_INACTIVE')
    expect(await h.db.select().from(posts).where(eq(posts.workspaceId, c.id))).toHaveLength(0)
  })
})
