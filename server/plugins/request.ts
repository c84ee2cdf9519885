import { beginRequestEffects } from '../db/effects.ts'
import { Elysia, type AnyElysia } from 'elysia'
import { perApp, type AppContext } from '../context.ts'
import { ApiError, invalid } from '../errors.ts'
import { carriesCredentialHeader, carriesSessionCookie, setSecurityHeaders } from '../lib/http-headers.ts'
import { newId } from '../lib/ids.ts'
import { readBodyCapped } from '../lib/body.ts'
import { parseJsonBody } from '../lib/json.ts'
import { formDecode, textProblem } from '../lib/text.ts'
import { carriesKey } from './credentials.ts'
import { enforceRateLimit } from './rate-limit.ts'

export const JSON_BODY_LIMIT = 1024 * 1024
/** Multipart requests carry one image of at most 2 MiB plus form overhead. */
export const UPLOAD_BODY_LIMIT = 2 * 1024 * 1024 + 64 * 1024
/** A raw inbound e-mail (`message/rfc822`); attachments are not kept, so larger mail is refused. */
export const INBOUND_EMAIL_LIMIT = 2 * 1024 * 1024
/** An import (POST …/imports): up to three files of 100 MB, streamed to disk as they arrive (docs/import.md). */
export const IMPORT_BODY_LIMIT = 3 * 100 * 1024 * 1024 + 64 * 1024
const IMPORT_PATH = /^\/workspaces\/[^/]+\/imports\/?$/
/**
 * Bun's own cap (`maxRequestBodySize`), far above every route's limit: Bun answers a body over it with
 * a bare 413 before any hook runs, so the limits above are enforced here, in the error shape with the
 * request id (by Content-Length before the body is read; chunked bodies by the capped readers). Only a
 * body streamed past this without a Content-Length still meets Bun's bare refusal.
 */
export const BODY_BACKSTOP = IMPORT_BODY_LIMIT + 1024 * 1024

const started = new WeakMap<Request, { id: string; at: number; ip: string }>()

export const requestIdOf = (request: Request) => started.get(request)?.id ?? newId('request')

/**
 * The path of an absolute URL without parsing it, as the router sees it (not normalized; no query
 * string: it can hold tokens).
 */
export const pathOf = (url: string) => {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const query = url.indexOf('?', start)
  return start === -1 ? '/' : url.slice(start, query === -1 ? undefined : query)
}

/** Anonymous writes per IP a minute, across all routes, as a multiple of RATE_LIMIT_PER_IP (a sign-in alone is two writes). */
export const FLOOD_FACTOR = 5

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

const originOf = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return null
  }
}

/**
 * Where a write comes from. Origin decides when sent; without it (some older browsers, some same-origin
 * requests) Sec-Fetch-Site, then Referer decide; with none of them it is `unknown`.
 */
export function requestOrigin(request: Request, allowed: Set<string>): 'same' | 'foreign' | 'unknown' {
  const origin = request.headers.get('origin')
  if (origin !== null && origin !== 'null') return allowed.has(origin) ? 'same' : 'foreign'
  const site = request.headers.get('sec-fetch-site')
  if (site === 'same-origin') return 'same'
  if (site === 'cross-site' || site === 'same-site') return 'foreign'
  const referer = request.headers.get('referer')
  if (referer) return allowed.has(originOf(referer) ?? '') ? 'same' : 'foreign'
  return 'unknown'
}

/** A cookie-authenticated write must provably come from one of our pages: `unknown` is refused too. */
const sameOrigin = (request: Request, allowed: Set<string>) => requestOrigin(request, allowed) === 'same'

/** Query and path values are text: percent-encoding must decode to valid UTF-8 without NUL. */
function checkUrlText(url: string) {
  // Only percent-encoding can carry such bytes (the HTTP parser refuses them raw): most URLs have none.
  if (!url.includes('%')) return
  const queryStart = url.indexOf('?')
  const path = pathOf(url)
  for (const segment of path.split('/')) {
    const problem = decodedProblem(segment)
    if (problem) throw invalid(['path'], problem, 'value_error.text')
  }
  if (queryStart === -1) return
  for (const pair of url.slice(queryStart + 1).split('&')) {
    const [name = '', value = ''] = pair.split('=', 2)
    const problem = decodedProblem(name) ?? decodedProblem(value)
    if (problem) throw invalid(['query', formDecode(name) ?? 'query'], problem, 'value_error.text')
  }
}

function decodedProblem(raw: string) {
  if (!raw.includes('%')) return undefined
  const decoded = formDecode(raw)
  return decoded === undefined ? 'The value is not valid percent-encoded UTF-8' : textProblem(decoded)
}

/** Requests to `/api/<path>` re-addressed to `/api/v1/<path>`: the client's address and the path the client asked for. */
const readdressed = new WeakMap<Request, { ip: string | undefined; path: string }>()

/**
 * `/api/<path>` is the same API as `/api/v1/<path>` (docs/api.md#addresses), with the route table
 * mounted once: a second mount doubled the compiled handlers and Bun's route table (2.7 MiB of an idle
 * process, 3 MiB at peak). Before routing, such a request is handed to the app again at its versioned
 * address. The client's address is read from the request the server received (Bun's `requestIP` knows
 * that one only), and the access log shows the path the client asked for.
 */
export const unversionedPaths = (app: () => AnyElysia) =>
  new Elysia({ name: 'unversioned-paths' }).onRequest(({ request, server }) => {
    const url = request.url
    const start = url.indexOf('/', url.indexOf('//') + 2)
    if (!url.startsWith('/api/', start) || url.startsWith('/api/v1/', start)) return
    const moved = new Request(`${url.slice(0, start)}/api/v1${url.slice(start + 4)}`, request)
    readdressed.set(moved, { ip: server?.requestIP(request)?.address, path: pathOf(url) })
    return app().handle(moved)
  })

const isJson = (contentType: string) => contentType === 'application/json' || /^application\/[\w.+-]+\+json$/.test(contentType)

interface RoutePattern { method: string; path: RegExp; wildcard: boolean }

/**
 * The route table as method and path pattern: `routes` are those that read their own body type
 * (`parse: 'text'`, `'multipart/form-data'`, a named parser...), `all` every route (for 405's `Allow`).
 */
const ownParsers = new WeakMap<AppContext, { app: () => AnyElysia; routes?: RoutePattern[]; all?: RoutePattern[] }>()

/** Called once by createApp: the request plugin looks the routes' declared body types up there. */
export function bindRouteTable(ctx: AppContext, app: () => AnyElysia) {
  ownParsers.set(ctx, { app })
}

const jsonHooks = new WeakSet<object>()

const patternOf = (path: string) => new RegExp(`^${path.split('/').map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`)
const routePattern = (entry: { method: string; path: string }): RoutePattern => ({ method: entry.method, path: patternOf(entry.path), wildcard: entry.path.endsWith('*') })

/**
 * The methods the route table serves at `path`, for a 405's `Allow` (docs/api.md#methods); empty when
 * no route but a catch-all (the portal's 404 page, the public CORS preflight) matches it: that is a 404.
 * HEAD is answered wherever GET is.
 */
export function allowedMethods(ctx: AppContext, path: string): string[] {
  const table = ownParsers.get(ctx)
  if (!table) return []
  table.all ??= table.app().routes.map(routePattern)
  const matching = table.all.filter((route) => route.path.test(path))
  if (!matching.some((route) => !route.wildcard)) return []
  // A catch-all GET is a 404 page, not a resource; a catch-all OPTIONS is the CORS preflight, served.
  const methods = new Set(matching.filter((route) => !route.wildcard || route.method === 'OPTIONS').map((route) => route.method))
  if (methods.has('GET')) methods.add('HEAD')
  return ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((method) => methods.has(method))
}

function readsOwnBody(ctx: AppContext, request: Request) {
  const table = ownParsers.get(ctx)
  if (!table) return false
  table.routes ??= table.app().routes
    .filter((entry) => (entry.hooks?.parse as { fn: unknown }[] | undefined)?.some((hook) => !jsonHooks.has(hook.fn as object)))
    .map(routePattern)
  if (!table.routes.length) return false
  const path = pathOf(request.url)
  return table.routes.some((route) => route.method === request.method && route.path.test(path))
}

async function parseBody(ctx: AppContext, request: Request, contentType: string): Promise<unknown> {
  if (readsOwnBody(ctx, request)) return undefined
  if (!request.body) return undefined
  if (!isJson(contentType.trim().toLowerCase())) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `This route takes application/json${contentType ? `, not ${contentType}` : ': send a Content-Type header'}`)
  }
  // A declared length was checked in onRequest; a chunked body declares none, so it is read with the cap.
  return parseJsonBody(request.headers.has('content-length') ? await request.arrayBuffer() : await readBodyCapped(request, JSON_BODY_LIMIT))
}

/**
 * Request id, security headers, TRACE, body-size limit, the cookie-CSRF origin check, client IP,
 * the per-IP limit on unauthenticated writes, text checks on the URL, the bounded JSON body parser
 * (415 for other types unless the route declares its own), and one access-log line per request.
 * Everything that can refuse a request runs before its body is read.
 */
export const requestPlugin = perApp((ctx: AppContext) => {
  const allowedOrigins = new Set([new URL(ctx.config.baseUrl).origin, new URL(ctx.config.dashboardUrl).origin, ...ctx.config.allowedOrigins])
  const clientIp = (request: Request, server: { requestIP(request: Request): { address: string } | null } | null) => {
    const forwarded = ctx.config.trustProxy ? request.headers.get('x-forwarded-for')?.split(',')[0]?.trim() : undefined
    return forwarded || readdressed.get(request)?.ip || server?.requestIP(request)?.address || 'unknown'
  }
  const jsonHook = ({ request }: { request: Request }, contentType: string) => parseBody(ctx, request, contentType)
  jsonHooks.add(jsonHook)
  const plugin = new Elysia({ name: 'request' })
    // Synchronous, so the store it starts is the one the rest of the request runs in (server/db/effects.ts).
    .onRequest(() => beginRequestEffects())
    .onRequest(async ({ request, set, server }) => {
      const id = newId('request')
      const ip = clientIp(request, server)
      started.set(request, { id, at: performance.now(), ip })
      set.headers['x-request-id'] = id
      setSecurityHeaders(set.headers as Record<string, string>, ctx.config, request)

      if (request.method === 'TRACE') throw new ApiError('METHOD_NOT_ALLOWED', 'TRACE is not supported', {}, { allow: 'GET, HEAD, POST, PATCH, PUT, DELETE, OPTIONS' })

      const length = Number(request.headers.get('content-length') ?? 0)
      const contentType = request.headers.get('content-type') ?? ''
      const limit = request.method === 'POST' && IMPORT_PATH.test(pathOf(request.url)) ? IMPORT_BODY_LIMIT
        : contentType.startsWith('multipart/form-data') ? UPLOAD_BODY_LIMIT : contentType.startsWith('message/rfc822') ? INBOUND_EMAIL_LIMIT : JSON_BODY_LIMIT
      if (length > limit) throw new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes`)

      if (UNSAFE.has(request.method)) {
        const session = carriesSessionCookie(request.headers)
        // SameSite=Lax already blocks most cross-site cookie writes; the origin check closes the rest
        // (same-site subdomains, older browsers). It is skipped only when the credential that will be
        // used is not the cookie: a key request (the header the auth plugin reads, `carriesKey`) carries
        // no ambient authority, but any other Authorization scheme (Basic...) leaves the cookie in charge.
        if (session && !carriesKey(request.headers) && !sameOrigin(request, allowedOrigins)) {
          throw new ApiError('CSRF_REJECTED', 'Cookie-authenticated writes must come from the dashboard origin (Origin, Sec-Fetch-Site or Referer)')
        }
        // Before the body is read, a flood of anonymous writes costs a counter each, not a parse: a
        // guard across all routes of FLOOD_FACTOR times each route's own per-IP limit (which still applies).
        if (!session && !carriesCredentialHeader(request.headers)) await enforceRateLimit(ctx, set.headers as Record<string, string>, `write:ip:${ip}`, ctx.config.rateLimitPerIp * FLOOD_FACTOR)
      }
      checkUrlText(request.url)
    })
    .onParse({ as: 'global' }, jsonHook as never)
    .derive({ as: 'global' }, ({ request }) => ({ requestId: requestIdOf(request), clientIp: started.get(request)?.ip ?? 'unknown' }))
  // The access log is a hook on every request; it is only registered when info lines are wanted.
  if (ctx.config.logLevel !== 'debug' && ctx.config.logLevel !== 'info') return plugin
  return plugin.onAfterResponse({ as: 'global' }, ({ request, set, responseValue }) => {
    const entry = started.get(request)
    ctx.log.info('request', {
      request_id: entry?.id,
      method: request.method,
      // The query string can hold tokens (magic links); only the path is logged.
      path: readdressed.get(request)?.path ?? pathOf(request.url),
      // A handler may answer with a Response of its own (the OAuth endpoints do): its status is the real one.
      status: responseValue instanceof Response ? responseValue.status : typeof set.status === 'number' ? set.status : 200,
      duration_ms: entry ? Math.round((performance.now() - entry.at) * 10) / 10 : undefined,
    })
  })
})
