import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

describe('widget scripts: happy paths', () => {
  test('/widget.js: JavaScript, short cache with an ETag, 304 on revalidation, gzip when accepted', async () => {
    const res = await h.app.handle(new Request('http://localhost:3000/widget.js'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('public, max-age=300, stale-while-revalidate=86400')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const etag = res.headers.get('etag')!
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/)
    const code = await res.text()
    expect(code).toContain('Feedback')

    const again = await h.app.handle(new Request('http://localhost:3000/widget.js', { headers: { 'if-none-match': etag } }))
    expect(again.status).toBe(304)
    const zipped = await h.app.handle(new Request('http://localhost:3000/widget.js', { headers: { 'accept-encoding': 'gzip, br' } }))
    expect(zipped.headers.get('content-encoding')).toBe('gzip')
    expect(gunzipSync(new Uint8Array(await zipped.arrayBuffer())).toString()).toBe(code)
  })

  test('/widget-panel.js is immutable under its content hash, short-lived otherwise', async () => {
    const loader = await (await h.app.handle(new Request('http://localhost:3000/widget.js'))).text()
    const version = /widget-panel\.js\?v=([0-9a-f]{16})/.exec(loader)![1]
    const pinned = await h.app.handle(new Request(`http://localhost:3000/widget-panel.js?v=${version}`))
    expect(pinned.status).toBe(200)
    expect(pinned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(pinned.headers.get('etag')).toBe(`"${version}"`)
    const loose = await h.app.handle(new Request('http://localhost:3000/widget-panel.js?v=old'))
    expect(loose.headers.get('cache-control')).toBe('public, max-age=300, stale-while-revalidate=86400')
  })
})

describe('widget scripts: errors', () => {
  test('a stale ETag gets the full script; other script names are 404 in the common error body', async () => {
    const res = await h.app.handle(new Request('http://localhost:3000/widget.js', { headers: { 'if-none-match': '"0000000000000000"' } }))
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Feedback')
    for (const path of ['/widget-loader.js', '/widget-panel.js.map']) {
      const missing = await h.app.handle(new Request(`http://localhost:3000${path}`))
      expect(missing.status).toBe(404)
      expect((await missing.json()).code).toBe('NOT_FOUND')
    }
  })

  test('writes to the scripts are refused with the methods they take (405, docs/api.md#methods)', async () => {
    const res = await h.app.handle(new Request('http://localhost:3000/widget.js', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toContain('GET')
  })
})

describe('widget scripts: security', () => {
  test('public by design: any origin may load them, nothing is sniffed, and no cookie is set or needed', async () => {
    const res = await h.app.handle(new Request('http://localhost:3000/widget-panel.js', { headers: { origin: 'https://customer.example', cookie: 'access_token=whatever' } }))
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.getSetCookie()).toEqual([])
  })

  test('the scripts carry no server secret or configuration', async () => {
    const loader = await (await h.app.handle(new Request('http://localhost:3000/widget.js'))).text()
    const panel = await (await h.app.handle(new Request('http://localhost:3000/widget-panel.js'))).text()
    for (const code of [loader, panel]) {
      expect(code).not.toContain('test-secret-key-that-is-long-enough')
      expect(code).not.toContain('chorus_sk_')
    }
  })
})
