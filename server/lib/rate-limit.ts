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
  /**
   * PostgreSQL only, when the hit was served from a lease and the caller offered to read the count itself
   * (`deferChanges`): no statement ran, `changes` is absent, and the caller's own statement reads `CREDENTIAL_CHANGES`.
   */
  changesDeferred?: true
}

export interface RateLimiter {
  /**
   * Counts one hit against `key` in a fixed window of `windowSeconds`. `leased`: the PostgreSQL counter may
   * hand this process a share of the budget at once (`postgresRateLimiter`); the other stores ignore it.
   * `deferChanges`: a hit served from such a lease reads no change count (`changesDeferred`).
   */
  hit(key: string, limit: number, windowSeconds: number, leased?: boolean, deferChanges?: boolean): Promise<RateLimitResult>
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
 * Shared counters in PostgreSQL, for several processes or machines without Redis: an upsert (a prepared
 * statement on an UNLOGGED table) adds to the window's count and returns it, so every process sees the
 * same budget. Ended windows are deleted now and then by whoever hits.
 */
const countHits = compiled('count_rate_limit_hits', (db) => db.insert(rateLimitCounters)
  .values({ key: sql.placeholder('key'), window: sql.placeholder('window'), count: sql.placeholder('hits'), expiresAt: sql.placeholder('expiresAt') })
  .onConflictDoUpdate({ target: [rateLimitCounters.key, rateLimitCounters.window], set: { count: sql`${rateLimitCounters.count} + excluded.count` } })
  .returning({ count: rateLimitCounters.count, changes: CREDENTIAL_CHANGES }))

/** The count of credential changes alone: what a hit served from a lease still reads on every request. */
const readChanges = compiled('read_credential_changes', (db) => db.select({ changes: CREDENTIAL_CHANGES }).from(sql`(select 1) as one`))

/**
 * A leased window claims at most 1/LEASE_SHARE of what is left of the budget at once (at least one hit,
 * at most LEASE_MAX): far from the limit a process writes the counter once per many hits, near it once
 * per hit, so the budget is never overspent and at most a small share of it sits unspent in one process.
 */
const LEASE_SHARE = 64
const LEASE_MAX = 64

interface Lease { window: number; left: number; count: number }

/**
 * Each hit's upsert was the largest cost a keyed read put on PostgreSQL (a write on one hot row per key:
 * ~300 µs of database CPU against ~30 µs for a read, bench/posts.ts), so a leased hit (the per-credential
 * limits of keyed requests) is counted in the database a share at a time: the process claims several
 * hits in one upsert and spends them in memory. Every admitted hit was counted in the shared row first,
 * so all processes together never admit more than the limit; one may refuse while another still holds
 * a few claimed hits (at most 1/LEASE_SHARE of the budget each). A hit served from a lease still reads
 * the credential change count (a primary-key read), so a revoked key is refused at once on every process.
 */
export function postgresRateLimiter(db: Db): RateLimiter {
  const leases = new Map<string, Lease>()
  async function claim(key: string, hits: number, window: number, windowSeconds: number) {
    const [row] = await countHits(db).execute({ key, window, hits, expiresAt: new Date((window + 1) * windowSeconds * 1000) })
    if (Math.random() * PURGE_ONE_IN < hits) void db.delete(rateLimitCounters).where(lt(rateLimitCounters.expiresAt, sql`now()`)).catch(() => {})
    return row!
  }
  return {
    async hit(key, limit, windowSeconds, leased = false, deferChanges = false) {
      const now = Date.now()
      const window = Math.floor(now / (windowSeconds * 1000))
      const counter = counterKey(key, windowSeconds)
      if (!leased) {
        const row = await claim(counter, 1, window, windowSeconds)
        return { ...result(row.count, limit, windowSeconds, now), changes: row.changes }
      }
      let lease = leases.get(counter)
      if (lease && lease.window === window && lease.left > 0) {
        lease.left--
        lease.count++
        if (deferChanges) return { ...result(lease.count, limit, windowSeconds, now), changesDeferred: true }
        const [row] = await readChanges(db).execute()
        return { ...result(lease.count, limit, windowSeconds, now), changes: row!.changes }
      }
      const known = lease && lease.window === window ? lease.count : 0
      const hits = Math.min(LEASE_MAX, Math.max(1, Math.floor((limit - known) / LEASE_SHARE)))
      const row = await claim(counter, hits, window, windowSeconds)
      // This hit's place in the window is the first of the claimed ones; those within the limit are granted
      // (this hit and the ones left for the next requests), so the hit is admitted exactly when one is.
      const count = row.count - hits + 1
      const granted = Math.max(0, Math.min(hits, limit - count + 1))
      if (granted > 1) {
        lease = leases.get(counter)
        if (lease && lease.window === window) lease.left += granted - 1
        else leases.set(counter, (lease = { window, left: granted - 1, count }))
        lease.count = Math.max(lease.count, count)
      }
      if (leases.size > 10_000) for (const [k, v] of leases) if (v.window !== window) leases.delete(k)
      return { ...result(count, limit, windowSeconds, now), changes: row.changes }
    },
    close() {},
  }
}
