import type { AppContext } from '../context.ts'
import type { SessionUser } from './credentials.ts'
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

/**
 * One counter of `{ rateLimit: [...] }`: `name` and the value `by` picks from the request (the client
 * IP, a field of the validated body, the signed-in user) make the key; `limit` defaults to RATE_LIMIT_PER_IP a minute.
 */
export interface RateRule {
  name: string
  by(request: { clientIp: string; body: any; user?: SessionUser }): string
  limit?: number
  windowSeconds?: number
}

/**
 * Counts one request against each rule. The `rateLimit` macro calls it for API routes; a server-rendered
 * form that does the same thing (the built-in sign-in page) calls it with the same rules, so both share one budget.
 */
export async function enforceRateRules(ctx: AppContext, headers: Record<string, string | number>, rules: RateRule[], request: Parameters<RateRule['by']>[0]) {
  for (const rule of rules) {
    await enforceRateLimit(ctx, headers, `${rule.name}:${rule.by(request)}`, rule.limit ?? ctx.config.rateLimitPerIp, rule.windowSeconds)
  }
}
