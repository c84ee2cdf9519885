// HMAC-SHA256 for the OAuth state of installs and the tracker's inbound webhook signature.
import { toBase64Url, toHex } from '../../lib/secrets.ts'

async function hmac(key: Uint8Array | string, message: string): Promise<Uint8Array> {
  const raw = typeof key === 'string' ? new TextEncoder().encode(key) : new Uint8Array(key)
  const imported = await crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return new Uint8Array(await crypto.subtle.sign('HMAC', imported, new TextEncoder().encode(message)))
}

export const hmacHex = async (key: Uint8Array | string, message: string) => toHex(await hmac(key, message))
export const hmacBase64Url = async (key: Uint8Array | string, message: string) => toBase64Url(await hmac(key, message))
