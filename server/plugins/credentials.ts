import { and, eq, gt, isNull, sql } from 'drizzle-orm'
import type { AppContext } from '../context.ts'
import { apiKeys, members, sessions, users, workspaces } from '../db/schema/index.ts'
import { ApiError } from '../errors.ts'
import { sha256Hex, timingSafeEqual } from '../lib/crypto.ts'
import { verifyJwt } from '../lib/jwt.ts'
import { ACCESS_AUDIENCE } from '../modules/auth/service.ts'

export const SCOPES = [
  'workspace:read', 'boards:read', 'statuses:read', 'labels:read', 'labels:write', 'posts:read', 'posts:write',
  'comments:read', 'comments:write', 'comments:internal', 'votes:read', 'votes:write', 'webhooks:read', 'webhooks:write',
  'notifications:read', 'notifications:write',
] as const
export type Scope = (typeof SCOPES)[number]

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

export type Caller = SessionCaller | KeyCaller

/** The key a request carries, from `Authorization: Bearer` (preferred) or `X-API-Key`; null when none. */
export function readApiKey(headers: Headers): string | null {
  const authorization = headers.get('authorization')
  if (authorization && /^bearer\s/i.test(authorization)) return authorization.slice(7).trim()
  return headers.get('x-api-key')?.trim() ?? null
}

export const carriesKey = (headers: Headers) => readApiKey(headers) !== null

const invalidKey = () => new ApiError('INVALID_API_KEY', 'The API key is invalid or has been revoked')

/** Prepared lookups behind every authenticated request; one query each. */
export function credentialResolvers(ctx: AppContext) {
  const sessionLookup = ctx.db
    .select({ user: users, impersonatorId: sessions.impersonatorId })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.id, sql.placeholder('sid')), eq(sessions.userId, sql.placeholder('uid')), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql`now()`)))
    .prepare('auth_session')

  const keyLookup = ctx.db
    .select({ key: apiKeys, workspace: workspaces })
    .from(apiKeys)
    .innerJoin(workspaces, eq(workspaces.id, apiKeys.workspaceId))
    .where(and(eq(apiKeys.keyHash, sql.placeholder('hash')), isNull(apiKeys.revokedAt)))
    .prepare('auth_api_key')

  const membershipLookup = ctx.db
    .select({ workspace: workspaces, member: members })
    .from(workspaces)
    .leftJoin(members, and(eq(members.workspaceId, workspaces.id), eq(members.userId, sql.placeholder('uid'))))
    .where(eq(workspaces.slug, sql.placeholder('slug')))
    .prepare('auth_membership')

  return {
    async session(accessToken: string | undefined): Promise<SessionCaller | null> {
      if (!accessToken) return null
      const claims = await verifyJwt(accessToken, ctx.keys.accessToken, ctx.config.baseUrl, ACCESS_AUDIENCE)
      if (!claims || typeof claims.sid !== 'string' || typeof claims.sub !== 'string') return null
      const [row] = await sessionLookup.execute({ sid: claims.sid, uid: claims.sub })
      return row ? { kind: 'session', user: row.user, sessionId: claims.sid, impersonatorId: row.impersonatorId } : null
    },

    /** Throws 401 INVALID_API_KEY for malformed, unknown and revoked keys. */
    async apiKey(value: string) {
      if (!KEY_PATTERN.test(value)) throw invalidKey()
      const hash = await sha256Hex(value)
      const [row] = await keyLookup.execute({ hash })
      // The index lookup already matched the hash; the constant-time compare keeps the final check free of early exits.
      if (!row || !timingSafeEqual(row.key.keyHash, hash)) throw invalidKey()
      if (!row.key.lastUsedAt || Date.now() - row.key.lastUsedAt.getTime() > 60_000) {
        await ctx.db.update(apiKeys).set({ lastUsedAt: sql`now()` }).where(eq(apiKeys.id, row.key.id))
      }
      return row
    },

    async membership(slug: string, userId: string) {
      const [row] = await membershipLookup.execute({ slug, uid: userId })
      return row ?? null
    },
  }
}
