// One delivery attempt over HTTP. Runs in the worker thread; pure apart from DNS and the request.
import type { Dns } from '../../lib/dns.ts'
import { signatureHeader } from './signing.ts'
import { checkTarget, TargetRefused } from './target.ts'

export interface DeliveryJob {
  webhookId: string
  eventId: string
  eventType: string
  /** 1 for the first attempt. */
  attempt: number
  manual: boolean
  url: string
  /** The current secret first, then the previous one while a rotation overlaps. */
  secrets: string[]
  /** The exact JSON body; the same bytes on every attempt. */
  body: string
}

export interface AttemptResult {
  success: boolean
  status: number | null
  body: string | null
  error: string | null
  durationMs: number
  /** From `Retry-After` on 429 and 503. */
  retryAfterMs: number | null
}

export interface SendSettings {
  dns: Dns
  allowPrivate: boolean
  timeoutMs?: number
}

export const RESPONSE_BODY_LIMIT = 4096

/** The first 4 KiB of the answer; the rest is never read. */
async function readPrefix(response: Response): Promise<string> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let done = false
  while (size < RESPONSE_BODY_LIMIT) {
    const next = await reader.read()
    if (next.done) {
      done = true
      break
    }
    chunks.push(next.value)
    size += next.value.length
  }
  // Only an unfinished body is cancelled, and not awaited: a cancel on a finished stream can stay pending.
  if (!done) void reader.cancel().catch(() => {})
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT))
}

export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

export async function sendWebhook(job: DeliveryJob, settings: SendSettings): Promise<AttemptResult> {
  const started = performance.now()
  const result = (fields: Partial<AttemptResult>): AttemptResult => ({
    success: false, status: null, body: null, error: null, retryAfterMs: null, ...fields, durationMs: Math.round(performance.now() - started),
  })
  try {
    const target = await checkTarget(job.url, settings.dns, settings.allowPrivate)
    // Connect to the address that was checked; the name still goes in Host and in TLS (SNI and certificate check).
    const connectTo = new URL(target.url)
    connectTo.hostname = target.address.includes(':') ? `[${target.address}]` : target.address
    const timestamp = Math.floor(Date.now() / 1000)
    const response = await fetch(connectTo, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(settings.timeoutMs ?? 10_000),
      tls: { serverName: target.url.hostname.replace(/^\[(.*)\]$/, '$1') },
      headers: {
        host: target.url.host,
        'content-type': 'application/json',
        'user-agent': 'Chorus-Webhooks/1.0',
        'webhook-id': job.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': await signatureHeader(job.secrets, job.eventId, timestamp, job.body),
        'x-chorus-event': job.eventType,
      },
      body: job.body,
    })
    const body = await readPrefix(response)
    const success = response.status >= 200 && response.status < 300
    const retryAfterMs = response.status === 429 || response.status === 503 ? parseRetryAfter(response.headers.get('retry-after')) : null
    const error = success ? null : response.status >= 300 && response.status < 400 ? `Redirect (${response.status}) not followed` : `HTTP ${response.status}`
    return result({ success, status: response.status, body, error, retryAfterMs })
  } catch (error) {
    if (error instanceof TargetRefused) return result({ error: `Refused: ${error.message}` })
    const name = (error as Error).name
    if (name === 'TimeoutError' || name === 'AbortError') return result({ error: `Timed out after ${(settings.timeoutMs ?? 10_000) / 1000} s` })
    const code = (error as { code?: string }).code
    return result({ error: code ? `${code}: ${(error as Error).message}` : (error as Error).message })
  }
}
