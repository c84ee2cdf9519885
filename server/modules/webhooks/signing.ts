// Standard Webhooks signing (docs/api.md#webhooks): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by
// the base64-decoded part of the `whsec_` secret.

import { hmacSha256Base64 } from '../../lib/secrets.ts'

const PREFIX = 'whsec_'

/** `whsec_` + standard base64 (not base64url) of 32 random bytes, the format receivers' libraries expect. */
export function newSecret(): string {
  return PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')
}

/** Decoded key bytes by secret: a busy endpoint signs thousands of deliveries with the same one. */
const keys = new Map<string, Uint8Array>()
const KEYS_KEPT = 1000

function keyBytes(secret: string): Uint8Array {
  let key = keys.get(secret)
  if (!key) {
    if (keys.size >= KEYS_KEPT) keys.delete(keys.keys().next().value!)
    keys.set(secret, (key = Buffer.from(secret.slice(PREFIX.length), 'base64')))
  }
  return key
}

/** The `webhook-signature` value: one entry per secret, space-separated (two while a rotation overlaps). */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  const signed = `${id}.${timestamp}.${body}`
  return secrets.map((secret) => `v1,${hmacSha256Base64(keyBytes(secret), signed)}`).join(' ')
}
