import { ChorusError, ConnectionError, parseRetryAfter } from './errors.js'

/** Longest `Retry-After` the SDK waits out by itself; past it the RateLimitError goes to the caller, who knows better. */
export const MAX_RETRY_AFTER_MS = 60_000

export interface BackoffOptions {
  /** First backoff delay; doubles on every attempt. */
  retryDelayMs: number
  /** Cap of the exponential backoff (not of `Retry-After`). */
  maxRetryDelayMs: number
}

export function isRetryable(error: ChorusError): boolean {
  if (error instanceof ConnectionError) return true
  return error.status === 429 || (error.status !== null && error.status >= 500)
}

/**
 * Milliseconds to wait before retry number `attempt + 1`, or null to give up. The server's
 * `Retry-After` wins; otherwise exponential backoff with jitter over the upper half of the window,
 * so many clients that failed together do not come back together.
 */
export function retryDelay(attempt: number, error: ChorusError, options: BackoffOptions): number | null {
  const retryAfter = parseRetryAfter(error.headers?.get('retry-after'))
  if (retryAfter !== null) {
    const ms = retryAfter * 1000
    return ms <= MAX_RETRY_AFTER_MS ? ms : null
  }
  const window = Math.min(options.maxRetryDelayMs, options.retryDelayMs * 2 ** attempt)
  return window / 2 + Math.random() * (window / 2)
}

/** Waits `ms`, or rejects with the signal's reason as soon as the caller aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
