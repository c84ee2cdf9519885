import { SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import type { Harness, TestClient } from './harness.ts'

export const HOUR = 3600
const now = () => Math.floor(Date.now() / 1000)

export interface TokenOptions {
  alg?: string
  kid?: string
  /** Seconds from now; null leaves exp out. */
  expiresIn?: number | null
  claims?: JWTPayload
}

/** A customer token as a workspace's backend would mint it. */
export function customerToken(key: Uint8Array | CryptoKey | string, { alg = 'HS256', kid, expiresIn = HOUR, claims = {} }: TokenOptions = {}) {
  const jwt = new SignJWT({ sub: 'user-42', email: 'ada@example.com', name: 'Ada Lovelace', ...claims }).setProtectedHeader({ alg, typ: 'JWT', ...(kid && { kid }) }).setIssuedAt()
  if (expiresIn !== null) jwt.setExpirationTime(now() + expiresIn)
  return jwt.sign(typeof key === 'string' ? new TextEncoder().encode(key) : key)
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** An unsigned `alg: none` token, which must never pass. */
export const unsignedToken = (claims: JWTPayload = {}) => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'user-42', exp: now() + HOUR, ...claims })}.`

/** Configures HS256 through the dashboard route and returns the generated secret. */
export async function configureHs256(owner: TestClient, slug: string, extra: Record<string, unknown> = {}) {
  const res = await owner.post(`/api/v1/workspaces/${slug}/jwt-config`, { algorithm: 'HS256', ...extra })
  if (res.status !== 201) throw new Error(`jwt-config failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.secret as string
}

let ip = 0
/** A fresh client address per call site, so per-IP limits of one test do not leak into another (needs TRUST_PROXY). */
export const nextIp = () => `198.51.100.${(++ip % 250) + 1}`

/** Identifies through the real route and returns the response. */
export function identify(h: Harness, slug: string, token: string, from = nextIp()) {
  return h.client().post(`/api/v1/workspaces/${slug}/identify`, { token }, { headers: { 'x-forwarded-for': from } })
}
