import { perApp, type AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { readPage } from '../../lib/paging.ts'
import { publicCache } from '../../lib/public-cache.ts'
import { sha256Hex } from '../../lib/secrets.ts'
import { publicBoardPosts, publicWorkspaceOf, type PublicListQuery } from './service.ts'

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
 * A public JSON answer as sent: its body encoded once (a kept answer is written as it is, never transcoded per
 * request) and the weak ETag over it. The body is a Blob: a Response made from a Blob shares its bytes, where
 * one made from a Uint8Array copies them (~2 µs and 16 KB of garbage per 16 KB answer; BENCHMARKS.md, "footprint").
 */
export interface JsonAnswer { body: Blob; etag: string }

export function jsonAnswer(value: unknown): JsonAnswer {
  const text = JSON.stringify(value)
  return { body: new Blob([text]), etag: `W/"${sha256Hex(text).slice(0, 32)}"` }
}

/** What a kept answer is counted at: its bytes plus its entry's own (key, ETag, headers; a generous guess). */
export const keptBytes = (body: Blob) => body.size + 512

/**
 * A public JSON answer's headers: a short shared-cache lifetime and the weak ETag, so portals and widgets
 * revalidate with `If-None-Match` and get an empty 304 when nothing changed.
 */
export function sendJson(request: Request, set: Exchange['set'], answer: JsonAnswer) {
  set.headers['cache-control'] = request.headers.has('authorization') ? PRIVATE_CACHE_CONTROL : PUBLIC_CACHE_CONTROL
  // Every answer varies with the session, so no cache hands an anonymous answer to a visitor with one, or the reverse.
  set.headers.vary = 'Authorization'
  set.headers.etag = answer.etag
  if (etagMatches(request.headers.get('if-none-match'), answer.etag)) {
    set.status = 304
    return new Response(null, { status: 304 })
  }
  return new Response(answer.body, { status: 200, headers: { 'content-type': 'application/json;charset=utf-8' } })
}

/**
 * A `mapResponse` hook for the public reads that answer with a value (the cached ones answer through
 * `sendJson` themselves). It runs after response validation; errors and non-GET answers pass through untouched.
 */
export async function conditionalJson({ request, responseValue, set }: Exchange) {
  if (request.method !== 'GET' || responseValue instanceof Response || responseValue === undefined) return
  if (set.status !== undefined && set.status !== 200) return
  return sendJson(request, set, jsonAnswer(responseValue))
}

/**
 * How long an answer read through DATABASE_READ_URL is kept at most: a replica may replay a change after its
 * notification dropped the answer, and the answer read meanwhile would otherwise stay until the next change.
 */
export const READ_REPLICA_TTL_MS = 2000

/** The process's public cache (server/lib/public-cache.ts): CACHE_ENTRIES answers, PUBLIC_CACHE_MB in all. */
export const publicAnswers = perApp((ctx: AppContext) => publicCache(ctx.changes, {
  entries: ctx.config.cacheEntries, bytes: ctx.config.publicCacheBytes, ttlMs: ctx.config.databaseReadUrl ? READ_REPLICA_TTL_MS : 0,
}))

/**
 * A public read on the read pool (DATABASE_READ_URL); what it does not find there is looked for on the primary
 * too, so a replica that has not caught up yet does not answer 404 for a post, board or workspace just created.
 */
export async function publicRead<T>(ctx: AppContext, read: (db: AppContext['db']) => Promise<T>): Promise<T> {
  if (ctx.readDb === ctx.db) return read(ctx.db)
  try {
    return await read(ctx.readDb)
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'NOT_FOUND') throw error
    return read(ctx.db)
  }
}

/** Freezes a kept value all the way down: an answer many requests share must not be changed by one of them. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

/** The public workspace (branding, public boards, statuses) as the portal reads it and as `getPublicWorkspace` sends it. */
export function cachedWorkspace(ctx: AppContext, slug: string) {
  return publicAnswers(ctx).through(`workspace\n${slug}`, async () => {
    const { workspaceId, portal } = await publicRead(ctx, (db) => publicWorkspaceOf(db, slug, ctx.config.baseUrl))
    const json = jsonAnswer(portal)
    // The object's share is guessed at twice its JSON.
    return { value: { workspaceId, portal: deepFreeze(portal), json }, keep: { workspaceId, bytes: 3 * keptBytes(json.body) } }
  })
}

/** A public board's page of posts as anyone without a session sees it, keyed by every query parameter. */
export function cachedBoardPosts(ctx: AppContext, slug: string, board: string, query: PublicListQuery & Parameters<typeof readPage>[0]) {
  const inputs = Object.entries(query).filter(([, value]) => value !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))
  return publicAnswers(ctx).through(`posts\n${slug}\n${board}\n${JSON.stringify(inputs)}`, async () => {
    const list = await publicRead(ctx, (db) => publicBoardPosts(db, slug, board, query, readPage(query)))
    const answer = jsonAnswer(list)
    // Nothing is kept while the cache is off or the process does not hear every change: no workspace to look up then.
    if (!publicAnswers(ctx).keeping) return { value: answer }
    const { workspaceId } = await cachedWorkspace(ctx, slug)
    return { value: answer, keep: { workspaceId, bytes: keptBytes(answer.body) } }
  })
}
