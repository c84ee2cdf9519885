import { RedisClient } from 'bun'
import { lt, sql } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { compiled } from '../db/compiled.ts'
import { rateLimitCounters } from '../db/schema/index.ts'

export interface RateLimitResult {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the window resets. */
  resetSeconds: number
  /** PostgreSQL only: the count of credential changes (`cache_changes`, migration 0043), read in the same statement. */
  changes?: number
}

export interface RateLimiter {
  /** Counts one hit against `key` in a fixed window of `windowSeconds`. */
  hit(key: string, limit: number, windowSeconds: number): Promise<RateLimitResult>
  close(): void
}

function result(count: number, limit: number, windowSeconds: number, now: number): RateLimitResult {
  const windowMs = windowSeconds * 1000
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((windowMs - (now % windowMs)) / 1000)),
  }
}

/** Per-process counters: right for the single process of the embedded database (PGlite). */
export function memoryRateLimiter(): RateLimiter {
  const counters = new Map<string, { window: number; count: number }>()
  return {
    async hit(key, limit, windowSeconds) {
      const now = Date.now()
      const window = Math.floor(now / (windowSeconds * 1000))
      const entry = counters.get(key)
      const count = entry && entry.window === window ? entry.count + 1 : 1
      counters.set(key, { window, count })
      if (counters.size > 50_000) {
        for (const [k, v] of counters) if (v.window !== window) counters.delete(k)
      }
      return result(count, limit, windowSeconds, now)
    },
    close() {},
  }
}

/** Shared counters in Redis (Bun's built-in client): every instance sees the same window. */
export function redisRateLimiter(url: string): RateLimiter {
  const client = new RedisClient(url)
  return {
    async hit(key, limit, windowSeconds) {
      const now = Date.now()
      const window = Math.floor(now / (windowSeconds * 1000))
      const redisKey = `chorus:rl:${counterKey(key, windowSeconds)}:${window}`
      const count = await client.incr(redisKey)
      if (count === 1) await client.expire(redisKey, windowSeconds + 1)
      return result(count, limit, windowSeconds, now)
    },
    close: () => client.close(),
  }
}

/**
 * Keys name e-mail addresses, IPs and ids; the shared stores keep only a SHA-256 of them, so no
 * counter holds personal data in clear (and each is gone a window after it ends).
 */
export const counterKey = (key: string, windowSeconds: number) => new Bun.CryptoHasher('sha256').update(`${key}:${windowSeconds}`).digest('base64url')

/** How many times a cached credential's tables changed (migration 0043): a key cached before the count moved is looked up again. */
export const CREDENTIAL_CHANGES = sql<number>`(select n from cache_changes where id = 1)`.mapWith(Number)

/** About one hit in this many also deletes the windows that have ended. */
const PURGE_ONE_IN = 1000

/**
 * Shared counters in PostgreSQL, for several processes or machines without Redis: one upsert per hit
 * (a prepared statement on an UNLOGGED table) returns the window's count, so every process sees the
 * same budget. Ended windows are deleted now and then by whoever hits.
 */
const countHit = compiled('count_rate_limit_hit', (db) => db.insert(rateLimitCounters)
  .values({ key: sql.placeholder('key'), window: sql.placeholder('window'), count: 1, expiresAt: sql.placeholder('expiresAt') })
  .onConflictDoUpdate({ target: [rateLimitCounters.key, rateLimitCounters.window], set: { count: sql`${rateLimitCounters.count} + 1` } })
  .returning({ count: rateLimitCounters.count, changes: CREDENTIAL_CHANGES }))

export function postgresRateLimiter(db: Db): RateLimiter {
  return {
    async hit(key, limit, windowSeconds) {
      const now = Date.now()
      const window = Math.floor(now / (windowSeconds * 1000))
      const [row] = await countHit(db).execute({ key: counterKey(key, windowSeconds), window, expiresAt: new Date((window + 1) * windowSeconds * 1000) })
      if (Math.random() * PURGE_ONE_IN < 1) void db.delete(rateLimitCounters).where(lt(rateLimitCounters.expiresAt, sql`now()`)).catch(() => {})
      return { ...result(row!.count, limit, windowSeconds, now), changes: row!.changes }
    },
    close() {},
  }
}
