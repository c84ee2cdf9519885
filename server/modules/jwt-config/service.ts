import { eq, sql } from 'drizzle-orm'
import { importSPKI } from 'jose'
import type { AppContext } from '../../context.ts'
import { jwtConfigs, type JwtAlgorithm } from '../../db/schema/index.ts'
import { ApiError, conflict, invalid, notFound } from '../../errors.ts'
import { randomBase62, sealContext } from '../../lib/secrets.ts'
import { OutboundRefused } from '../../lib/outbound.ts'
import { forgetKeySets } from './jwks.ts'
import { verifyCustomerToken } from './verify.ts'

export const DEFAULT_OVERLAP_SECONDS = 24 * 3600

export type JwtConfig = typeof jwtConfigs.$inferSelect

export interface JwtConfigInput {
  algorithm?: JwtAlgorithm
  public_key?: string | null
  jwks_url?: string | null
  issuer?: string | null
  audience?: string | null
}

async function newSecret(ctx: AppContext, workspaceId: string) {
  const secret = randomBase62(48)
  return { secret, sealed: await ctx.secrets.seal(secret, sealContext.jwtConfigSecret(workspaceId)) }
}

/** The key source of an asymmetric algorithm: exactly one of a PEM key (that imports for the algorithm) or a safe JWKS address. */
async function checkKeySource(ctx: AppContext, algorithm: JwtAlgorithm, publicKey: string | null, jwksUrl: string | null) {
  if (algorithm === 'HS256') {
    if (publicKey !== null) throw invalid(['body', 'public_key'], 'HS256 uses a secret the service generates; leave public_key out')
    if (jwksUrl !== null) throw invalid(['body', 'jwks_url'], 'HS256 uses a secret the service generates; leave jwks_url out')
    return
  }
  if ((publicKey === null) === (jwksUrl === null)) throw invalid(['body', 'public_key'], `${algorithm} needs exactly one of public_key or jwks_url`)
  if (publicKey !== null) {
    try {
      await importSPKI(publicKey.trim(), algorithm)
    } catch {
      throw invalid(['body', 'public_key'], `public_key is not a PEM public key (-----BEGIN PUBLIC KEY-----) for ${algorithm}`)
    }
  }
  if (jwksUrl !== null) {
    try {
      await ctx.outbound.check(jwksUrl, { httpsOnly: true })
    } catch (error) {
      if (error instanceof OutboundRefused) throw invalid(['body', 'jwks_url'], `jwks_url ${error.message}`)
      throw error
    }
  }
}

export async function findJwtConfig(ctx: AppContext, workspaceId: string) {
  const [row] = await ctx.db.select().from(jwtConfigs).where(eq(jwtConfigs.workspaceId, workspaceId))
  return row ?? null
}

export async function getJwtConfig(ctx: AppContext, workspaceId: string) {
  const row = await findJwtConfig(ctx, workspaceId)
  if (!row) throw notFound('JWT configuration')
  return row
}

/** One configuration per workspace; HS256 gets a generated secret, returned only here. */
export async function createJwtConfig(ctx: AppContext, workspaceId: string, input: JwtConfigInput & { algorithm: JwtAlgorithm }) {
  const publicKey = input.public_key?.trim() ?? null
  const jwksUrl = input.jwks_url ?? null
  await checkKeySource(ctx, input.algorithm, publicKey, jwksUrl)
  const generated = input.algorithm === 'HS256' ? await newSecret(ctx, workspaceId) : undefined
  const [row] = await ctx.db.insert(jwtConfigs).values({
    workspaceId,
    algorithm: input.algorithm,
    secretSealed: generated?.sealed ?? null,
    publicKey,
    jwksUrl,
    issuer: input.issuer ?? null,
    audience: input.audience ?? null,
  }).onConflictDoNothing().returning()
  if (!row) throw conflict('This workspace already has a JWT configuration; change it with PATCH')
  return { row, secret: generated?.secret }
}

/**
 * Merges the changes. A PEM key and a JWKS address replace each other; switching to HS256 generates a
 * secret (returned once), switching away from it drops the secret and any overlap.
 */
export async function updateJwtConfig(ctx: AppContext, workspaceId: string, input: JwtConfigInput) {
  const current = await getJwtConfig(ctx, workspaceId)
  const algorithm = input.algorithm ?? current.algorithm
  if (input.public_key && input.jwks_url) throw invalid(['body', 'jwks_url'], 'Send public_key or jwks_url, not both')
  let publicKey = input.public_key !== undefined ? input.public_key?.trim() ?? null : current.publicKey
  let jwksUrl = input.jwks_url !== undefined ? input.jwks_url : current.jwksUrl
  if (input.public_key) jwksUrl = null
  if (input.jwks_url) publicKey = null
  if (algorithm === 'HS256') {
    publicKey = input.public_key ?? null
    jwksUrl = input.jwks_url ?? null
  }
  await checkKeySource(ctx, algorithm, publicKey, jwksUrl)

  const generated = algorithm === 'HS256' && current.secretSealed === null ? await newSecret(ctx, workspaceId) : undefined
  const [row] = await ctx.db.update(jwtConfigs).set({
    algorithm,
    publicKey,
    jwksUrl,
    ...(algorithm !== 'HS256' && { secretSealed: null, previousSecretSealed: null, previousSecretExpiresAt: null }),
    ...(generated && { secretSealed: generated.sealed }),
    ...(input.issuer !== undefined && { issuer: input.issuer }),
    ...(input.audience !== undefined && { audience: input.audience }),
    updatedAt: sql`now()`,
  }).where(eq(jwtConfigs.workspaceId, workspaceId)).returning()
  forgetKeySets(workspaceId)
  return { row: row!, secret: generated?.secret }
}

/** A new HS256 secret; the previous one keeps verifying for `overlapSeconds` (one statement, so concurrent rotations cannot lose a secret). */
export async function rotateSecret(ctx: AppContext, workspaceId: string, overlapSeconds = DEFAULT_OVERLAP_SECONDS) {
  const current = await getJwtConfig(ctx, workspaceId)
  if (current.algorithm !== 'HS256') throw conflict(`Only HS256 configurations have a secret; this one uses ${current.algorithm}`)
  const generated = await newSecret(ctx, workspaceId)
  const [row] = await ctx.db.update(jwtConfigs).set({
    secretSealed: generated.sealed,
    previousSecretSealed: overlapSeconds > 0 ? sql`${jwtConfigs.secretSealed}` : null,
    previousSecretExpiresAt: overlapSeconds > 0 ? sql`now() + make_interval(secs => ${overlapSeconds})` : null,
    updatedAt: sql`now()`,
  }).where(eq(jwtConfigs.workspaceId, workspaceId)).returning()
  return { row: row!, secret: generated.secret }
}

/** What identify would say of a token, without signing anyone in: accepted with its claims, or the exact reason it is refused. */
export async function checkToken(ctx: AppContext, workspaceId: string, token: string) {
  const config = await getJwtConfig(ctx, workspaceId)
  try {
    const claims = await verifyCustomerToken(ctx, config, token.trim())
    return { accepted: true, reason: null, claims: claims as Record<string, unknown> }
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'UNAUTHENTICATED') throw error
    return { accepted: false, reason: error.message.replace(/^Identify refused: /, ''), claims: null }
  }
}
