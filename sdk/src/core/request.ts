import { ChorusError, ConnectionError, errorFromResponse } from './errors.js'
import { clientHeader } from './client-id.js'
import { isRetryable, retryDelay, sleep, type BackoffOptions } from './retry.js'

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/** Any `fetch` with the standard signature (a plain function works; Bun's extra `preconnect` is not needed). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>

export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[]

/** Per-call settings, accepted as the last argument of every resource method. */
export interface RequestOptions {
  /** Defaults to a fresh key per POST call, reused by its retries so the server applies the call once. */
  idempotencyKey?: string
  signal?: AbortSignal
  maxRetries?: number
  timeoutMs?: number
  headers?: Record<string, string>
}

/** What a successful response said besides its body: quote `requestId` to support. */
export interface ResponseMeta {
  status: number
  headers: Headers
  /** The server's `X-Request-Id`. */
  requestId: string | null
}

/**
 * A parsed body with its response's `lastResponse` (non-enumerable, so it stays out of JSON and
 * spreads). Bodies that are not objects (a 204's undefined) carry nothing.
 */
export type WithResponse<T> = T extends object ? T & { readonly lastResponse: ResponseMeta } : T

export interface RequestSpec extends RequestOptions {
  query?: object
  body?: unknown
  /** A file sent as the whole body (imports), with its content type, instead of a JSON `body`. */
  file?: { data: Blob | ArrayBuffer | Uint8Array | string; contentType: string }
}

export interface TransportConfig extends BackoffOptions {
  apiKey: string | undefined
  credentials?: 'include'
  baseUrl: string
  fetch: FetchLike
  maxRetries: number
  timeoutMs: number
  headers: Record<string, string>
  /** Told of every successful response, after its body is read. */
  onResponse?: (meta: ResponseMeta) => void
}

export function buildUrl(baseUrl: string, path: string, query?: object): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query ?? {}) as [string, QueryValue][]) {
    if (value === undefined || value === null) continue
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item))
  }
  const qs = search.toString()
  return `${baseUrl}${path}${qs ? `?${qs}` : ''}`
}

function newIdempotencyKey(): string {
  if (typeof globalThis.crypto?.randomUUID === 'function') return globalThis.crypto.randomUUID()
  // Only uniqueness matters here, not secrecy.
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text()
  if (!text) return undefined
  if (!(response.headers.get('content-type') ?? '').includes('json')) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** One attempt: the response body is read inside the timeout, so a stalled body counts as a timeout too. */
async function attempt(config: TransportConfig, url: string, init: RequestInit, timeoutMs: number, signal?: AbortSignal) {
  if (signal?.aborted) throw signal.reason
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new ConnectionError(`No response within ${timeoutMs} ms`, { code: 'TIMEOUT' })), timeoutMs)
  const forwardAbort = () => controller.abort(signal!.reason)
  signal?.addEventListener('abort', forwardAbort, { once: true })
  try {
    const response = await config.fetch(url, { ...init, signal: controller.signal })
    return { response, body: await readBody(response) }
  } catch (cause) {
    if (signal?.aborted) throw signal.reason
    if (controller.signal.reason instanceof ConnectionError) throw controller.signal.reason
    throw new ConnectionError(`Could not reach ${url}: ${cause instanceof Error ? cause.message : String(cause)}`, { code: 'CONNECTION_ERROR', cause })
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', forwardAbort)
  }
}

/**
 * The SDK's single way to the API: JSON in and out, typed errors, and retries on 429, 5xx and
 * network failures. Resolves with the parsed body carrying `lastResponse`, or undefined for an empty one (204).
 */
export async function sendRequest<T>(config: TransportConfig, method: HttpMethod, path: string, spec: RequestSpec = {}): Promise<WithResponse<T>> {
  const [clientName, clientValue] = clientHeader()
  const headers: Record<string, string> = { accept: 'application/json', [clientName]: clientValue, ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}) }
  // Lower-cased, so a caller's `Accept` replaces ours instead of being sent beside it.
  for (const [name, value] of Object.entries({ ...config.headers, ...spec.headers })) headers[name.toLowerCase()] = value
  if (spec.body !== undefined) headers['content-type'] = 'application/json'
  if (spec.file) headers['content-type'] = spec.file.contentType
  const idempotencyKey = spec.idempotencyKey ?? (method === 'POST' ? newIdempotencyKey() : undefined)
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey

  const url = buildUrl(config.baseUrl, path, spec.query)
  const init: RequestInit = { method, headers, body: spec.file ? (spec.file.data as BodyInit) : spec.body === undefined ? undefined : JSON.stringify(spec.body), ...(config.credentials ? { credentials: config.credentials } : {}) }
  const maxRetries = spec.maxRetries ?? config.maxRetries
  for (let retries = 0; ; retries++) {
    let error: ChorusError
    try {
      const { response, body } = await attempt(config, url, init, spec.timeoutMs ?? config.timeoutMs, spec.signal)
      if (response.ok) {
        const meta: ResponseMeta = { status: response.status, headers: response.headers, requestId: response.headers.get('x-request-id') }
        if (body !== null && typeof body === 'object') Object.defineProperty(body, 'lastResponse', { value: meta, enumerable: false, configurable: true })
        config.onResponse?.(meta)
        return body as WithResponse<T>
      }
      error = errorFromResponse(response, body)
    } catch (thrown) {
      if (!(thrown instanceof ConnectionError)) throw thrown
      error = thrown
    }
    const delay = retries < maxRetries && isRetryable(error) ? retryDelay(retries, error, config) : null
    if (delay === null) throw error
    await sleep(delay, spec.signal)
  }
}
