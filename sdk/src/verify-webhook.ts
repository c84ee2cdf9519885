// Standard Webhooks verification (docs/api.md#webhooks) on Web Crypto alone, so it runs on Node, Bun, Deno,
// edge runtimes and browsers alike.
import type { WebhookEvent } from './api-types.js'
import { WebhookVerificationError } from './core/errors.js'

/** A Fetch `Headers`, or a plain object such as Node's `req.headers` (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now; default 300 (five minutes), against replays. */
  toleranceSeconds?: number
  /** Seconds since the epoch to check against; for tests. */
  now?: number
}

const encoder = new TextEncoder()

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value
  }
  return undefined
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0))
  } catch {
    return null
  }
}

/** Compares every byte whatever the first difference, so timing tells nothing about the expected signature. */
function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!
  return difference === 0
}

async function subtleCrypto(): Promise<SubtleCrypto> {
  if (globalThis.crypto?.subtle) return globalThis.crypto.subtle
  // Node 18 keeps Web Crypto off the global object; the specifier is a variable so bundlers for browsers leave it alone.
  const nodeCrypto = 'node:crypto'
  return ((await import(nodeCrypto)) as { webcrypto: Crypto }).webcrypto.subtle
}

/**
 * Checks a delivery's `webhook-signature` against the endpoint's `whsec_...` secret and returns the
 * event. Pass the raw body exactly as received: re-serialised JSON will not verify. The event is a
 * union over `type`, so `switch (event.type)` narrows `data` to that kind's payload.
 */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header')

  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('Invalid webhook-timestamp')
  const sentAt = Number(timestamp)
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - sentAt) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError('webhook-timestamp is too far from now')

  const key = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret)
  if (!key || key.length === 0) throw new WebhookVerificationError('The secret is not `whsec_` followed by base64')

  const payload = typeof body === 'string' ? encoder.encode(body) : body
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + payload.length)
  signed.set(prefix)
  signed.set(payload, prefix.length)
  const subtle = await subtleCrypto()
  const hmacKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const expected = new Uint8Array(await subtle.sign('HMAC', hmacKey, signed))

  // Several signatures appear while a secret is being rotated; any one valid v1 signature will do.
  const valid = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2)
    const candidate = version === 'v1' && signature ? fromBase64(signature) : null
    return candidate !== null && timingSafeEqual(candidate, expected)
  })
  if (!valid) throw new WebhookVerificationError('No valid signature in webhook-signature')

  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  try {
    return JSON.parse(text) as WebhookEvent
  } catch {
    throw new WebhookVerificationError('The signed body is not JSON')
  }
}
