// Web Crypto helpers shared by tokens, API keys and webhook signing.

const encoder = new TextEncoder()

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** Hex of a digest; a lookup table, because it runs on every API-key request. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  let out = ''
  for (const byte of bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)) out += HEX[byte]
  return out
}

export function toBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

export async function sha256Hex(value: string): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', encoder.encode(value)))
}

/** An opaque, URL-safe token with `bytes` of entropy. */
export function randomToken(bytes = 32): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(bytes)))
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Uniform base62 string (rejection sampling avoids modulo bias). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62]
    }
  }
  return out
}

/** Compares two strings in time independent of where they differ. */
export function timingSafeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a)
  const right = encoder.encode(b)
  let diff = left.length ^ right.length
  for (let i = 0; i < Math.max(left.length, right.length); i++) diff |= (left[i] ?? 0) ^ (right[i] ?? 0)
  return diff === 0
}

/** Derives a purpose-bound 256-bit key from SECRET_KEY, so one secret never signs two kinds of thing. */
export async function deriveKey(secret: string, purpose: string): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveBits'])
  const bits = await crypto.subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: encoder.encode('chorus'), info: encoder.encode(purpose) },
    material,
    256,
  )
  return new Uint8Array(bits)
}

export function fromBase64Url(value: string): Uint8Array<ArrayBuffer> {
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'))
  return Uint8Array.from(binary, (char) => char.charCodeAt(0))
}

const aesKey = (key: Uint8Array) => crypto.subtle.importKey('raw', new Uint8Array(key), 'AES-GCM', false, ['encrypt', 'decrypt'])

/**
 * Encrypts a secret for storage with AES-256-GCM: `v1.<iv>.<ciphertext>` in base64url. `context`
 * (e.g. the owning row's id) is authenticated, so a sealed value copied to another row does not open.
 */
export async function seal(key: Uint8Array, plaintext: string, context: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const ciphertext = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: encoder.encode(context) }, await aesKey(key), encoder.encode(plaintext))
  return `v1.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(ciphertext))}`
}

/** The plaintext of `seal`; throws when the value was altered or sealed under another key or context. */
export async function unseal(key: Uint8Array, sealed: string, context: string): Promise<string> {
  const [version, iv, ciphertext] = sealed.split('.')
  if (version !== 'v1' || !iv || !ciphertext) throw new Error('Unknown sealed-value format')
  const plaintext = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: fromBase64Url(iv), additionalData: encoder.encode(context) }, await aesKey(key), fromBase64Url(ciphertext))
  return new TextDecoder().decode(plaintext)
}
