import { and, eq, isNull, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import type { Tx } from '../../db/client.ts'
import { members, oauthConsentRequests, oauthGrants, oauthTokens, type Role } from '../../db/schema/index.ts'
import { effectiveScopes } from '../../plugins/credentials.ts'
import { randomBase62, sha256Hex, toBase64Url } from '../../lib/secrets.ts'
import { newId } from '../../lib/ids.ts'
import type { Client } from './clients.ts'
import { OAuthError } from './errors.ts'
import { ACCESS_PREFIX, ACCESS_SECONDS, REFRESH_PREFIX, REFRESH_SECONDS } from './model.ts'
import { checkResource } from './resources.ts'

type RevokeReason = NonNullable<(typeof oauthGrants.$inferSelect)['revokedReason']>

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description)

/** The grant's user's current role in its workspace; null once they are no longer an active member. */
async function currentRole(tx: Tx, family: typeof oauthGrants.$inferSelect) {
  const [row] = await tx.select({ role: members.role }).from(members)
    .where(and(eq(members.workspaceId, family.workspaceId), eq(members.userId, family.userId), eq(members.status, 'active')))
  return row?.role ?? null
}

/**
 * Mints an access token (and a refresh token unless `withRefresh` is false) for a family; only their
 * hashes are stored. `scope` says what the tokens can do now: the grant narrowed to the user's current role.
 */
async function issue(tx: Tx, family: typeof oauthGrants.$inferSelect, role: Role, withRefresh: boolean) {
  const access = `${ACCESS_PREFIX}${randomBase62(43)}`
  const refresh = withRefresh ? `${REFRESH_PREFIX}${randomBase62(43)}` : null
  const now = Date.now()
  await tx.insert(oauthTokens).values([
    { tokenHash: await sha256Hex(access), familyId: family.id, kind: 'access' as const, expiresAt: new Date(now + ACCESS_SECONDS * 1000) },
    ...(refresh ? [{ tokenHash: await sha256Hex(refresh), familyId: family.id, kind: 'refresh' as const, expiresAt: new Date(now + REFRESH_SECONDS * 1000) }] : []),
  ])
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: ACCESS_SECONDS,
    ...(refresh ? { refresh_token: refresh } : {}),
    scope: effectiveScopes(family.scopes, role).join(' '),
  }
}

export const revokeFamily = (db: AppContext['db'] | Tx, familyId: string, reason: RevokeReason) =>
  db.update(oauthGrants).set({ revokedAt: sql`now()`, revokedReason: reason }).where(and(eq(oauthGrants.id, familyId), isNull(oauthGrants.revokedAt)))

async function s256(verifier: string) {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))))
}

/**
 * authorization_code: single use (a second use revokes the family the first one created), 60 s,
 * PKCE verified, and the redirect URI and resource must match the authorize request.
 */
export async function exchangeCode(ctx: AppContext, client: Client, form: URLSearchParams) {
  const code = form.get('code')
  const verifier = form.get('code_verifier')
  if (!code) throw new OAuthError('invalid_request', 'code is required')
  if (!verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) throw new OAuthError('invalid_request', 'code_verifier is required (43 to 128 unreserved characters)')
  const codeHash = await sha256Hex(code)
  const outcome = await ctx.db.transaction(async (tx) => {
    const [request] = await tx.select().from(oauthConsentRequests).where(eq(oauthConsentRequests.codeHash, codeHash)).for('update')
    if (!request || request.clientId !== client.id) throw invalidGrant('The code is invalid')
    if (request.status === 'exchanged') {
      // A replayed code means it leaked: whatever the first exchange produced is no longer trustworthy.
      if (request.familyId) await revokeFamily(tx, request.familyId, 'code_replay')
      return { replayed: true as const }
    }
    if (request.status !== 'approved' || !request.codeExpiresAt || request.codeExpiresAt.getTime() <= Date.now()) throw invalidGrant('The code has expired')
    if (form.get('redirect_uri') !== null && form.get('redirect_uri') !== request.redirectUri) throw invalidGrant('redirect_uri differs from the authorization request')
    if (form.get('redirect_uri') === null && request.redirectUri !== client.redirectUris[0]) throw invalidGrant('redirect_uri is required')
    if ((await s256(verifier)) !== request.codeChallenge) throw invalidGrant('The code_verifier does not match the code_challenge')
    const resource = form.get('resource')
    if (resource !== null && checkResource(ctx.config.baseUrl, resource) !== request.resource) throw new OAuthError('invalid_target', 'resource differs from the authorization request')

    const [family] = await tx.insert(oauthGrants).values({
      id: newId('grantFamily'),
      clientId: client.id,
      userId: request.userId,
      workspaceId: request.workspaceId!,
      scopes: request.grantedScopes!,
      resource: request.resource,
    }).returning()
    await tx.update(oauthConsentRequests).set({ status: 'exchanged', familyId: family!.id }).where(eq(oauthConsentRequests.id, request.id))
    const role = await currentRole(tx, family!)
    if (!role) {
      await revokeFamily(tx, family!.id, 'member_removed')
      return { error: 'The user is no longer a member of the workspace' }
    }
    return { tokens: await issue(tx, family!, role, true) }
  })
  // Thrown after the commit, so the replay's revocation is kept.
  if ('replayed' in outcome) throw invalidGrant('The code has already been used; the tokens issued for it are revoked')
  if ('error' in outcome) throw invalidGrant(outcome.error!)
  return outcome.tokens
}

/**
 * refresh_token: rotates on every use. Concurrent refreshes of one family queue on the family's row
 * lock. A rotated-out token presented within the grace window gets an access token and no refresh
 * token (the client keeps the one it already has); after the window, reuse revokes the family.
 */
export async function refresh(ctx: AppContext, client: Client, form: URLSearchParams) {
  const token = form.get('refresh_token')
  if (!token) throw new OAuthError('invalid_request', 'refresh_token is required')
  if (!token.startsWith(REFRESH_PREFIX)) throw invalidGrant('The refresh token is invalid')
  const tokenHash = await sha256Hex(token)
  const outcome = await ctx.db.transaction(async (tx) => {
    const [found] = await tx.select({ familyId: oauthTokens.familyId }).from(oauthTokens).where(and(eq(oauthTokens.tokenHash, tokenHash), eq(oauthTokens.kind, 'refresh')))
    if (!found) return { error: 'The refresh token is invalid' }
    const [family] = await tx.select().from(oauthGrants).where(eq(oauthGrants.id, found.familyId)).for('update')
    if (!family || family.clientId !== client.id) return { error: 'The refresh token is invalid' }
    if (family.revokedAt) return { error: 'The grant has been revoked' }
    // Removal from the workspace ends the grant for good (a later re-invitation does not bring it back).
    const role = await currentRole(tx, family)
    if (!role) {
      await revokeFamily(tx, family.id, 'member_removed')
      return { error: 'The user is no longer a member of the workspace; the grant is revoked' }
    }
    // Read after taking the lock: a concurrent refresh may have rotated this token meanwhile.
    const [row] = await tx.select().from(oauthTokens).where(eq(oauthTokens.tokenHash, tokenHash))
    if (row!.revokedAt || row!.expiresAt.getTime() <= Date.now()) return { error: 'The refresh token has expired' }
    if (row!.rotatedAt) {
      const graceMs = ctx.config.oauthRefreshGraceSeconds * 1000
      if (graceMs > 0 && Date.now() - row!.rotatedAt.getTime() <= graceMs) return { tokens: await issue(tx, family, role, false) }
      await revokeFamily(tx, family.id, 'refresh_reuse')
      ctx.log.warn('oauth refresh token reused after rotation; grant revoked', { family_id: family.id, client_id: client.id })
      return { error: 'The refresh token was already used; the grant is revoked' }
    }
    await tx.update(oauthTokens).set({ rotatedAt: sql`now()` }).where(eq(oauthTokens.tokenHash, tokenHash))
    return { tokens: await issue(tx, family, role, true) }
  })
  // The family's revocation must commit even though the answer is an error, so the error is thrown outside the transaction.
  if ('error' in outcome) throw invalidGrant(outcome.error!)
  return outcome.tokens
}

/**
 * RFC 7009: a refresh token revokes its whole family, an access token just itself. Unknown tokens and
 * tokens of other clients are ignored (the answer is 200 either way, so it reveals nothing).
 */
export async function revokeToken(ctx: AppContext, client: Client, token: string) {
  const [row] = await ctx.db.select({ token: oauthTokens, clientId: oauthGrants.clientId }).from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.familyId))
    .where(eq(oauthTokens.tokenHash, await sha256Hex(token)))
  if (!row || row.clientId !== client.id) return
  if (row.token.kind === 'refresh') await revokeFamily(ctx.db, row.token.familyId, 'revocation_endpoint')
  else await ctx.db.update(oauthTokens).set({ revokedAt: sql`now()` }).where(eq(oauthTokens.tokenHash, row.token.tokenHash))
}
