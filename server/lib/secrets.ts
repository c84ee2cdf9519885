// The one owner of the service's cryptographic primitives: sealing secrets at rest, purpose-bound keys
// derived from SECRET_KEY, constant-time comparison, hashing and random tokens. Web Crypto, except for
// SHA-256 and HMAC on hot paths (every API-key request, every ETag, every webhook signature): Bun's native
// hasher is synchronous and costs 0.2-1 µs a call where `crypto.subtle` costs 6 µs (digest) and 24 µs
// (HMAC sign) of CPU on this project's benchmark machine, and a promise hop each.

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** Hex of a digest; a lookup table, because it runs on every API-key request. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  let out = ''
  for (const byte of bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)) out += HEX[byte]
  return out
}

export function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

export function fromBase64Url(value: string): Uint8Array<ArrayBuffer> {
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'))
  return Uint8Array.from(binary, (char) => char.charCodeAt(0))
}

/** Hex SHA-256 of a string or bytes (token hashes, ETags, fingerprints). */
export function sha256Hex(value: string | Uint8Array): string {
  return Bun.SHA256.hash(value, 'hex')
}

/** Base64 HMAC-SHA256 of `message` under raw `key` bytes. */
export function hmacSha256Base64(key: Uint8Array, message: string | Uint8Array): string {
  return new Bun.CryptoHasher('sha256', key).update(message).digest('base64')
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

/** Derives a purpose-bound 256-bit key from SECRET_KEY (HKDF-SHA-256), so one secret never signs two kinds of thing. */
export async function deriveKey(secret: string, purpose: string): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey('raw', encoder.encode(secret), 'HKDF', false, ['deriveBits'])
  const bits = await crypto.subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: encoder.encode('chorus'), info: encoder.encode(purpose) },
    material,
    256,
  )
  return new Uint8Array(bits)
}

/**
 * Every sealed value starts with this, so a stored value names its own format (values written by the
 * earlier formats began with `v1.` and were re-sealed at start-up, see server/db/data-migrations.ts).
 */
export const SEALED_PREFIX = 'sealed:v2:'
const SEALING_PURPOSE = 'sealed-secrets:v2'

export class UnsealError extends Error {}

/** Seals and opens secrets kept at rest. */
export interface Sealer {
  /**
   * AES-256-GCM with a fresh 96-bit IV: `sealed:v2:<iv>:<ciphertext>` in base64url. `context` names
   * where the value belongs (e.g. `webhook:<id>`) and is authenticated, so a value copied to another
   * row or purpose does not open.
   */
  seal(plaintext: string, context: string): Promise<string>
  /** The plaintext of `seal`; throws UnsealError when the value was altered or sealed under another key or context. */
  unseal(sealed: string, context: string): Promise<string>
}

export interface Secrets extends Sealer {
  /** A purpose-bound 256-bit key derived from SECRET_KEY (cached per purpose). */
  deriveKey(purpose: string): Promise<Uint8Array>
}

/** A Sealer over raw key bytes (32 bytes). */
async function sealerFromKey(raw: Uint8Array): Promise<Sealer> {
  const key = await crypto.subtle.importKey('raw', new Uint8Array(raw), 'AES-GCM', false, ['encrypt', 'decrypt'])
  return {
    async seal(plaintext, context) {
      const iv = crypto.getRandomValues(new Uint8Array(12))
      const ciphertext = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: encoder.encode(context) }, key, encoder.encode(plaintext))
      return `${SEALED_PREFIX}${toBase64Url(iv)}:${toBase64Url(new Uint8Array(ciphertext))}`
    },
    async unseal(sealed, context) {
      if (!sealed.startsWith(SEALED_PREFIX)) throw new UnsealError('Not a sealed value of the current format')
      const [iv, ciphertext, extra] = sealed.slice(SEALED_PREFIX.length).split(':')
      if (!iv || !ciphertext || extra !== undefined) throw new UnsealError('Malformed sealed value')
      try {
        const plaintext = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: fromBase64Url(iv), additionalData: encoder.encode(context) }, key, fromBase64Url(ciphertext))
        return decoder.decode(plaintext)
      } catch {
        throw new UnsealError('The sealed value does not open with this key and context')
      }
    },
  }
}

/** The secrets of one SECRET_KEY; built once per app (AppContext.secrets). */
export async function createSecrets(secretKey: string): Promise<Secrets> {
  const sealingKey = await deriveKey(secretKey, SEALING_PURPOSE)
  const sealer = await sealerFromKey(sealingKey)
  const derived = new Map<string, Promise<Uint8Array>>()
  return {
    seal: sealer.seal,
    unseal: sealer.unseal,
    deriveKey(purpose) {
      let key = derived.get(purpose)
      if (!key) derived.set(purpose, (key = deriveKey(secretKey, purpose)))
      return key
    },
  }
}

/**
 * The context of every kind of sealed value, in one list. A rotation copies a sealed value into a
 * `previous_…` column of the same row, so contexts name the row, not the column.
 */
export const sealContext = {
  webhookSecret: (webhookId: string) => `webhook:${webhookId}`,
  jwtConfigSecret: (workspaceId: string) => `jwt-config:${workspaceId}`,
  dkimPrivateKey: (workspaceId: string) => `sending-domain:${workspaceId}:dkim`,
  /** The short-lived identity-provider login kept in the browser's idp_oauth_state cookie. */
  idpLoginState: () => 'idp-oauth-state',
  /** A chat or tracker provider's access or refresh token, bound to its integration row and role. */
  integrationToken: (integrationId: string, kind: 'access' | 'refresh') => `integration:${integrationId}:${kind}`,
}
