import { t } from 'elysia'
import type { jwtConfigs } from '../../db/schema/index.ts'
import { Enum, Timestamp } from '../../lib/schema.ts'

export const JwtAlgorithm = Enum(['HS256', 'RS256', 'ES256', 'EdDSA'], {
  description: '`HS256`: the service generates a shared secret. `RS256`, `ES256` (P-256), `EdDSA` (Ed25519): give `public_key` or `jwks_url`',
})
const PublicKey = t.String({ minLength: 1, maxLength: 16_384, description: 'SPKI PEM (`-----BEGIN PUBLIC KEY-----`) matching the algorithm' })
const JwksUrl = t.String({ format: 'uri', maxLength: 2048, description: 'HTTPS address of a JSON Web Key Set; fetched and cached (10 min)' })
const Claim = (what: string) => t.String({ minLength: 1, maxLength: 255, description: `When set, the token's \`${what}\` must equal it` })

export const JWTConfigCreate = t.Object({
  algorithm: JwtAlgorithm,
  public_key: t.Optional(PublicKey),
  jwks_url: t.Optional(JwksUrl),
  issuer: t.Optional(Claim('iss')),
  audience: t.Optional(Claim('aud')),
}, { additionalProperties: false, $id: 'JwtConfigCreate', examples: [{ algorithm: 'HS256', issuer: 'https://app.acme.example', audience: 'chorus' }] })

export const JWTConfigUpdate = t.Object({
  algorithm: t.Optional(JwtAlgorithm),
  public_key: t.Optional(t.Nullable(PublicKey)),
  jwks_url: t.Optional(t.Nullable(JwksUrl)),
  issuer: t.Optional(t.Nullable(Claim('iss'))),
  audience: t.Optional(t.Nullable(Claim('aud'))),
}, { additionalProperties: false, minProperties: 1, $id: 'JwtConfigUpdate', examples: [{ audience: null }], description: 'Null clears a field. Switching to HS256 generates a secret, returned in this response only' })

export const SecretRotation = t.Object({
  overlap_seconds: t.Optional(t.Integer({ minimum: 0, maximum: 7 * 86_400, description: 'How long the previous secret keeps verifying (default 86400 = 24 h; 0 revokes it at once, e.g. after a leak)' })),
}, { additionalProperties: false, $id: 'JwtSecretRotation', examples: [{ overlap_seconds: 86400 }] })

export const JWTConfigResponse = t.Object({
  algorithm: JwtAlgorithm,
  issuer: t.Nullable(t.String()),
  audience: t.Nullable(t.String()),
  jwks_url: t.Nullable(t.String()),
  public_key: t.Nullable(t.String()),
  has_secret: t.Boolean({ description: 'An HS256 secret is set (its value is never shown again)' }),
  previous_secret_expires_at: t.Nullable(Timestamp),
  secret: t.Optional(t.String({ description: 'The HS256 secret (the HMAC key is its UTF-8 bytes). Only in the response that creates or rotates it' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'JwtConfig', examples: [{ algorithm: 'HS256', has_secret: true, secret: 'jwt_secret_shown_once_0123456789abcdef', public_key: null, jwks_url: null, issuer: 'https://app.acme.example', audience: 'chorus', previous_secret_expires_at: null, created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-23T14:05:12.345Z' }] })

type JwtConfigRow = typeof jwtConfigs.$inferSelect

export function toJwtConfigResponse(row: JwtConfigRow, secret?: string) {
  const overlap = row.previousSecretExpiresAt && row.previousSecretExpiresAt > new Date() ? row.previousSecretExpiresAt : null
  return {
    algorithm: row.algorithm,
    issuer: row.issuer,
    audience: row.audience,
    jwks_url: row.jwksUrl,
    public_key: row.publicKey,
    has_secret: row.secretSealed !== null,
    previous_secret_expires_at: overlap?.toISOString() ?? null,
    ...(secret !== undefined && { secret }),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export const TokenCheckRequest = t.Object({
  token: t.String({ minLength: 1, maxLength: 16_384, description: 'An identify token as your backend signs it' }),
}, { additionalProperties: false, $id: 'JwtTokenCheck', examples: [{ token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyXzEyMyIsImV4cCI6MTc5NTUwMDAwMH0.signature' }] })

export const TokenCheckResponse = t.Object({
  accepted: t.Boolean({ description: 'Whether identify would accept this token now' }),
  reason: t.Nullable(t.String({ description: 'Why it is refused: the same words identify answers with' })),
  claims: t.Nullable(t.Record(t.String(), t.Unknown(), { description: 'The verified claims, when accepted' })),
}, { $id: 'JwtTokenCheckResult', examples: [{ accepted: false, reason: 'the token has expired', claims: null }] })
