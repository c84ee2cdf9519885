import { readFileSync } from 'node:fs'
import { Elysia } from 'elysia'
import { htmlResponse } from '../../lib/http-headers.ts'
import { brotliBundle, plainBundle, SCALAR_VERSION } from './bundle.ts'

/**
 * The reference UI is Scalar's standalone browser bundle, vendored from our pinned `@scalar/api-reference`
 * (bundle.ts) and served here, so /docs works offline and air-gapped. Its version is in the path: the
 * file never changes under one URL and can be cached for a year.
 */
export const REFERENCE_SCRIPT_PATH = `/docs/assets/scalar-${SCALAR_VERSION}.js`

/**
 * No default fonts (they come from Scalar's font CDN), no telemetry, no proxy: the page talks only to
 * this server. Nor does it offer what leads to Scalar's hosted services: the "Open API Client" button
 * (client.scalar.com), the developer tools (deploy, share), MCP generation, the AI agent, and the
 * "Powered by Scalar" link (hidden by CSS: the bundle has no option for it). "Test Request" stays: it
 * opens the built-in client, which sends requests to this server.
 */
const CONFIGURATION = JSON.stringify({
  url: '/api/v1/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  mcp: { disabled: true },
  agent: { disabled: true },
  customCss: 'a[href*="scalar.com"] { display: none !important; }',
})

const referencePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Chorus API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><script id="api-reference" data-configuration="${CONFIGURATION.replaceAll('"', '&quot;')}"></script>
<script src="${REFERENCE_SCRIPT_PATH}"></script></body></html>`

/** Scripts only from this origin; the bundle injects its own styles (so inline styles are allowed) and fetches only the document. */
const REFERENCE_POLICY = { scripts: ["'self'"], styles: ["'unsafe-inline'"] }

/**
 * The OpenAPI document as committed: sdk/openapi.json is generated from the route schemas at build time
 * (`npm run openapi`; CI's `openapi:check` and test/api/openapi.test.ts fail when it differs from what
 * the routes generate). Serving that file rather than generating it keeps the generator
 * (`@elysiajs/openapi`, and `typescript`, its required peer: 25 MB) out of a production install.
 */
export const OPENAPI_DOCUMENT_FILE = new URL('../../../sdk/openapi.json', import.meta.url)

/** `/api/v1/openapi.json` (also at `/api/openapi.json`, as every API path) and the interactive reference at `/docs`. The document is read once, on first use. */
export function docsModule() {
  let document: string | undefined
  // Re-serialised once without the file's indentation (a third smaller on the wire).
  const serve = () => new Response((document ??= JSON.stringify(JSON.parse(readFileSync(OPENAPI_DOCUMENT_FILE, 'utf8')))), { headers: { 'content-type': 'application/json;charset=utf-8' } })
  const hidden = { detail: { hide: true } }
  return new Elysia()
    .get('/api/v1/openapi.json', serve, hidden)
    .get('/docs', () => htmlResponse(referencePage, REFERENCE_POLICY), hidden)
    .get(REFERENCE_SCRIPT_PATH, ({ request }) => serveBundle(request.headers.get('accept-encoding') ?? ''), hidden)
}

/**
 * The 4.3 MB bundle is vendored as Brotli (0.9 MB, quality 11) and sent as is to the clients that take it;
 * gzip (made on the first request that asks for it) and identity are decompressed from it once per process.
 */
const gzipped: { body?: Uint8Array<ArrayBuffer> } = {}

function serveBundle(acceptEncoding: string) {
  const headers: Record<string, string> = { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable', vary: 'accept-encoding' }
  const accepts = (name: string) => new RegExp(`(^|[,\\s])${name}(?!;\\s*q=0(\\.0*)?(\\s|,|$))`, 'i').test(acceptEncoding)
  if (accepts('br')) return new Response(brotliBundle(), { headers: { ...headers, 'content-encoding': 'br' } })
  if (accepts('gzip')) return new Response((gzipped.body ??= new Uint8Array(Bun.gzipSync(plainBundle(), { level: 6 }))), { headers: { ...headers, 'content-encoding': 'gzip' } })
  return new Response(plainBundle(), { headers })
}
