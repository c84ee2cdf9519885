import { Elysia, type AnyElysia } from 'elysia'
import { readFileSync } from 'node:fs'
import { htmlResponse } from '../../lib/http-headers.ts'
import { buildOpenApiDocument } from './openapi.ts'

/**
 * The reference UI is Scalar's standalone browser bundle from our own pinned `@scalar/api-reference`,
 * served here, so /docs works offline and air-gapped. Its version is in the path: the file never
 * changes under one URL and can be cached for a year.
 */
const SCALAR_ENTRY = import.meta.resolve('@scalar/api-reference')
const SCALAR_VERSION = (JSON.parse(readFileSync(new URL('../package.json', SCALAR_ENTRY), 'utf8')) as { version: string }).version
const SCALAR_BUNDLE = new URL('browser/standalone.js', SCALAR_ENTRY).pathname
export const REFERENCE_SCRIPT_PATH = `/docs/assets/scalar-${SCALAR_VERSION}.js`

// No default fonts (they come from Scalar's font CDN), no telemetry, no proxy: the page talks only to this server.
const CONFIGURATION = JSON.stringify({ url: '/api/v1/openapi.json', withDefaultFonts: false, telemetry: false, hideClientButton: false, agent: { disabled: true } })

const referencePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Chorus API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><script id="api-reference" data-configuration="${CONFIGURATION.replaceAll('"', '&quot;')}"></script>
<script src="${REFERENCE_SCRIPT_PATH}"></script></body></html>`

/** Scripts only from this origin; the bundle injects its own styles (so inline styles are allowed) and fetches only the document. */
const REFERENCE_POLICY = { scripts: ["'self'"], styles: ["'unsafe-inline'"] }

/** `/api/v1/openapi.json` (also at `/api/openapi.json`, as every API path) and the interactive reference at `/docs`. The document is built once, on first use. */
export function docsModule(getApp: () => AnyElysia) {
  let document: ReturnType<typeof buildOpenApiDocument> | undefined
  const serve = () => (document ??= buildOpenApiDocument(getApp()))
  const hidden = { detail: { hide: true } }
  return new Elysia()
    .get('/api/v1/openapi.json', serve, hidden)
    .get('/docs', () => htmlResponse(referencePage, REFERENCE_POLICY), hidden)
    .get(REFERENCE_SCRIPT_PATH, () => new Response(Bun.file(SCALAR_BUNDLE), {
      headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable' },
    }), hidden)
}
