import { Elysia } from 'elysia'

// The widget runs on customers' pages, so the public routes and identify answer any origin. They are
// called without cookies (the widget uses `credentials: 'omit'`), so `*` grants no ambient authority.

/** `/api[/v1]/public/...` and `/api[/v1]/workspaces/{slug}/identify`. */
const CORS_PATH = /^\/api(?:\/v1)?\/(?:public\/|workspaces\/[^/]+\/identify\/?$)/

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key',
  'access-control-expose-headers': 'X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Idempotent-Replayed',
  'access-control-max-age': '86400',
}

/** CORS for any origin on the public routes, errors included; OPTIONS preflights are answered before routing. */
export const publicCors = () =>
  new Elysia({ name: 'public-cors' }).onRequest(({ request, set }) => {
    if (!CORS_PATH.test(new URL(request.url).pathname)) return
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: { ...CORS_HEADERS, 'x-request-id': String(set.headers['x-request-id'] ?? '') } })
    Object.assign(set.headers, CORS_HEADERS)
  })
