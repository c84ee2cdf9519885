// One delivery attempt over HTTP through the outbound guard. Pure apart from DNS and the request.
import { OutboundRefused, type Outbound } from '../../lib/outbound.ts'
import { signatureHeader } from './signing.ts'

export interface DeliveryJob {
  webhookId: string
  eventId: string
  eventType: string
  /** 1 for the first attempt. */
  attempt: number
  manual: boolean
  url: string
  /**
   * The current secret first, then the previous one while a rotation overlaps. Empty when the endpoint's sealed
   * secret cannot be opened (SECRET_KEY changed, a damaged row): the attempt then fails without a request.
   */
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
  outbound: Outbound
  timeoutMs?: number
}

export const RESPONSE_BODY_LIMIT = 4096

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
  if (!job.secrets.length) return result({ error: 'Not sent: the endpoint\'s signing secret cannot be opened with this server\'s SECRET_KEY (rotate the secret)' })
  try {
    const timestamp = Math.floor(Date.now() / 1000)
    const response = await settings.outbound.fetch(job.url, {
      method: 'POST',
      timeoutMs: settings.timeoutMs ?? 10_000,
      maxBytes: RESPONSE_BODY_LIMIT,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Chorus-Webhooks/1.0',
        'webhook-id': job.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(job.secrets, job.eventId, timestamp, job.body),
        'x-chorus-event': job.eventType,
      },
      body: job.body,
    })
    // Kept as text in PostgreSQL, which cannot hold NUL: an answer with one could never be recorded.
    const body = response.text().replaceAll('\u0000', '')
    const success = response.status >= 200 && response.status < 300
    const retryAfterMs = response.status === 429 || response.status === 503 ? parseRetryAfter(response.headers.get('retry-after')) : null
    const error = success ? null : response.status >= 300 && response.status < 400 ? `Redirect (${response.status}) not followed` : `HTTP ${response.status}`
    return result({ success, status: response.status, body, error, retryAfterMs })
  } catch (error) {
    if (error instanceof OutboundRefused) return result({ error: `Refused: ${error.message}` })
    const name = (error as Error).name
    if (name === 'TimeoutError' || name === 'AbortError') return result({ error: `Timed out after ${(settings.timeoutMs ?? 10_000) / 1000} s` })
    const code = (error as { code?: string }).code
    return result({ error: code ? `${code}: ${(error as Error).message}` : (error as Error).message })
  }
}
