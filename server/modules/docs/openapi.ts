import { toOpenAPISchema } from '@elysiajs/openapi'
import type { AnyElysia } from 'elysia'
import { API_VERSION } from '../health/index.ts'

const ERROR_SCHEMA = {
  type: 'object',
  description: 'The body of every 4xx and 5xx response (CONTRACT §3). `detail` repeats `message`, or on 422 lists the validation issues.',
  required: ['code', 'message', 'detail', 'request_id'],
  properties: {
    code: { type: 'string', description: 'Stable machine-readable code such as NOT_FOUND, VALIDATION_ERROR, INSUFFICIENT_SCOPE' },
    message: { type: 'string' },
    detail: {},
    request_id: { type: 'string' },
    required_scope: { type: 'string', description: 'Only on INSUFFICIENT_SCOPE' },
  },
}

const VALIDATION_SCHEMA = {
  type: 'object',
  description: 'HTTPValidationError: 422 VALIDATION_ERROR',
  required: ['code', 'message', 'detail', 'request_id'],
  properties: {
    code: { type: 'string', enum: ['VALIDATION_ERROR', 'IDEMPOTENCY_MISMATCH'] },
    message: { type: 'string' },
    request_id: { type: 'string' },
    detail: {
      type: 'array',
      items: {
        type: 'object',
        required: ['loc', 'msg', 'type'],
        properties: { loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } }, msg: { type: 'string' }, type: { type: 'string' } },
      },
    },
  },
}

const errorResponse = (description: string, schema = '#/components/schemas/Error') => ({ description, content: { 'application/json': { schema: { $ref: schema } } } })

const DESCRIPTION = `Chorus is an API-first feedback and roadmap platform.

* Base URL: \`/api/v1\` (every route also answers at \`/api\`).
* Authentication: workspace API keys (\`Authorization: Bearer chorus_sk_...\` or \`X-API-Key\`) for servers; the \`access_token\` cookie for the dashboard. A request carrying both is treated as a key request.
* Errors share one body: \`{code, message, detail, request_id}\`; 422 lists issues in \`detail\` as \`{loc, msg, type}\`. Every response carries \`X-Request-Id\`.
* Times are ISO 8601 UTC with milliseconds; ids are prefixed, time-sortable strings; unknown request fields are rejected with 422.
* Cookie-authenticated writes must come from the service's own origin, the dashboard, or ALLOWED_ORIGINS (403 CSRF_REJECTED otherwise).`

type Json = Record<string, unknown>

/**
 * Elysia documents t.Integer/t.Number as `anyOf: [{type: string, format: integer}, {type: integer}]`,
 * its own coercion detail. Clients should see the declared type, so the string branch is dropped.
 */
function collapseNumericCoercion(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(collapseNumericCoercion)
  if (!node || typeof node !== 'object') return node
  const object = node as Json
  const anyOf = object.anyOf as Json[] | undefined
  if (anyOf?.length === 2) {
    const coerced = anyOf.findIndex((branch) => branch.type === 'string' && ['integer', 'number', 'numeric'].includes(branch.format as string))
    if (coerced !== -1) {
      const { anyOf: _, ...rest } = object
      return collapseNumericCoercion({ ...rest, ...anyOf[1 - coerced] })
    }
  }
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, collapseNumericCoercion(value)]))
}

/** The OpenAPI 3.1 document generated from the route schemas, with paths relative to the `/api/v1` server. */
export function buildOpenApiDocument(app: AnyElysia) {
  const generated = collapseNumericCoercion(toOpenAPISchema(app, { paths: [/^(?!\/api\/v1\/)/, /^\/api\/v1\/openapi\.json$/] }, undefined, undefined, '3.1.0')) as ReturnType<typeof toOpenAPISchema>
  const paths: Record<string, Record<string, Record<string, unknown>>> = {}
  for (const [path, operations] of Object.entries(generated.paths)) {
    const relative = path.slice('/api/v1'.length) || '/'
    const cleaned: Record<string, Record<string, unknown>> = {}
    for (const [method, operation] of Object.entries(operations as Record<string, Record<string, unknown>>)) {
      const responses = (operation.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>
      // t.Void() (204) comes out as `content: {type: "void"}`, which is not a media-type map: a 204 has no body.
      for (const response of Object.values(responses)) {
        if (response.content && Object.keys(response.content).some((type) => !type.includes('/'))) delete response.content
      }
      const hasInput = Boolean(operation.requestBody) || (Array.isArray(operation.parameters) && operation.parameters.length > 0)
      if (hasInput) responses['422'] ??= errorResponse('Validation failed (HTTPValidationError)', '#/components/schemas/HTTPValidationError')
      responses['4XX'] ??= errorResponse('Client error in the common error shape')
      responses['500'] ??= errorResponse('Internal error (no stack trace or SQL in the body)')
      cleaned[method] = { ...operation, responses }
    }
    paths[relative] = cleaned
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Chorus API', version: API_VERSION, description: DESCRIPTION, license: { name: 'MIT' } },
    servers: [{ url: '/api/v1' }],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }, { cookieAuth: [] }],
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      schemas: { ...generated.components.schemas, Error: ERROR_SCHEMA, HTTPValidationError: VALIDATION_SCHEMA },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Workspace API key `chorus_sk_...` (preferred form)' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Workspace API key, alternative header' },
        cookieAuth: { type: 'apiKey', in: 'cookie', name: 'access_token', description: 'Dashboard session (15-minute JWT)' },
        refreshCookie: { type: 'apiKey', in: 'cookie', name: 'refresh_token', description: 'Opaque rotating refresh token, 30 days' },
        widgetSession: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'End-user session token from identify (24 h); only the public write routes accept it' },
      },
    },
  }
}
