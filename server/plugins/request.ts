import { Elysia } from 'elysia'
import { perApp, type AppContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { newId } from '../lib/ids.ts'

export const JSON_BODY_LIMIT = 1024 * 1024
/** Multipart requests carry one image of at most 2 MiB plus form overhead. */
export const UPLOAD_BODY_LIMIT = 2 * 1024 * 1024 + 64 * 1024

const started = new WeakMap<Request, { id: string; at: number }>()

export const requestIdOf = (request: Request) => started.get(request)?.id ?? newId('request')

/** The path of an absolute URL without parsing it (no query string: it can hold tokens). */
const pathOf = (url: string) => {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const query = url.indexOf('?', start)
  return start === -1 ? '/' : url.slice(start, query === -1 ? undefined : query)
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

function carriesSessionCookie(request: Request) {
  const cookie = request.headers.get('cookie') ?? ''
  return /(?:^|;\s*)(access_token|refresh_token)=/.test(cookie)
}

function carriesKey(request: Request) {
  return request.headers.has('authorization') || request.headers.has('x-api-key')
}

/** Request id, body-size limit, the cookie-CSRF Origin check, client IP, and one access-log line per request. */
export const requestPlugin = perApp((ctx: AppContext) => {
  const allowedOrigins = new Set([new URL(ctx.config.baseUrl).origin, new URL(ctx.config.dashboardUrl).origin, ...ctx.config.allowedOrigins])
  const plugin = new Elysia({ name: 'request' })
    .onRequest(({ request, set }) => {
      const id = newId('request')
      started.set(request, { id, at: performance.now() })
      set.headers['x-request-id'] = id

      const length = Number(request.headers.get('content-length') ?? 0)
      const multipart = request.headers.get('content-type')?.startsWith('multipart/form-data')
      const limit = multipart ? UPLOAD_BODY_LIMIT : JSON_BODY_LIMIT
      if (length > limit) throw new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes`)

      // SameSite=Lax already blocks most cross-site cookie writes; the Origin check closes the rest
      // (same-site subdomains, older browsers). Requests carrying a key are key requests and carry no ambient authority.
      const origin = request.headers.get('origin')
      if (UNSAFE.has(request.method) && origin && !allowedOrigins.has(origin) && carriesSessionCookie(request) && !carriesKey(request)) {
        throw new ApiError('CSRF_REJECTED', `Cookie-authenticated writes from ${origin} are not allowed`)
      }
    })
    .derive({ as: 'global' }, ({ request, server }) => {
      const forwarded = ctx.config.trustProxy ? request.headers.get('x-forwarded-for')?.split(',')[0]?.trim() : undefined
      return { requestId: requestIdOf(request), clientIp: forwarded || server?.requestIP(request)?.address || 'unknown' }
    })
  // The access log is a hook on every request; it is only registered when info lines are wanted.
  if (ctx.config.logLevel !== 'debug' && ctx.config.logLevel !== 'info') return plugin
  return plugin.onAfterResponse({ as: 'global' }, ({ request, set }) => {
    const entry = started.get(request)
    ctx.log.info('request', {
      request_id: entry?.id,
      method: request.method,
      // The query string can hold tokens (magic links); only the path is logged.
      path: pathOf(request.url),
      status: typeof set.status === 'number' ? set.status : 200,
      duration_ms: entry ? Math.round((performance.now() - entry.at) * 10) / 10 : undefined,
    })
  })
})
