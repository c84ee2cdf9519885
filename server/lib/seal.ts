// Secrets the service must read back (webhook signing secrets, DKIM private keys) are kept sealed
// with AES-256-GCM under a key derived from SECRET_KEY, so a database dump alone does not reveal them.
import { deriveKey } from './crypto.ts'

const VERSION = 'v1'

export type SealKey = CryptoKey

export const sealKeyBytes = (secretKey: string) => deriveKey(secretKey, 'sealed-secrets')

const keys = new Map<string, Promise<SealKey>>()

/** The key for this SECRET_KEY, derived once per process. */
export function sealKey(secretKey: string): Promise<SealKey> {
  let key = keys.get(secretKey)
  if (!key) keys.set(secretKey, (key = sealKeyBytes(secretKey).then(importSealKey)))
  return key
}

/** From raw key bytes: worker threads get the bytes (CryptoKey cannot be posted) and import them. */
export function importSealKey(raw: Uint8Array): Promise<SealKey> {
  return crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, 'AES-GCM', false, ['encrypt', 'decrypt'])
}

const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const fromBase64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'))

/** `v1.<iv>.<ciphertext>` in base64. */
export async function seal(key: SealKey, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, new TextEncoder().encode(plaintext))
  return `${VERSION}.${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`
}

export async function unseal(key: SealKey, value: string): Promise<string> {
  const [version, iv, data] = value.split('.')
  if (version !== VERSION || !iv || !data) throw new Error('Not a sealed value')
  const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: fromBase64(iv) }, key, fromBase64(data))
  return new TextDecoder().decode(plain)
}
