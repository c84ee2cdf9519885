import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gunzipSync } from 'node:zlib'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

describe('widget scripts', () => {
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
