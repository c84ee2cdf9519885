import type { AppContext } from '../context.ts'
import { ApiError } from '../errors.ts'

type Headers = Record<string, string | number>

/**
 * Counts one hit, writes the RateLimit-* headers, and throws 429 RATE_LIMITED with Retry-After past the limit.
 * `leased`: the shared counter may be claimed several hits at a time (server/lib/rate-limit.ts); `deferChanges`: see `RateLimiter.hit`.
 */
export async function enforceRateLimit(ctx: AppContext, headers: Headers, key: string, limit: number, windowSeconds = 60, leased = false, deferChanges = false) {
  const result = await ctx.limiter.hit(key, limit, windowSeconds, leased, deferChanges)
  headers['ratelimit-limit'] = String(result.limit)
  headers['ratelimit-remaining'] = String(result.remaining)
  headers['ratelimit-reset'] = String(result.resetSeconds)
  if (!result.allowed) {
    throw new ApiError('RATE_LIMITED', `Too many requests; retry in ${result.resetSeconds} s`, {}, {
      'retry-after': String(result.resetSeconds),
      'ratelimit-limit': String(result.limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(result.resetSeconds),
    })
  }
  return result
}
