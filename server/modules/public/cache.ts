import { sha256Hex } from '../../lib/secrets.ts'

export const PUBLIC_CACHE_CONTROL = 'public, max-age=30, stale-while-revalidate=60'
/** An answer personalised for an end-user session (`voted`): the browser may keep it, shared caches never. */
export const PRIVATE_CACHE_CONTROL = 'private, no-cache'

/** RFC 9110 weak comparison: `W/` is ignored, `*` matches anything. */
export function etagMatches(ifNoneMatch: string | null, etag: string) {
  if (!ifNoneMatch) return false
  const bare = etag.replace(/^W\//, '')
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim()
    return tag === '*' || tag.replace(/^W\//, '') === bare
  })
}

interface Exchange {
  request: Request
  responseValue: unknown
  set: { status?: number | string; headers: Record<string, string | number> }
}

/**
 * A `mapResponse` hook for the public reads: a short shared-cache lifetime and a weak ETag over the exact
 * body sent, so portals and widgets revalidate with `If-None-Match` and get an empty 304 when nothing changed.
 * It runs after response validation; errors and non-GET answers pass through untouched.
 */
export async function conditionalJson({ request, responseValue, set }: Exchange) {
  if (request.method !== 'GET' || responseValue instanceof Response || responseValue === undefined) return
  if (set.status !== undefined && set.status !== 200) return
  const body = JSON.stringify(responseValue)
  const etag = `W/"${sha256Hex(body).slice(0, 32)}"`
  set.headers['cache-control'] = request.headers.has('authorization') ? PRIVATE_CACHE_CONTROL : PUBLIC_CACHE_CONTROL
  // Every answer varies with the session, so no cache hands an anonymous answer to a visitor with one, or the reverse.
  set.headers.vary = 'Authorization'
  set.headers.etag = etag
  if (etagMatches(request.headers.get('if-none-match'), etag)) {
    set.status = 304
    return new Response(null, { status: 304 })
  }
  return new Response(body, { status: 200, headers: { 'content-type': 'application/json;charset=utf-8' } })
}
