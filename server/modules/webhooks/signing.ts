// Standard Webhooks signing (docs/api.md#webhooks): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by
// the base64-decoded part of the `whsec_` secret.

const PREFIX = 'whsec_'

/** `whsec_` + standard base64 (not base64url) of 32 random bytes, the format receivers' libraries expect. */
export function newSecret(): string {
  return PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')
}

/** Imported HMAC keys by secret: a busy endpoint signs thousands of deliveries with the same one. */
const keys = new Map<string, Promise<CryptoKey>>()
const KEYS_KEPT = 1000

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret)
  if (!key) {
    if (keys.size >= KEYS_KEPT) keys.delete(keys.keys().next().value!)
    keys.set(secret, (key = crypto.subtle.importKey('raw', Buffer.from(secret.slice(PREFIX.length), 'base64'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])))
  }
  return key
}

async function sign(secret: string, signed: Uint8Array<ArrayBuffer>): Promise<string> {
  const key = await hmacKey(secret)
  return `v1,${Buffer.from(await crypto.subtle.sign('HMAC', key, signed)).toString('base64')}`
}

/** The `webhook-signature` value: one entry per secret, space-separated (two while a rotation overlaps). */
export async function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): Promise<string> {
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`)
  return (await Promise.all(secrets.map((secret) => sign(secret, signed)))).join(' ')
}
