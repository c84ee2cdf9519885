// The relying-party side of OpenID Connect against the operator's configured issuers: discovery,
// the code exchange, and ID-token validation with jose against the issuer's own JWKS.
import { createRemoteJWKSet, customFetch, jwtVerify, type JWTPayload, type RemoteJWKSet } from 'jose'
import type { AppContext } from '../../context.ts'

export type Region = 'US' | 'EU'

/** Why a login failed; the callback redirects with it as `error`, so each names one cause a person can act on. */
export type IdpFailure =
  | 'access_denied' | 'idp_error' | 'missing_state' | 'state_mismatch' | 'expired' | 'issuer_mismatch'
  | 'token_exchange_failed' | 'invalid_id_token' | 'idp_unavailable' | 'email_unverified' | 'email_missing'

export class IdpError extends Error {
  constructor(readonly reason: IdpFailure, detail: string) {
    super(detail)
  }
}

interface Discovery {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
  userinfo_endpoint?: string
}

const DISCOVERY_TTL_MS = 10 * 60_000
const FETCH_TIMEOUT_MS = 5000
const MAX_BODY_BYTES = 256 * 1024
/** Asymmetric algorithms only: an HS256 ID token would be keyed with the shared client secret. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

/**
 * The single place the identity-provider client reaches the network, through the outbound guard. URLs
 * on the configured issuer's origin are the operator's (private addresses as OPERATOR_URLS_ALLOW_PRIVATE
 * or WEBHOOK_ALLOW_PRIVATE allow); endpoints the discovery document puts elsewhere are the provider's
 * choice (private only with WEBHOOK_ALLOW_PRIVATE). Never through redirects, bounded in time and size.
 */
async function idpFetch(ctx: AppContext, issuer: string, url: string, init: { method?: string; headers?: HeadersInit; body?: string; signal?: AbortSignal } = {}): Promise<Response> {
  const origin = new URL(issuer).origin
  const response = await ctx.outbound.fetch(url, {
    ...init,
    timeoutMs: FETCH_TIMEOUT_MS,
    maxBytes: MAX_BODY_BYTES,
    ...(new URL(url).origin === origin ? { operatorBase: origin } : { httpsOnly: true }),
  })
  if (response.truncated) throw new Error(`${url} answered more than ${MAX_BODY_BYTES} bytes`)
  return response.toResponse()
}

async function readJson(response: Response): Promise<Record<string, unknown>> {
  const value = JSON.parse(await response.text())
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object')
  return value as Record<string, unknown>
}

// Per-app caches of public, issuer-published documents: nothing that processes must agree on. Kept per
// app so that a cached document never skips the fetch checks of an app configured differently.
interface Caches { discoveries: Map<string, { at: number; value: Discovery }>; keySets: Map<string, RemoteJWKSet> }
const cachesByApp = new WeakMap<AppContext, Caches>()
function caches(ctx: AppContext): Caches {
  let value = cachesByApp.get(ctx)
  if (!value) cachesByApp.set(ctx, (value = { discoveries: new Map(), keySets: new Map() }))
  return value
}

export async function discover(ctx: AppContext, issuer: string): Promise<Discovery> {
  const cached = caches(ctx).discoveries.get(issuer)
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.value
  let document: Record<string, unknown>
  try {
    const response = await idpFetch(ctx, issuer, `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } })
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    document = await readJson(response)
  } catch (error) {
    throw new IdpError('idp_unavailable', `discovery of ${issuer} failed: ${(error as Error).message}`)
  }
  // The document must name exactly the configured issuer (OpenID Connect Discovery §4.3), or its
  // endpoints could belong to someone else.
  if (document.issuer !== issuer) throw new IdpError('issuer_mismatch', `discovery of ${issuer} names issuer ${String(document.issuer)}`)
  for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    if (typeof document[field] !== 'string') throw new IdpError('idp_unavailable', `discovery of ${issuer} lacks ${field}`)
  }
  const value = document as unknown as Discovery
  caches(ctx).discoveries.set(issuer, { at: Date.now(), value })
  return value
}

function keySet(ctx: AppContext, issuer: string, jwksUri: string): RemoteJWKSet {
  const cacheKey = `${issuer} ${jwksUri}`
  const { keySets } = caches(ctx)
  let set = keySets.get(cacheKey)
  if (!set) {
    set = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: FETCH_TIMEOUT_MS, [customFetch]: (url, options) => idpFetch(ctx, issuer, url, { headers: options.headers, signal: options.signal }) })
    keySets.set(cacheKey, set)
  }
  return set
}

/** `client_secret_basic` encodes id and secret as form values before base64 (RFC 6749 §2.3.1). */
const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+')

export async function exchangeCode(ctx: AppContext, provider: Discovery, input: { code: string; redirectUri: string; verifier: string }) {
  const clientId = ctx.config.idpClientId!
  const body = new URLSearchParams({ grant_type: 'authorization_code', code: input.code, redirect_uri: input.redirectUri, code_verifier: input.verifier })
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }
  if (ctx.config.idpClientSecret) headers.authorization = `Basic ${btoa(`${formEncode(clientId)}:${formEncode(ctx.config.idpClientSecret)}`)}`
  else body.set('client_id', clientId)

  let response: Response
  let payload: Record<string, unknown>
  try {
    response = await idpFetch(ctx, provider.issuer, provider.token_endpoint, { method: 'POST', headers, body: body.toString() })
    payload = await readJson(response)
  } catch (error) {
    throw new IdpError('idp_unavailable', `token endpoint of ${provider.issuer} failed: ${(error as Error).message}`)
  }
  if (!response.ok) {
    const reason = response.status >= 500 ? 'idp_unavailable' : 'token_exchange_failed'
    throw new IdpError(reason, `token endpoint answered ${response.status} ${String(payload.error ?? '')}`)
  }
  if (typeof payload.id_token !== 'string') throw new IdpError('invalid_id_token', 'the token response carries no id_token')
  return { idToken: payload.id_token, accessToken: typeof payload.access_token === 'string' ? payload.access_token : undefined }
}

export interface IdTokenClaims extends JWTPayload {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
}

/** Signature by the issuer's JWKS, then `iss` (exactly), `aud`/`azp`, `exp`, `iat` and `nonce`. */
export async function validateIdToken(ctx: AppContext, provider: Discovery, idToken: string, nonce: string): Promise<IdTokenClaims> {
  const clientId = ctx.config.idpClientId!
  let payload: JWTPayload
  try {
    ({ payload } = await jwtVerify(idToken, keySet(ctx, provider.issuer, provider.jwks_uri), {
      issuer: provider.issuer,
      audience: clientId,
      algorithms: ALGORITHMS,
      requiredClaims: ['sub', 'exp', 'iat'],
      clockTolerance: 30,
    }))
  } catch (error) {
    const code = (error as { code?: string }).code ?? ''
    if (code === 'ERR_JWKS_TIMEOUT') throw new IdpError('idp_unavailable', `JWKS of ${provider.issuer} did not answer`)
    throw new IdpError('invalid_id_token', `ID token rejected: ${(error as Error).message}`)
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
  if (audiences.length > 1 && payload.azp !== clientId) throw new IdpError('invalid_id_token', 'ID token has several audiences and azp is not this client')
  if (payload.nonce !== nonce) throw new IdpError('invalid_id_token', 'ID token nonce does not match this login')
  return payload as IdTokenClaims
}

/**
 * Many providers put the e-mail claims only in the UserInfo response (OpenID Connect Core §5.4 when
 * requested by scope). Its `sub` must be the ID token's (§5.3.2), or the claims belong to someone else.
 */
export async function withUserInfo(ctx: AppContext, provider: Discovery, claims: IdTokenClaims, accessToken: string | undefined): Promise<IdTokenClaims> {
  if (typeof claims.email === 'string' || !provider.userinfo_endpoint || !accessToken) return claims
  let info: Record<string, unknown>
  try {
    const response = await idpFetch(ctx, provider.issuer, provider.userinfo_endpoint, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } })
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
    info = await readJson(response)
  } catch (error) {
    throw new IdpError('idp_unavailable', `userinfo of ${provider.issuer} failed: ${(error as Error).message}`)
  }
  if (info.sub !== claims.sub) throw new IdpError('invalid_id_token', 'userinfo names another subject than the ID token')
  return {
    ...claims,
    email: typeof info.email === 'string' ? info.email : undefined,
    email_verified: info.email_verified === true,
    name: typeof claims.name === 'string' ? claims.name : typeof info.name === 'string' ? info.name : undefined,
  }
}
