import { Elysia } from 'elysia'
import { pathOf } from './request.ts'

/**
 * The portal and widget routes: `/api[/v1]/public/...` (reads and end-user writes),
 * `/api[/v1]/workspaces/{slug}/identify`, which the widget calls from the customer's page, and
 * `/api[/v1]/contact/challenge`, the proof of work the widget solves when a workspace asks (docs/moderation.md).
 */
const PUBLIC_PATH = /^\/api(?:\/v1)?\/(?:public(?:\/|$)|workspaces\/[^/]+\/identify\/?$|contact\/challenge\/?$)/

export const PUBLIC_CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag, X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Idempotent-Replayed, Chorus-Session-Token, Chorus-Session-Expires, Chorus-Claim-Id, Chorus-Claim-Expires',
}

export const PUBLIC_PREFLIGHT = {
  'access-control-allow-methods': 'GET, POST',
  'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, If-None-Match',
  'access-control-max-age': '86400',
}

/**
 * Open CORS on the public routes, for any site that embeds the widget or a custom portal. `*` is safe
 * because these routes never read cookies: the widget sends its end-user token in `Authorization`.
 * Set before routing, so error responses carry the headers too (the error handler copies them);
 * the preflights themselves are answered by OPTIONS routes (public module, identify).
 */
export const publicCors = () =>
  new Elysia({ name: 'public-cors' }).onRequest(({ request, set }) => {
    if (!PUBLIC_PATH.test(pathOf(request.url))) return
    Object.assign(set.headers, PUBLIC_CORS, request.method === 'OPTIONS' ? PUBLIC_PREFLIGHT : {})
  })
