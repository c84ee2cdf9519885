import { Elysia } from 'elysia'
import { perApp, type AppContext } from '../context.ts'
import type { Role } from '../db/schema/index.ts'
import { ApiError, invalid, notFound } from '../errors.ts'
import { apiKeyAccess, dashboardAccess } from '../lib/subscription.ts'
import { carriesKey, credentialResolvers, readApiKey, type Caller, type Member, type Scope, type SessionUser, type Workspace } from './credentials.ts'
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, requestFingerprint } from './idempotency.ts'
import { enforceRateLimit } from './rate-limit.ts'

export { carriesKey, SCOPES, type Caller, type Scope } from './credentials.ts'

export interface WorkspaceAccess {
  /** The key scope the route needs. Without one the route is dashboard-only: keys get 403 DASHBOARD_ONLY. */
  scope?: Scope
  /** The least member role a dashboard user needs (default `member`). */
  role?: Role
  /** Set false on routes that must work on a lapsed subscription (e.g. deleting the workspace). */
  gate?: boolean
}

type Security = Record<string, string[]>[]
const keyOrSession = (scope: Scope): Security => [{ bearerAuth: [scope] }, { apiKeyHeader: [scope] }, { cookieAuth: [] }]
const sessionOnly: Security = [{ cookieAuth: [] }]

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 }
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

interface Replay { status: number; body: unknown }

/** What `{ workspace: ... }` adds to a route's context. */
export type WorkspaceContext = {
  caller: Caller
  workspace: Workspace
  /** The member behind a dashboard session; null for API keys. */
  member: Member | null
  replay: Replay | null
}

/** What `{ account: ... }` adds: a key with its workspace, or a signed-in user without one. */
export type AccountContext = { caller: Caller; user: SessionUser | null; workspace: Workspace | null }

interface IdempotencyClaim { scope: string; key: string }
const claims = new WeakMap<Request, IdempotencyClaim>()
const replays = new WeakSet<Request>()

/**
 * The one credential plugin. `{ user: true }`: a signed-in dashboard user (personal routes).
 * `{ workspace: {...} }`: a key or a member session in one workspace, with scope, role, subscription
 * gate, per-key rate limit and Idempotency-Key handled here, so routes only declare what they need.
 */
export const authPlugin = perApp((ctx: AppContext) => {
  const resolve = credentialResolvers(ctx)

  async function keyCaller(value: string, access: WorkspaceAccess, slug: string | undefined, write: boolean, headers: Record<string, string | number>): Promise<Omit<WorkspaceContext, 'replay'>> {
    const { key, workspace } = await resolve.apiKey(value)
    if (!access.scope) throw new ApiError('DASHBOARD_ONLY', 'This area is dashboard-only: sign in to the dashboard; API keys cannot reach it')
    if (slug !== undefined && slug !== workspace.slug) throw notFound('Workspace')
    await enforceRateLimit(ctx, headers, `key:${key.id}`, ctx.config.rateLimitPerKey)
    const gate = apiKeyAccess(workspace, new Date(), ctx.config.billing)
    if (gate === 'none' || (gate === 'read' && write)) {
      throw new ApiError('SUBSCRIPTION_INACTIVE', gate === 'none' ? 'The workspace subscription is not active' : 'The subscription is past due beyond the grace period: API writes are disabled, reads still work')
    }
    if (!key.scopes.includes(access.scope)) {
      throw new ApiError('INSUFFICIENT_SCOPE', `This API key lacks the ${access.scope} scope`, { required_scope: access.scope })
    }
    const caller: Caller = { kind: 'api_key', keyId: key.id, name: key.name, scopes: key.scopes, workspaceId: workspace.id }
    return { caller, workspace, member: null }
  }

  async function sessionCaller(accessToken: string | undefined, access: WorkspaceAccess, slug: string | null, write: boolean): Promise<Omit<WorkspaceContext, 'replay'>> {
    const session = await resolve.session(accessToken)
    if (!session) throw new ApiError('UNAUTHENTICATED', 'Send an API key, or sign in: the access_token cookie is missing, invalid or expired')
    if (!slug) throw invalid(['header', 'x-workspace'], 'Dashboard sessions name the workspace in the X-Workspace header (its slug)')
    const row = await resolve.membership(slug, session.user.id)
    // Not a member (or only invited) looks exactly like a workspace that does not exist.
    if (!row || row.member?.status !== 'active') throw notFound('Workspace')
    const required = access.role ?? 'member'
    if (RANK[row.member.role] < RANK[required]) {
      throw required === 'owner' ? new ApiError('OWNER_ONLY', 'Only the workspace owner can do this') : new ApiError('FORBIDDEN', `This needs the ${required} role`)
    }
    if (write && access.gate !== false && dashboardAccess(row.workspace, new Date(), ctx.config.billing) !== 'full') {
      throw new ApiError('SUBSCRIPTION_INACTIVE', 'The subscription has lapsed: the dashboard is read-only until it is renewed')
    }
    return { caller: session, workspace: row.workspace, member: row.member }
  }

  return new Elysia({ name: 'auth' }).macro({
    user: {
      detail: { security: sessionOnly },
      async resolve({ request, cookie }) {
        // A request with a key is a key request (SPEC 5.11) and keys have no personal area.
        if (carriesKey(request.headers)) throw new ApiError('DASHBOARD_ONLY', 'This route needs a signed-in dashboard session; API keys cannot use it')
        const caller = await resolve.session(cookie.access_token?.value as string | undefined)
        if (!caller) throw new ApiError('UNAUTHENTICATED', 'Sign in first: the access_token cookie is missing, invalid or expired')
        return { caller, user: caller.user }
      },
    },
    /** Either kind of caller without a workspace context: a key (with its workspace) or a signed-in user. */
    account: (access: { scope: Scope }) => ({
      detail: { security: keyOrSession(access.scope), 'x-required-scope': access.scope },
      async resolve({ request, cookie, set }): Promise<{ account: AccountContext }> {
        const apiKey = readApiKey(request.headers)
        if (apiKey !== null) {
          const { caller, workspace } = await keyCaller(apiKey, access, undefined, !READ_METHODS.has(request.method), set.headers as Record<string, string | number>)
          return { account: { caller, user: null, workspace } }
        }
        const session = await resolve.session(cookie.access_token?.value as string | undefined)
        if (!session) throw new ApiError('UNAUTHENTICATED', 'Send an API key, or sign in: the access_token cookie is missing, invalid or expired')
        return { account: { caller: session, user: session.user, workspace: null } }
      },
    }),
    workspace: (access: WorkspaceAccess) => ({
      detail: {
        security: access.scope ? keyOrSession(access.scope) : sessionOnly,
        'x-required-scope': access.scope ?? null,
        'x-dashboard-only': !access.scope,
        'x-required-role': access.role ?? 'member',
      },
      async resolve({ request, cookie, params, set, body }): Promise<WorkspaceContext> {
        const write = !READ_METHODS.has(request.method)
        // Elysia passes no params object at all to routes without path parameters (GET /boards).
        const slug = (params as Record<string, string | undefined> | undefined)?.workspace_slug
        const apiKey = readApiKey(request.headers)
        const resolved = apiKey !== null
          ? await keyCaller(apiKey, access, slug, write, set.headers as Record<string, string | number>)
          : await sessionCaller(cookie.access_token?.value as string | undefined, access, slug ?? request.headers.get('x-workspace'), write)

        const idempotencyKey = request.method === 'POST' ? request.headers.get('idempotency-key') : null
        if (idempotencyKey !== null) {
          const credential = resolved.caller.kind === 'api_key' ? resolved.caller.keyId : resolved.caller.user.id
          const claim = { scope: `${resolved.workspace.id}:${credential}`, key: idempotencyKey }
          const outcome = await claimIdempotencyKey(ctx.db, claim.scope, claim.key, await requestFingerprint(request.method, new URL(request.url).pathname, body))
          if (outcome.kind === 'replay') {
            replays.add(request)
            return { ...resolved, replay: outcome }
          }
          claims.set(request, claim)
        }
        return { ...resolved, replay: null }
      },
      beforeHandle(context) {
        // Elysia does not type a macro's own resolved values in its beforeHandle.
        const { replay, set } = context as unknown as { replay: Replay | null; set: typeof context.set }
        if (!replay) return
        set.status = replay.status
        set.headers['idempotent-replayed'] = 'true'
        return replay.body as never
      },
      async afterHandle({ request, response, set }) {
        const claim = claims.get(request)
        if (!claim || replays.has(request)) return
        claims.delete(request)
        await completeIdempotencyKey(ctx.db, claim.scope, claim.key, typeof set.status === 'number' ? set.status : 200, response ?? null)
      },
      // A claim still held after the response means the handler failed: release it so the client can retry.
      // (afterResponse, not error: the app-wide error handler answers first and local error hooks never run.)
      async afterResponse({ request }) {
        const claim = claims.get(request)
        if (!claim) return
        claims.delete(request)
        await releaseIdempotencyKey(ctx.db, claim.scope, claim.key)
      },
    }),
  })
})
