import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import { perApp, type AppContext } from '../context.ts'
import { boundedCache } from '../db/changes.ts'
import { compiled } from '../db/compiled.ts'
import { apiKeys, members, oauthClients, oauthGrants, oauthTokens, sessions, users, workspaces, type Role } from '../db/schema/index.ts'
import { ApiError } from '../errors.ts'
import { CREDENTIAL_CHANGES } from '../lib/rate-limit.ts'
import { cookieValue } from '../lib/http-headers.ts'
import { sha256Hex, timingSafeEqual } from '../lib/secrets.ts'
import { verifyJwt } from '../lib/jwt.ts'
import { ACCESS_AUDIENCE, resourceAllows } from '../identity/audiences.ts'

export const SCOPES = [
  'workspace:read', 'boards:read', 'statuses:read', 'labels:read', 'labels:write', 'posts:read', 'posts:write',
  'comments:read', 'comments:write', 'comments:internal', 'votes:read', 'votes:write', 'webhooks:read', 'webhooks:write',
  'notifications:read', 'notifications:write', 'changelog:read', 'changelog:write', 'companies:read', 'companies:write', 'end_users:read', 'end_users:write',
  'imports:write',
] as const
export type Scope = (typeof SCOPES)[number]

/**
 * The scopes a member role may exercise at all: an OAuth grant acts with the intersection of what was
 * granted and this, read at every request, so a demotion narrows every grant of the user at once.
 * Webhooks and erasing end users are admin-only on every surface (their routes need the admin role).
 */
const ADMIN_ONLY_SCOPES = new Set<Scope>(['webhooks:read', 'webhooks:write', 'imports:write', 'end_users:write'])
export const scopesOfRole = (role: Role): Scope[] => (role === 'member' ? SCOPES.filter((scope) => !ADMIN_ONLY_SCOPES.has(scope)) : [...SCOPES])

/** A grant's effective scopes: granted and still allowed by the user's current role (granted order kept). */
export const effectiveScopes = (granted: string[], role: Role) => {
  const allowed = new Set<string>(scopesOfRole(role))
  return granted.filter((scope) => allowed.has(scope))
}

/** A `...:read` scope opens only routes that change nothing (GET). */
export const isReadScope = (scope: Scope | undefined) => scope?.endsWith(':read') ?? false

export const KEY_PREFIX = 'chorus_sk_'
const KEY_PATTERN = /^chorus_sk_[0-9A-Za-z]{32}$/

export type SessionUser = typeof users.$inferSelect
export type Workspace = typeof workspaces.$inferSelect
export type Member = typeof members.$inferSelect

export interface SessionCaller {
  kind: 'session'
  user: SessionUser
  sessionId: string
  impersonatorId: string | null
}

export interface KeyCaller {
  kind: 'api_key'
  keyId: string
  name: string
  scopes: string[]
  workspaceId: string
}

/**
 * An OAuth access token: it acts like an API key of its grant's workspace with the granted scopes,
 * on behalf of the user who granted it (who authors what it writes).
 */
export interface OAuthCaller {
  kind: 'oauth'
  familyId: string
  clientId: string
  clientName: string
  /** Granted scopes narrowed to the user's current role (`effectiveScopes`). */
  scopes: string[]
  workspaceId: string
  user: SessionUser
  /** The user's current role in the workspace: routes that need a role check it as for their session. */
  role: Role
}

export type Caller = SessionCaller | KeyCaller | OAuthCaller

/** Credentials that are not a dashboard session: they carry their scopes and workspace. */
export type ScopedCaller = KeyCaller | OAuthCaller

export const OAUTH_ACCESS_PREFIX = 'chorus_at_'
const OAUTH_ACCESS_PATTERN = /^chorus_at_[0-9A-Za-z]{43}$/

/** The key a request carries, from `Authorization: Bearer` (preferred) or `X-API-Key`; null when none. */
export function readApiKey(headers: Headers): string | null {
  const authorization = headers.get('authorization')
  if (authorization && /^bearer\s/i.test(authorization)) return authorization.slice(7).trim()
  return headers.get('x-api-key')?.trim() ?? null
}

export const carriesKey = (headers: Headers) => readApiKey(headers) !== null

/**
 * The dashboard session's access token, read from the Cookie header where a credential is resolved. Not
 * through Elysia's `cookie`: naming it in a hook makes Elysia parse every request's cookies (a cookie jar
 * and an extra await) before the hook runs, requests with an API key included.
 */
export const accessCookie = (request: Request) => cookieValue(request.headers, 'access_token')

const invalidKey = () => new ApiError('INVALID_API_KEY', 'The API key is invalid or has been revoked')
const invalidToken = () => new ApiError('INVALID_API_KEY', 'The access token is invalid, expired or revoked', {}, { 'www-authenticate': 'Bearer error="invalid_token"' })

// The lookups behind every authenticated request, one query each, compiled once per database.
const sessionLookup = compiled('auth_session', (db) => db
  .select({ user: users, impersonatorId: sessions.impersonatorId })
  .from(sessions)
  .innerJoin(users, eq(users.id, sessions.userId))
  .where(and(eq(sessions.id, sql.placeholder('sid')), eq(sessions.userId, sql.placeholder('uid')), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`))))

// Only the key's columns a request uses: this statement runs on every keyed request.
const keyLookup = compiled('auth_api_key', (db) => db
  .select({ key: { id: apiKeys.id, name: apiKeys.name, scopes: apiKeys.scopes, keyHash: apiKeys.keyHash, lastUsedAt: apiKeys.lastUsedAt }, workspace: workspaces, changes: CREDENTIAL_CHANGES })
  .from(apiKeys)
  .innerJoin(workspaces, eq(workspaces.id, apiKeys.workspaceId))
  .where(and(eq(apiKeys.keyHash, sql.placeholder('hash')), isNull(apiKeys.revokedAt))))

// A token works while it is unexpired and unrevoked, its family is not revoked, and its user is still
// an active member of the workspace (removing someone stops the apps they connected); the member's
// current role narrows the granted scopes.
const oauthLookup = compiled('auth_oauth_token', (db) => db
  .select({ token: oauthTokens, grant: oauthGrants, clientName: oauthClients.name, workspace: workspaces, user: users, role: members.role })
  .from(oauthTokens)
  .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.familyId))
  .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
  .innerJoin(workspaces, eq(workspaces.id, oauthGrants.workspaceId))
  .innerJoin(members, and(eq(members.workspaceId, oauthGrants.workspaceId), eq(members.userId, oauthGrants.userId), eq(members.status, 'active')))
  .innerJoin(users, eq(users.id, oauthGrants.userId))
  .where(and(
    eq(oauthTokens.tokenHash, sql.placeholder('hash')), eq(oauthTokens.kind, 'access'), isNull(oauthTokens.revokedAt),
    gt(oauthTokens.expiresAt, sql`now()`), isNull(oauthGrants.revokedAt),
  )))

const membershipLookup = compiled('auth_membership', (db) => db
  .select({ workspace: workspaces, member: members })
  .from(workspaces)
  .leftJoin(members, and(eq(members.workspaceId, workspaces.id), eq(members.userId, sql.placeholder('uid'))))
  .where(eq(workspaces.slug, sql.placeholder('slug'))))

type KeyRow = Awaited<ReturnType<ReturnType<typeof keyLookup>['execute']>>[number]
type MembershipRow = Awaited<ReturnType<ReturnType<typeof membershipLookup>['execute']>>[number]

/**
 * The resolvers behind every authenticated request. A key (by its hash) and a session's membership (by
 * slug and user) are answered from per-process caches while the process hears every change to the
 * tables they read (server/db/changes.ts, migration 0043): a revocation, a new role or a subscription
 * change drops them on every process at once, and without a listening connection they are off. Built once
 * per app (sharedCredentialResolvers): a set built per request would start with empty caches every time.
 */
function credentialResolvers(ctx: AppContext) {
  const keys = boundedCache<KeyRow>(ctx.changes, ['api_keys', 'workspaces'], ctx.config.cacheEntries)
  const memberships = boundedCache<MembershipRow>(ctx.changes, ['members', 'workspaces'], ctx.config.cacheEntries)
  return {
    async session(accessToken: string | undefined): Promise<SessionCaller | null> {
      if (!accessToken) return null
      const claims = await verifyJwt(accessToken, ctx.keys.accessToken, ctx.config.baseUrl, ACCESS_AUDIENCE)
      if (!claims || typeof claims.sid !== 'string' || typeof claims.sub !== 'string') return null
      const [row] = await sessionLookup(ctx.db).execute({ sid: claims.sid, uid: claims.sub })
      return row ? { kind: 'session', user: row.user, sessionId: claims.sid, impersonatorId: row.impersonatorId } : null
    },

    /**
     * Throws 401 INVALID_API_KEY for malformed, unknown and revoked keys. `changes` is the row's count of
     * credential changes when it was read: a caller that sees a newer count asks again with `fresh`.
     */
    async apiKey(value: string, fresh = false) {
      if (!KEY_PATTERN.test(value)) throw invalidKey()
      const hash = sha256Hex(value)
      const row = await keys.through(hash, async () => (await keyLookup(ctx.db).execute({ hash }))[0], fresh)
      // The index lookup already matched the hash; the constant-time compare keeps the final check free of early exits.
      if (!row || !timingSafeEqual(row.key.keyHash, hash)) throw invalidKey()
      if (!row.key.lastUsedAt || Date.now() - row.key.lastUsedAt.getTime() > 60_000) {
        // Not announced (migration 0043 leaves the column out): the cached row keeps its own time.
        row.key.lastUsedAt = new Date()
        await ctx.db.update(apiKeys).set({ lastUsedAt: sql`now()` }).where(eq(apiKeys.id, row.key.id))
      }
      return row
    },

    /**
     * Resolves a `chorus_at_` token for the REST API (`api`) or the MCP endpoint (`mcp`): a token issued
     * for one resource (RFC 8707) is refused at the other. Throws 401 with `WWW-Authenticate: Bearer error="invalid_token"`.
     */
    async oauthToken(value: string, audience: 'api' | 'mcp'): Promise<{ caller: OAuthCaller; workspace: Workspace }> {
      if (!OAUTH_ACCESS_PATTERN.test(value)) throw invalidToken()
      const hash = sha256Hex(value)
      const [row] = await oauthLookup(ctx.db).execute({ hash })
      if (!row || !timingSafeEqual(row.token.tokenHash, hash) || !resourceAllows(ctx.config.baseUrl, row.grant.resource, audience)) throw invalidToken()
      if (!row.grant.lastUsedAt || Date.now() - row.grant.lastUsedAt.getTime() > 60_000) {
        await ctx.db.update(oauthGrants).set({ lastUsedAt: sql`now()` }).where(eq(oauthGrants.id, row.grant.id))
      }
      const caller: OAuthCaller = {
        kind: 'oauth', familyId: row.grant.id, clientId: row.grant.clientId, clientName: row.clientName,
        scopes: effectiveScopes(row.grant.scopes, row.role), workspaceId: row.workspace.id, user: row.user, role: row.role,
      }
      return { caller, workspace: row.workspace }
    },

    async membership(slug: string, userId: string) {
      const row = await memberships.through(`${slug}\n${userId}`, async () => (await membershipLookup(ctx.db).execute({ slug, uid: userId }))[0])
      return row ?? null
    },
  }
}

/** The resolvers built once per app, shared by the auth plugin, the authorization server and the MCP endpoint. */
export const sharedCredentialResolvers = perApp(credentialResolvers)
