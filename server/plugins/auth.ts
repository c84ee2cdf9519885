import { Elysia } from 'elysia'
import { perApp, type AppContext } from '../context.ts'
import type { Role } from '../db/schema/index.ts'
import { ApiError, invalid, notFound } from '../errors.ts'
import { apiKeyAccess, dashboardAccess } from '../lib/subscription.ts'
import { accessCookie, carriesKey, isReadScope, sharedCredentialResolvers, OAUTH_ACCESS_PREFIX, readApiKey, type Caller, type Member, type Scope, type ScopedCaller, type SessionUser, type Workspace } from './credentials.ts'
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, requestFingerprint } from './idempotency.ts'
import { endUserWriter, type EndUserContext } from './end-user-writer.ts'
import { enforceRateLimit, enforceRateRules, type RateRule } from './rate-limit.ts'
import { requestPlugin } from './request.ts'

export { carriesKey, readApiKey, SCOPES, type Caller, type OAuthCaller, type Scope, type ScopedCaller } from './credentials.ts'

export interface WorkspaceAccess {
  /** The key scope the route needs. Without one the route is dashboard-only: keys get 403 DASHBOARD_ONLY. */
  scope?: Scope
  /** The least member role a dashboard user needs (default `member`). */
  role?: Role
  /** Set false on routes that must work on a lapsed subscription (e.g. deleting the workspace). */
  gate?: boolean
  /**
   * A read whose one statement also reads the credential change count (`CREDENTIAL_CHANGES`) and is run
   * through `confirmedRead`: a keyed request served from a rate-limit lease then makes no statement of its
   * own for the count (one round trip fewer), and the answer is only sent if no credential changed.
   */
  changesInStatement?: boolean
}

type Security = Record<string, string[]>[]
const keyOrSession = (scope: Scope): Security => [{ bearerAuth: [scope] }, { apiKeyHeader: [scope] }, { cookieAuth: [] }]
const sessionOnly: Security = [{ cookieAuth: [] }]

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

/** Whether a member's role reaches `required` (owner > admin > member). */
export const roleAllows = (role: Role, required: Role) => RANK[role] >= RANK[required]

/** The API's role refusal: 403 OWNER_ONLY for owner routes, 403 FORBIDDEN otherwise (the dashboard pages use it too). */
export function requireRole(role: Role, required: Role) {
  if (roleAllows(role, required)) return
  throw required === 'owner' ? new ApiError('OWNER_ONLY', 'Only the workspace owner can do this') : new ApiError('FORBIDDEN', `This needs the ${required} role`)
}
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

interface Replay { status: number; body: unknown }

/** What `{ workspace: ... }` adds to a route's context. */
export type WorkspaceContext = {
  caller: Caller
  workspace: Workspace
  /** The member behind a dashboard session; null for API keys. */
  member: Member | null
  replay: Replay | null
  /** With `changesInStatement`, when the change count is still to be compared (`confirmedRead`); null otherwise. */
  pendingCheck: PendingCheck | null
}

type CallerContext = Pick<WorkspaceContext, 'caller' | 'workspace' | 'member'>

/** A cached key acting before anyone compared the change count it was read at with the database's. */
interface PendingCheck {
  /** The count the cached key was read at. */
  changes: number
  /** The key read again from the database, checked again for this route (401/403/404 as on any request). */
  refresh(): Promise<CallerContext>
}

/**
 * Runs a `changesInStatement` route's read, whose statement returns the credential change count beside
 * its answer. If the count moved since the cached key was read (a credential changed, its notification
 * perhaps not here yet), the key is read again and checked before the read runs again with what it may
 * now see; a revoked key gets its 401 from the very next request on every process, as with the separate read.
 * A read that fails (a 404) is checked the same way first: a revoked key learns nothing about what exists.
 */
export async function confirmedRead<T>(context: WorkspaceContext, read: (context: CallerContext) => Promise<{ value: T; changes: number | null }>): Promise<T> {
  const check = context.pendingCheck
  if (!check) return (await read(context)).value
  let first: { value: T; changes: number | null }
  try {
    first = await read(context)
  } catch (error) {
    await check.refresh()
    throw error
  }
  if (first.changes === check.changes) return first.value
  return (await read(await check.refresh())).value
}

/** What `{ account: ... }` adds: a key with its workspace, or a signed-in user without one. */
export type AccountContext = { caller: Caller; user: SessionUser | null; workspace: Workspace | null }

/**
 * A request with a key (or an OAuth access token) is a key request (docs/api.md#credentials), and
 * dashboard-only routes take none: refused in `transform`, before body validation and before the
 * credential is even looked up.
 */
function refuseBearer({ request }: { request: Request }) {
  if (carriesKey(request.headers)) throw new ApiError('DASHBOARD_ONLY', 'This route needs a signed-in dashboard session; API keys and access tokens cannot use it')
}

interface IdempotencyClaim { scope: string; key: string }
const claims = new WeakMap<Request, IdempotencyClaim>()
const replays = new WeakSet<Request>()

/** A bearer credential resolved to its caller and workspace, before any route's needs are checked. */
export interface BearerResolved {
  caller: ScopedCaller
  workspace: Workspace
  /** With `deferChanges`, a cached key's change count when no statement compared it yet (`confirmedRead`). */
  pendingChanges?: number
}

const keyResolved = ({ key, workspace }: { key: { id: string; name: string; scopes: string[] }; workspace: Workspace }): BearerResolved =>
  ({ caller: { kind: 'api_key', keyId: key.id, name: key.name, scopes: key.scopes, workspaceId: workspace.id }, workspace })

/**
 * The one path from a bearer credential (`Authorization: Bearer` or `X-API-Key`) to a caller: an API
 * key or an OAuth access token. The `workspace` and `account` macros use it, and so does every non-REST
 * surface (MCP), so each credential kind works everywhere with the same scopes, gate and rate limit.
 */
export const bearerAccess = perApp((ctx: AppContext) => {
  const resolve = sharedCredentialResolvers(ctx)
  return {
    /**
     * Throws 401 for an unknown, malformed or revoked credential (and for an access token bound to
     * another resource than `resource`); counts the request against the credential's rate limit.
     * `deferChanges`: the caller compares the change count in its own statement (`pendingChanges`).
     */
    async authenticate(value: string, headers: Record<string, string | number>, resource: 'api' | 'mcp' = 'api', deferChanges = false): Promise<BearerResolved> {
      if (value.startsWith(OAUTH_ACCESS_PREFIX)) {
        const resolved = await resolve.oauthToken(value, resource)
        await enforceRateLimit(ctx, headers, `oauth:${resolved.caller.familyId}`, ctx.config.rateLimitPerKey)
        return resolved
      }
      let row = await resolve.apiKey(value)
      const limited = await enforceRateLimit(ctx, headers, `key:${row.key.id}`, ctx.config.rateLimitPerKey, 60, true, deferChanges)
      if (limited.changesDeferred) return { ...keyResolved(row), pendingChanges: row.changes }
      // The key may come from this process's cache: if a credential changed since it was read (the count the
      // rate-limit statement returns moved), it is read again before it acts, whether or not the change's
      // notification has arrived yet. So a revocation is refused by the very next request on every process.
      if (limited.changes !== undefined && limited.changes !== row.changes) row = await resolve.apiKey(value, true)
      return keyResolved(row)
    },
    /** A key read again from the database (its cached row is replaced), after a statement saw a newer change count. */
    async reread(value: string): Promise<BearerResolved> {
      return keyResolved(await resolve.apiKey(value, true))
    },
    /** What one operation needs: a scope (none: dashboard-only), the workspace named in the path, an active subscription for writes. */
    authorize({ caller, workspace }: BearerResolved, access: WorkspaceAccess, slug: string | undefined, write: boolean) {
      const oauth = caller.kind === 'oauth'
      if (!access.scope) throw new ApiError('DASHBOARD_ONLY', `This area is dashboard-only: sign in to the dashboard; ${oauth ? 'access tokens' : 'API keys'} cannot reach it`)
      if (slug !== undefined && slug !== workspace.slug) throw notFound('Workspace')
      const gate = apiKeyAccess(workspace, new Date(), ctx.config.billing)
      if (gate === 'none' || (gate === 'read' && write)) {
        throw new ApiError('SUBSCRIPTION_INACTIVE', gate === 'none' ? 'The workspace subscription is not active' : 'The subscription is past due beyond the grace period: API writes are disabled, reads still work')
      }
      // An access token acts for its user: a route that needs a role needs it of that user now, as their session would.
      if (oauth && RANK[caller.role] < RANK[access.role ?? 'member']) throw new ApiError('FORBIDDEN', `This needs the ${access.role} role, which the user who granted this access token no longer has`)
      if (!caller.scopes.includes(access.scope)) {
        // The challenge lets an OAuth client ask the user for the missing scope (step-up).
        throw new ApiError('INSUFFICIENT_SCOPE', `This ${oauth ? 'access token' : 'API key'} lacks the ${access.scope} scope`, { required_scope: access.scope },
          oauth ? { 'www-authenticate': `Bearer error="insufficient_scope", scope="${access.scope}"` } : {})
      }
    },
  }
})

/**
 * The one credential plugin. `{ user: true }`: a signed-in dashboard user (personal routes).
 * `{ workspace: {...} }`: a key or a member session in one workspace, with scope, role, subscription
 * gate, per-key rate limit and Idempotency-Key handled here, so routes only declare what they need.
 * `{ endUser: true }`: an end user or anonymous visitor on a public write, through the same gate,
 * rate limiter and Idempotency-Key code. `{ rateLimit: [...] }`: the per-IP / per-address limits of
 * credential-less routes. Every rate limit of the API is counted here.
 */
export const authPlugin = perApp((ctx: AppContext) => {
  const resolve = sharedCredentialResolvers(ctx)
  const bearer = bearerAccess(ctx)

  /**
   * An API key or an OAuth access token: both act in their own workspace with their scopes, behind the
   * subscription gate and a per-credential rate limit, and neither reaches dashboard-only routes.
   */
  async function keyCaller(value: string, access: WorkspaceAccess, slug: string | undefined, write: boolean, headers: Record<string, string | number>): Promise<Omit<WorkspaceContext, 'replay'>> {
    const { pendingChanges, ...resolved } = await bearer.authenticate(value, headers, 'api', access.changesInStatement === true && !write)
    bearer.authorize(resolved, access, slug, write)
    if (pendingChanges === undefined) return { ...resolved, member: null, pendingCheck: null }
    const refresh = async () => {
      const fresh = await bearer.reread(value)
      bearer.authorize(fresh, access, slug, write)
      return { ...fresh, member: null }
    }
    return { ...resolved, member: null, pendingCheck: { changes: pendingChanges, refresh } }
  }

  async function sessionCaller(accessToken: string | undefined, access: WorkspaceAccess, slug: string | null, write: boolean): Promise<Omit<WorkspaceContext, 'replay'>> {
    const session = await resolve.session(accessToken)
    if (!session) throw new ApiError('UNAUTHENTICATED', 'Send an API key, or sign in: the access_token cookie is missing, invalid or expired')
    if (!slug) throw invalid(['header', 'x-workspace'], 'Dashboard sessions name the workspace in the X-Workspace header (its slug)')
    const row = await resolve.membership(slug, session.user.id)
    // Not a member (or only invited) looks exactly like a workspace that does not exist.
    if (!row || row.member?.status !== 'active') throw notFound('Workspace')
    requireRole(row.member.role, access.role ?? 'member')
    if (write && access.gate !== false && dashboardAccess(row.workspace, new Date(), ctx.config.billing) !== 'full') {
      throw new ApiError('SUBSCRIPTION_INACTIVE', 'The subscription has lapsed: the dashboard is read-only until it is renewed')
    }
    return { caller: session, workspace: row.workspace, member: row.member, pendingCheck: null }
  }

  /** Claims a POST's Idempotency-Key for `scope` (workspace and credential); a replay is answered in beforeHandle. */
  async function idempotencyClaim(request: Request, scope: string, body: unknown): Promise<Replay | null> {
    const key = request.method === 'POST' ? request.headers.get('idempotency-key') : null
    if (key === null) return null
    const outcome = await claimIdempotencyKey(ctx.db, scope, key, requestFingerprint(request.method, new URL(request.url).pathname, body))
    if (outcome.kind === 'replay') {
      replays.add(request)
      return outcome
    }
    claims.set(request, { scope, key })
    return null
  }

  /** The Idempotency-Key lifecycle after the claim, the same for every credential kind. */
  const idempotencyHooks = {
    beforeHandle(context: object) {
      // Elysia does not type a macro's own resolved values in its beforeHandle.
      const { replay, set } = context as { replay: Replay | null; set: { status?: unknown; headers: Record<string, string | number> } }
      if (!replay) return
      set.status = replay.status
      set.headers['idempotent-replayed'] = 'true'
      return replay.body as never
    },
    async afterHandle({ request, response, set }: { request: Request; response: unknown; set: { status?: unknown } }) {
      const claim = claims.get(request)
      if (!claim || replays.has(request)) return
      claims.delete(request)
      // A body PostgreSQL wrote (jsonText, e.g. the create's) is kept as the JSON it carries, with its status.
      if (response instanceof Response) return completeIdempotencyKey(ctx.db, claim.scope, claim.key, response.status, JSON.parse(await response.clone().text()))
      await completeIdempotencyKey(ctx.db, claim.scope, claim.key, typeof set.status === 'number' ? set.status : 200, response ?? null)
    },
    // A claim still held after the response means the handler failed: release it so the client can retry.
    // (afterResponse, not error: the app-wide error handler answers first and local error hooks never run.)
    async afterResponse({ request }: { request: Request }) {
      const claim = claims.get(request)
      if (!claim) return
      claims.delete(request)
      await releaseIdempotencyKey(ctx.db, claim.scope, claim.key)
    },
  }

  return new Elysia({ name: 'auth' }).use(requestPlugin(ctx)).macro({
    user: {
      detail: { security: sessionOnly },
      transform: refuseBearer,
      async resolve({ request }) {
        const caller = await resolve.session(accessCookie(request))
        if (!caller) throw new ApiError('UNAUTHENTICATED', 'Sign in first: the access_token cookie is missing, invalid or expired')
        return { caller, user: caller.user }
      },
    },
    /** Either kind of caller without a workspace context: a key (with its workspace) or a signed-in user. */
    account: (access: { scope: Scope }) => ({
      detail: { security: keyOrSession(access.scope), 'x-required-scope': access.scope },
      async resolve({ request, set }): Promise<{ account: AccountContext }> {
        const apiKey = readApiKey(request.headers)
        if (apiKey !== null) {
          const { caller, workspace } = await keyCaller(apiKey, access, undefined, !READ_METHODS.has(request.method), set.headers as Record<string, string | number>)
          return { account: { caller, user: null, workspace } }
        }
        const session = await resolve.session(accessCookie(request))
        if (!session) throw new ApiError('UNAUTHENTICATED', 'Send an API key, or sign in: the access_token cookie is missing, invalid or expired')
        return { account: { caller: session, user: session.user, workspace: null } }
      },
    }),
    workspace: (access: WorkspaceAccess) => {
      const readOnly = isReadScope(access.scope)
      return {
        detail: {
          security: access.scope ? keyOrSession(access.scope) : sessionOnly,
          'x-required-scope': access.scope ?? null,
          'x-dashboard-only': !access.scope,
          'x-required-role': access.role ?? 'member',
        },
        async resolve({ request, params, set, body }): Promise<WorkspaceContext> {
          const write = !READ_METHODS.has(request.method)
          // Elysia passes no params object at all to routes without path parameters (GET /boards).
          const slug = (params as Record<string, string | undefined> | undefined)?.workspace_slug
          const apiKey = readApiKey(request.headers)
          const resolved = apiKey !== null
            ? await keyCaller(apiKey, access, slug, write, set.headers as Record<string, string | number>)
            : await sessionCaller(accessCookie(request), access, slug ?? request.headers.get('x-workspace'), write)

          if (readOnly) return { ...resolved, replay: null }
          const credential = resolved.caller.kind === 'api_key' ? resolved.caller.keyId : resolved.caller.kind === 'oauth' ? resolved.caller.familyId : resolved.caller.user.id
          return { ...resolved, replay: await idempotencyClaim(request, `${resolved.workspace.id}:${credential}`, body) }
        },
        // A dashboard-only route refuses a key before its body is validated: the caller learns first
        // that no body would do (docs/api.md#credentials).
        ...(access.scope ? {} : { transform: refuseBearer }),
        // A route a read scope opens writes nothing, so it has no Idempotency-Key to keep: without the
        // hooks, a read skips an awaited after-handle step and a deferred after-response task per request.
        ...(readOnly ? {} : idempotencyHooks),
      }
    },
    /**
     * A public write (portal, widget) on a route with `workspace_slug`: the end user of a widget
     * session (`Authorization: Bearer`), or an anonymous visitor naming `email` in the body when the
     * workspace allows it; rate limit, subscription gate and Idempotency-Key as on every other write.
     */
    endUser: {
      detail: { security: [{ widgetSession: [] }, {}] },
      async resolve({ request, params, body, set, clientIp }): Promise<{ endUser: EndUserContext; replay: Replay | null }> {
        const slug = (params as Record<string, string>).workspace_slug!
        const email = (body as { email?: string } | null | undefined)?.email
        const writer = await endUserWriter(ctx, request, slug, email, clientIp, set.headers as Record<string, string | number>)
        return { endUser: writer, replay: await idempotencyClaim(request, `${writer.workspace.id}:${writer.writerKey}`, body) }
      },
      // An anonymous writer's session (SESSION_TOKEN_HEADER) is added by the route, through the visitors module.
      ...idempotencyHooks,
    },
    rateLimit: (rules: RateRule[]) => ({
      async beforeHandle(context) {
        const { clientIp, body, set } = context
        const user = (context as { user?: SessionUser }).user
        await enforceRateRules(ctx, set.headers as Record<string, string | number>, rules, { clientIp, body, user })
      },
    }),
  })
})
