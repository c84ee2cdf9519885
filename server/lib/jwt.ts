import { SignJWT, jwtVerify } from 'jose'

// HS256 JWTs signed with purpose-derived keys (crypto.deriveKey). The algorithm is pinned on verify,
// so `alg: none` or an RS/HS confusion is refused by jose before any claim is read.

export interface SignOptions {
  key: Uint8Array
  issuer: string
  audience: string
  subject: string
  expiresInSeconds: number
  claims?: Record<string, unknown>
  /** The `typ` header; a token kind of its own (e.g. widget sessions) gets its own, checked on verify. */
  typ?: string
}

export function signJwt(options: SignOptions): Promise<string> {
  return new SignJWT(options.claims ?? {})
    .setProtectedHeader({ alg: 'HS256', typ: options.typ ?? 'JWT' })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setSubject(options.subject)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + options.expiresInSeconds)
    .sign(options.key)
}

/** The payload when the token is genuine, unexpired and meant for `audience`; otherwise null. */
export async function verifyJwt(token: string, key: Uint8Array, issuer: string, audience: string, typ?: string) {
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer, audience, typ, requiredClaims: ['exp', 'sub'] })
    return payload
  } catch {
    return null
  }
}
