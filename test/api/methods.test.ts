import { readFileSync } from 'node:fs'
// An API without surprises (issue 38): a wrong method is 405 with `Allow` wherever the path exists,
// a key on a dashboard-only route is 403 DASHBOARD_ONLY before its body is looked at, and the /docs
// bundle goes out compressed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { gunzipSync } from 'node:zlib'
import { apiKeys, boards, members } from '../../server/db/schema/index.ts'
import { REFERENCE_SCRIPT_PATH } from '../../server/modules/docs/index.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let key: string
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  key = await ws.key()
}, 60_000)
afterAll(() => h.close())

const bearer = (value: string) => ({ authorization: `Bearer ${value}` })

describe('405 with Allow', () => {
  test('a path that exists with other methods answers 405 in the error shape, naming them', async () => {
    const cases: [string, string, string][] = [
      ['PUT', '/api/v1/boards', 'GET, HEAD'],
      ['DELETE', '/api/v1/health', 'GET, HEAD'],
      ['POST', '/api/v1/boards/ideas', 'GET, HEAD'],
      ['GET', `/api/v1/workspaces/${ws.slug}/api-keys/key_x`, 'PATCH, DELETE'],
      ['PUT', '/api/v1/boards/ideas/posts', 'GET, HEAD, POST'],
      // The unversioned alias is the same table.
      ['PUT', '/api/boards/ideas/posts', 'GET, HEAD, POST'],
      // A public path: the CORS preflight (OPTIONS) is served there too.
      ['DELETE', `/api/v1/public/${ws.slug}`, 'GET, HEAD, OPTIONS'],
      // Outside the API: a portal page is read, a portal form posted (a GET to a form's address is the
      // portal's own 404 page, for browsers).
      ['DELETE', `/portal/${ws.slug}/roadmap`, 'GET, HEAD'],
      ['PUT', `/portal/${ws.slug}/posts/post_x/vote`, 'POST'],
    ]
    for (const [method, path, allow] of cases) {
      const res = await h.client().call(method, path, { headers: bearer(key) })
      expect(`${method} ${path} ${res.status} ${res.body?.code} ${res.headers.get('allow')}`).toBe(`${method} ${path} 405 METHOD_NOT_ALLOWED ${allow}`)
      expect(res.body.message).toContain(allow)
      expect(res.body.request_id).toMatch(/^req_/)
    }
  })

  test('a 405 runs no handler: a DELETE on the list of boards deletes nothing', async () => {
    const res = await h.client().call('DELETE', '/api/v1/boards', { headers: bearer(key) })
    expect(res.status).toBe(405)
    expect(await h.db.select().from(boards).where(eq(boards.workspaceId, ws.id))).toHaveLength(1)
  })

  test('a path that does not exist for any method is still 404, catch-all pages included', async () => {
    for (const [method, path] of [['GET', '/api/v1/nothing-here'], ['PUT', '/api/v1/nothing-here'], ['POST', `/portal/${ws.slug}/no-such-page`], ['DELETE', '/no-such-page']]) {
      const res = await h.client().call(method!, path!)
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 404`)
      expect(res.headers.get('allow')).toBeNull()
    }
  })

  test('a preflight to the private API is 405 and opens no CORS', async () => {
    const res = await h.client().call('OPTIONS', '/api/v1/boards', { headers: { origin: 'https://customer.example', 'access-control-request-method': 'GET' } })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('DASHBOARD_ONLY before body validation', () => {
  test('a key on a dashboard-only route is 403 DASHBOARD_ONLY whatever its body: missing, wrong types, unknown fields', async () => {
    const bodies: unknown[] = [undefined, {}, { name: 42, scopes: 'all' }, { name: 'k', scopes: ['posts:read'], extra: true }, []]
    for (const body of bodies) {
      const res = await h.client().call('POST', `/api/v1/workspaces/${ws.slug}/api-keys`, { headers: bearer(key), body })
      expect(`${JSON.stringify(body)} ${res.status} ${res.body.code}`).toBe(`${JSON.stringify(body)} 403 DASHBOARD_ONLY`)
    }
    const invalidMember = await h.client().call('POST', `/api/v1/workspaces/${ws.slug}/members`, { headers: { 'x-api-key': key }, body: { email: 'not an address', role: 'emperor' } })
    expect([invalidMember.status, invalidMember.body.code]).toEqual([403, 'DASHBOARD_ONLY'])
    const personal = await h.client().call('PATCH', '/api/v1/user/profile', { headers: bearer(key), body: { name: 7 } })
    expect([personal.status, personal.body.code]).toEqual([403, 'DASHBOARD_ONLY'])
    // Nothing was written.
    expect(await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, ws.id))).toHaveLength(1)
    expect(await h.db.select().from(members).where(eq(members.workspaceId, ws.id))).toHaveLength(1)
  })

  test('the same invalid bodies from the dashboard session are 422 (the check is about the credential)', async () => {
    const res = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/api-keys`, { name: 42, scopes: 'all' })
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('VALIDATION_ERROR')
  })

  test('an unknown or malformed key on a dashboard-only route is refused the same way (it is a key request)', async () => {
    for (const value of ['chorus_sk_not_a_real_key', 'nonsense']) {
      const res = await h.client().call('POST', `/api/v1/workspaces/${ws.slug}/api-keys`, { headers: bearer(value), body: {} })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('DASHBOARD_ONLY')
    }
  })

  test('a key on a key route still has its body validated (422) and its credential checked (401)', async () => {
    const invalid = await h.client().post('/api/v1/boards/ideas/posts', { title: 42 }, { headers: bearer(key) })
    expect(invalid.status).toBe(422)
    const unknown = await h.client().post('/api/v1/boards/ideas/posts', { title: 'x' }, { headers: bearer('chorus_sk_not_a_real_key') })
    expect(unknown.status).toBe(401)
  })
})

describe('/docs bundle', () => {
  test('served compressed (br, else gzip) with long caching and Vary; identity when asked for nothing', async () => {
    const plain = await h.app.handle(new Request(`http://localhost${REFERENCE_SCRIPT_PATH}`, { headers: { 'accept-encoding': 'identity' } }))
    const raw = new Uint8Array(await plain.arrayBuffer())
    expect(plain.headers.get('content-encoding')).toBeNull()
    expect(raw.length).toBeGreaterThan(3_000_000)

    const gzip = await h.app.handle(new Request(`http://localhost${REFERENCE_SCRIPT_PATH}`, { headers: { 'accept-encoding': 'gzip, deflate' } }))
    expect(gzip.headers.get('content-encoding')).toBe('gzip')
    expect(gzip.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(gzip.headers.get('vary')).toBe('accept-encoding')
    const zipped = new Uint8Array(await gzip.arrayBuffer())
    expect(zipped.length).toBeLessThan(raw.length / 3)
    expect(Buffer.from(gunzipSync(zipped)).equals(Buffer.from(raw))).toBe(true)

    const br = await h.app.handle(new Request(`http://localhost${REFERENCE_SCRIPT_PATH}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } }))
    expect(br.headers.get('content-encoding')).toBe('br')
    expect((await br.arrayBuffer()).byteLength).toBeLessThan(zipped.length)
    // br refused with q=0: gzip.
    const noBr = await h.app.handle(new Request(`http://localhost${REFERENCE_SCRIPT_PATH}`, { headers: { 'accept-encoding': 'br;q=0, gzip' } }))
    expect(noBr.headers.get('content-encoding')).toBe('gzip')
  })

  test('the vendored bundle is byte for byte the pinned dev dependency\'s (scripts/vendor-scalar.ts), and only a dev dependency', async () => {
    const entry = import.meta.resolve('@scalar/api-reference')
    const pinned = (JSON.parse(readFileSync(new URL('../package.json', entry), 'utf8')) as { version: string }).version
    expect(REFERENCE_SCRIPT_PATH).toBe(`/docs/assets/scalar-${pinned}.js`)
    const plain = await h.app.handle(new Request(`http://localhost${REFERENCE_SCRIPT_PATH}`, { headers: { 'accept-encoding': 'identity' } }))
    expect(Buffer.from(await plain.arrayBuffer()).equals(readFileSync(new URL('browser/standalone.js', entry)))).toBe(true)
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    expect(manifest.dependencies['@scalar/api-reference']).toBeUndefined()
    expect(manifest.devDependencies['@scalar/api-reference']).toBe(pinned)
  })

  test('the page offers nothing that leads to a hosted service', async () => {
    const page = await h.client().get('/docs')
    const configuration = JSON.parse(/data-configuration="([^"]+)"/.exec(page.body)![1]!.replaceAll('&quot;', '"'))
    expect(configuration).toMatchObject({ hideClientButton: true, showDeveloperTools: 'never', mcp: { disabled: true }, agent: { disabled: true }, telemetry: false, withDefaultFonts: false })
    expect(configuration.customCss).toContain('scalar.com')
  })
})
