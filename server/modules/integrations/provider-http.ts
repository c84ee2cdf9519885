// Every call to a chat or tracker provider goes through here: the one outbound guard (operator-configured
// base URL, checked address, no redirects, time and size limits), and provider failures turned into one
// error type the routes report as 502 and the chat queue retries.
import { OutboundRefused, type Outbound } from '../../lib/outbound.ts'

/** A provider that answered with an error or could not be reached; `detail` is the provider's own words. */
export class ProviderError extends Error {
  constructor(
    readonly detail: string,
    /** HTTP status, when the provider answered at all. */
    readonly status: number | null = null,
    /** From `Retry-After` on 429. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(detail)
    this.name = 'ProviderError'
  }
}

/** A provider's API: its operator-configured base URL and the guard that calls it. */
export interface ProviderApi { base: string; outbound: Outbound }

const TIMEOUT_MS = 10_000

export async function providerFetch(api: ProviderApi, path: string, init: { method: 'POST'; headers: Record<string, string>; body: string }): Promise<{ status: number; json: any }> {
  let status: number
  let headers: Headers
  let text: string
  try {
    const response = await api.outbound.fetch(`${api.base}${path}`, { ...init, operatorBase: api.base, timeoutMs: TIMEOUT_MS })
    if (response.truncated) throw new ProviderError('answer too large', response.status)
    ;({ status, headers } = response)
    text = response.text()
  } catch (error) {
    if (error instanceof ProviderError) throw error
    if (error instanceof OutboundRefused) throw new ProviderError(`refused by the outbound guard: the URL ${error.message}`)
    const name = (error as Error).name
    throw new ProviderError(name === 'TimeoutError' || name === 'AbortError' ? `no answer within ${TIMEOUT_MS / 1000} s` : `unreachable: ${(error as Error).message}`)
  }
  let json: any = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    if (status < 300) throw new ProviderError(`answer is not JSON (HTTP ${status})`, status)
  }
  const retryAfter = headers.get('retry-after')
  if (status === 429) throw new ProviderError('ratelimited', 429, retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : null)
  if (status >= 500 || (status >= 300 && status < 400)) throw new ProviderError(`HTTP ${status}`, status)
  return { status, json }
}
