import { toOpenAPISchema } from '@elysiajs/openapi'
import type { AnyElysia } from 'elysia'
import { ErrorSchema, ValidationErrorSchema } from './error-schemas.ts'
import { JSON_LIMITS } from '../../lib/json.ts'
import { IDEMPOTENCY_LEASE_SECONDS } from '../../plugins/idempotency.ts'
import { FLOOD_FACTOR } from '../../plugins/request.ts'
import { API_VERSION } from '../health/index.ts'
import { webhookOperations } from './webhooks.ts'

const errorResponse = (description: string, name = 'Error') => ({ description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } })

const DESCRIPTION = `Chorus is an API-first feedback and roadmap platform.

* Base URL: \`/api/v1\` (every route also answers at \`/api\`).
* Authentication: workspace API keys (\`Authorization: Bearer chorus_sk_...\` or \`X-API-Key\`) for servers; the \`access_token\` cookie for the dashboard. A request carrying both is treated as a key request.
* Errors share one body: \`{code, message, detail, request_id}\`; 422 lists issues in \`detail\` as \`{loc, msg, type}\`. Every response carries \`X-Request-Id\`.
* Times are ISO 8601 UTC with milliseconds; ids are prefixed, time-sortable strings; unknown request fields are rejected with 422.
* Cookie-authenticated writes must come from the service's own origin, the dashboard, or ALLOWED_ORIGINS (403 CSRF_REJECTED otherwise). The \`Origin\` header decides; without it \`Sec-Fetch-Site: same-origin\` or a \`Referer\` on one of those origins proves it, and a write with none of them is refused.
* Request bodies are \`application/json\` (or a \`+json\` type) unless an operation documents another type; anything else is 415 UNSUPPORTED_MEDIA_TYPE. A body nesting objects and arrays deeper than ${JSON_LIMITS.maxDepth} levels, with more than ${JSON_LIMITS.maxItems} members in one object or array, or with a string longer than ${JSON_LIMITS.maxString} characters is 422 before it is parsed.
* Text is Unicode: a body that is not valid UTF-8, and a string (in the body, the query or the path) holding NUL or a lone surrogate, are 422 VALIDATION_ERROR, never stored altered.
* \`Idempotency-Key\` on POST replays the first response for 24 hours; while the first request runs a twin is 409 CONFLICT, for at most ${IDEMPOTENCY_LEASE_SECONDS} s (the claim's lease: a request that died with its process does not lock its key longer).
* Unauthenticated writes are limited per client IP before their body is read (${FLOOD_FACTOR} times RATE_LIMIT_PER_IP a minute across all routes, besides each route's own limit). A lost database connection is 503 SERVICE_UNAVAILABLE with \`Retry-After\`, and so is a request whose e-mail (a sign-in link, a confirmation) the mail server did not take within SMTP_SEND_TIMEOUT_SECONDS.
* Responses carry \`X-Content-Type-Options: nosniff\`; responses to requests with credentials \`Cache-Control: no-store\`; HSTS when the service runs on https.`

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

/** Routes outside `/api` that are documented too, at fixed places by protocol (OAuth, MCP, RFC 9728 metadata); each names its own server. */
const ROOT_ROUTES = /^\/(oauth\/|mcp$|\.well-known\/)/

/**
 * Schemas declared with `$id` (`t.Object({...}, { $id: 'Post' })`) become named components, each use
 * a `$ref`, so the SDK gets `components['schemas']['Post']` instead of anonymous inline objects. The
 * `$id` itself is dropped: in JSON Schema 2020-12 it would rebase every `$ref` inside the schema.
 * Two different schemas under one name are a programming error, caught here when the document is built.
 */
function hoistNamedSchemas(node: unknown, schemas: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => hoistNamedSchemas(item, schemas))
  if (!node || typeof node !== 'object') return node
  const { $id, ...rest } = node as Json
  const hoisted = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, hoistNamedSchemas(value, schemas)]))
  if (typeof $id !== 'string') return hoisted
  const name = $id
  if (name in schemas && JSON.stringify(schemas[name]) !== JSON.stringify(hoisted)) {
    throw new Error(`OpenAPI: two different schemas are named ${name}:\n${JSON.stringify(schemas[name])}\n${JSON.stringify(hoisted)}`)
  }
  schemas[name] = hoisted
  return { $ref: `#/components/schemas/${name}` }
}

/**
 * t.Nullable over an enum (or a literal) comes out as `type: [string, null]` with `enum` listing only the
 * strings (or `const`): under OpenAPI 3.1 (JSON Schema) that refuses null, so null is added to it.
 */
function nullableEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableEnums)
  if (!node || typeof node !== 'object') return node
  const object = Object.fromEntries(Object.entries(node as Json).map(([key, value]) => [key, nullableEnums(value)])) as Json
  const types = object.type
  const nullable = object.nullable === true || (Array.isArray(types) && types.includes('null'))
  if (Array.isArray(object.enum) && !object.enum.includes(null) && nullable) object.enum = [...object.enum, null]
  // The same for a nullable literal: `const` alone refuses null too.
  if (nullable && 'const' in object && object.const !== null) {
    object.enum = [object.const, null]
    delete object.const
  }
  // `nullable` is OpenAPI 3.0's spelling; beside 3.1's `type: [..., 'null']` it made generated types
  // read `((string | null) | null) | null`. One spelling: the 3.1 one.
  if (object.nullable === true) {
    delete object.nullable
    if (typeof types === 'string') object.type = [types, 'null']
  }
  return object
}

/**
 * JSON bodies are parsed by one global parse hook (plugins/request.ts). The generator takes any parse
 * hook as "this route declares its own media types" and, finding no name it knows, lists none; so it
 * sees the routes without function hooks. Declared parsers (`parse: 'text'`) stay and are documented.
 */
function withDeclaredParsersOnly(app: AnyElysia): AnyElysia {
  type Route = { hooks: { parse?: { fn: unknown }[] } & Record<string, unknown> }
  // Both methods are what toOpenAPISchema reads; Elysia marks them protected.
  const source = app as unknown as { getGlobalDefinitions?(): unknown; getGlobalRoutes(): Route[] }
  const declared = (route: Route) => {
    const parse = (route.hooks.parse ?? []).filter((hook) => typeof hook.fn === 'string')
    return { ...route, hooks: { ...route.hooks, parse: parse.length ? parse : undefined } }
  }
  return { getGlobalDefinitions: () => source.getGlobalDefinitions?.(), getGlobalRoutes: () => source.getGlobalRoutes().map(declared) } as unknown as AnyElysia
}

/** The OpenAPI 3.1 document generated from the route schemas, with paths relative to the `/api/v1` server. */
export function buildOpenApiDocument(app: AnyElysia) {
  const generated = nullableEnums(collapseNumericCoercion(toOpenAPISchema(withDeclaredParsersOnly(app), { paths: [/^(?!\/api\/v1\/|\/oauth\/|\/mcp$|\/\.well-known\/)/, /^\/api\/v1\/openapi\.json$/], staticFile: false }, undefined, undefined, '3.1.0'))) as ReturnType<typeof toOpenAPISchema>
  const paths: Record<string, Record<string, Record<string, unknown>>> = {}
  for (const [path, operations] of Object.entries(generated.paths)) {
    const atRoot = ROOT_ROUTES.test(path)
    const relative = atRoot ? path : path.slice('/api/v1'.length) || '/'
    const cleaned: Record<string, Record<string, unknown>> = {}
    for (const [method, operation] of Object.entries(operations as Record<string, Record<string, unknown>>)) {
      const responses = (operation.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>
      // t.Void() (204) comes out as `content: {type: "void"}`, which is not a media-type map: a 204 has no body.
      for (const response of Object.values(responses)) {
        if (response.content && Object.keys(response.content).some((type) => !type.includes('/'))) delete response.content
      }
      // Elysia lists form encodings for every object body; the JSON parser answers them with 415.
      const body = operation.requestBody as { content?: Record<string, unknown> } | undefined
      if (body?.content?.['application/json']) body.content = { 'application/json': body.content['application/json'] }
      const hasInput = Boolean(operation.requestBody) || (Array.isArray(operation.parameters) && operation.parameters.length > 0)
      if (hasInput && !atRoot) responses['422'] ??= errorResponse('Validation failed (HTTPValidationError)', 'HTTPValidationError')
      responses['4XX'] ??= errorResponse('Client error in the common error shape')
      responses['500'] ??= errorResponse('Internal error (no stack trace or SQL in the body)')
      // Routes that call a chat, tracker or identity provider say so with `x-upstream-error` in their detail.
      if (operation['x-upstream-error']) responses['502'] ??= errorResponse("UPSTREAM_ERROR: the provider refused or failed; `detail` carries the provider's own error")
      cleaned[method] = atRoot ? { servers: [{ url: '/' }], ...operation, responses } : { ...operation, responses }
    }
    paths[relative] = cleaned
  }
  const schemas: Record<string, unknown> = {}
  hoistNamedSchemas([ErrorSchema, ValidationErrorSchema], schemas)
  const namedPaths = hoistNamedSchemas(paths, schemas)
  const webhooks = hoistNamedSchemas(nullableEnums(collapseNumericCoercion(webhookOperations())), schemas)
  return {
    openapi: '3.1.0',
    info: { title: 'Chorus API', version: API_VERSION, description: DESCRIPTION, license: { name: 'MIT' } },
    servers: [{ url: '/api/v1' }],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }, { cookieAuth: [] }],
    paths: Object.fromEntries(Object.entries(namedPaths as typeof paths).sort(([a], [b]) => a.localeCompare(b))),
    webhooks,
    components: {
      schemas: Object.fromEntries(Object.entries({ ...generated.components.schemas, ...schemas }).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Workspace API key `chorus_sk_...` (preferred form)' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Workspace API key, alternative header' },
        cookieAuth: { type: 'apiKey', in: 'cookie', name: 'access_token', description: 'Dashboard session (15-minute JWT)' },
        refreshCookie: { type: 'apiKey', in: 'cookie', name: 'refresh_token', description: 'Opaque rotating refresh token, 30 days' },
        widgetSession: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "End-user session token (24 h) from identify, a visitor claim or an anonymous write's `Chorus-Session-Token` header; only the public routes accept it (writes act as that end user, reads add `voted`)" },
      },
    },
  }
}
