import { Elysia, type AnyElysia } from 'elysia'
import { buildOpenApiDocument } from './openapi.ts'

const referencePage = (specUrl: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Chorus API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><script id="api-reference" data-url="${specUrl}"></script>
<script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference"></script></body></html>`

/** `/api/v1/openapi.json`, `/api/openapi.json` and the interactive reference at `/docs`. The document is built once, on first use. */
export function docsModule(getApp: () => AnyElysia) {
  let document: ReturnType<typeof buildOpenApiDocument> | undefined
  const serve = () => (document ??= buildOpenApiDocument(getApp()))
  const hidden = { detail: { hide: true } }
  return new Elysia()
    .get('/api/v1/openapi.json', serve, hidden)
    .get('/api/openapi.json', serve, hidden)
    .get('/docs', () => new Response(referencePage('/api/v1/openapi.json'), { headers: { 'content-type': 'text/html; charset=utf-8' } }), hidden)
}
