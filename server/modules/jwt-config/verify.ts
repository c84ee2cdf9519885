import { errors, importSPKI, jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyGetKey } from 'jose'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { OutboundRefused } from '../../lib/outbound.ts'
import { sealContext } from '../../lib/secrets.ts'
import { remoteKeySet } from './jwks.ts'
import type { JwtConfig } from './service.ts'

/** How far ahead a customer token may expire: a leaked token must not identify someone for long. */
export const MAX_TOKEN_LIFETIME_SECONDS = 24 * 3600
const CLOCK_TOLERANCE_SECONDS = 30

const refused = (message: string) => new ApiError('UNAUTHENTICATED', `Identify refused: ${message}`)

const encoder = new TextEncoder()
const pemKeys = new Map<string, CryptoKey>()

async function pemKey(pem: string, algorithm: string) {
  const cacheKey = `${algorithm}\n${pem}`
  let key = pemKeys.get(cacheKey)
  if (!key) {
    key = await importSPKI(pem, algorithm)
    if (pemKeys.size >= 1000) pemKeys.delete(pemKeys.keys().next().value!)
    pemKeys.set(cacheKey, key)
  }
  return key
}

/** The keys to try, in order: the HS256 secret and, during a rotation's overlap, the previous one. */
async function candidateKeys(ctx: AppContext, config: JwtConfig): Promise<(Uint8Array | CryptoKey | JWTVerifyGetKey)[]> {
  if (config.algorithm === 'HS256') {
    const sealed = [config.secretSealed]
    if (config.previousSecretSealed && config.previousSecretExpiresAt && config.previousSecretExpiresAt > new Date()) sealed.push(config.previousSecretSealed)
    const secrets = await Promise.all(sealed.filter((value): value is string => value !== null).map((value) => ctx.secrets.unseal(value, sealContext.jwtConfigSecret(config.workspaceId))))
    return secrets.map((secret) => encoder.encode(secret))
  }
  if (config.publicKey) return [await pemKey(config.publicKey, config.algorithm)]
  return [remoteKeySet(config.workspaceId, config.jwksUrl!, ctx.outbound)]
}

function explain(error: unknown, config: JwtConfig): ApiError {
  if (error instanceof errors.JWTExpired) return refused('the token has expired')
  if (error instanceof errors.JOSEAlgNotAllowed) return refused(`the token must be signed with ${config.algorithm}`)
  if (error instanceof errors.JWSSignatureVerificationFailed) return refused("the signature does not match this workspace's key")
  if (error instanceof errors.JWKSNoMatchingKey) return refused("no key of the workspace's JWKS matches the token's kid and alg")
  if (error instanceof OutboundRefused) return refused(`the workspace's JWKS address ${error.message}`)
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return refused("the workspace's JWKS could not be fetched")
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === 'missing') return refused(`the token has no "${error.claim}" claim (exp and sub are required)`)
    if (error.claim === 'iss') return refused(`the issuer (iss) must be "${config.issuer}"`)
    if (error.claim === 'aud') return refused(`the audience (aud) must be "${config.audience}"`)
    return refused(`the "${error.claim}" claim is not valid (${error.reason})`)
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return refused('the token is not a well-formed signed JWT')
  return refused("the workspace's key could not verify the token")
}

/**
 * Verifies a token signed by the workspace's own backend: the algorithm is pinned to the configured
 * one (so `alg: none` and algorithm confusion fail), `exp` and `sub` are required, `exp` is at most
 * 24 h ahead, and issuer and audience are checked when configured.
 */
export async function verifyCustomerToken(ctx: AppContext, config: JwtConfig, token: string): Promise<JWTPayload & { sub: string; exp: number }> {
  const options = {
    algorithms: [config.algorithm],
    requiredClaims: ['exp', 'sub'],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    ...(config.issuer !== null && { issuer: config.issuer }),
    ...(config.audience !== null && { audience: config.audience }),
  }
  let payload: JWTPayload | undefined
  let failure: unknown
  for (const key of await candidateKeys(ctx, config)) {
    try {
      payload = (await jwtVerify(token, key as Uint8Array, options)).payload
      break
    } catch (error) {
      failure = error
      // Only a signature mismatch is worth another key; any other failure is the token's own.
      if (!(error instanceof errors.JWSSignatureVerificationFailed)) break
    }
  }
  if (!payload) {
    if (failure instanceof errors.JWKSTimeout || (failure instanceof Error && !(failure instanceof errors.JOSEError))) {
      ctx.log.warn('identify: JWKS fetch failed', { workspace_id: config.workspaceId, error: failure.message })
    }
    throw explain(failure, config)
  }
  if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 255) throw refused('sub must be a non-empty string of at most 255 characters')
  if (payload.exp! > Date.now() / 1000 + MAX_TOKEN_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) {
    throw refused('exp is more than 24 hours ahead; mint short-lived tokens')
  }
  return payload as JWTPayload & { sub: string; exp: number }
}
