// Who writes on a public route (the widget's JSON writes and the portal's forms): an identified end user
// by their widget session, or an anonymous visitor by the address they give; one gate and one budget.
import type { AppContext } from '../context.ts'
import { ApiError, invalid } from '../errors.ts'
import { randomToken, sha256Hex } from '../lib/secrets.ts'
import { dashboardAccess } from '../lib/subscription.ts'
import { anonymousWriter, widgetSession, workspaceBySlug, type AnonymousWriter, type EndUserCaller } from '../identity/end-users.ts'
import type { Workspace } from './credentials.ts'
import { enforceRateLimit } from './rate-limit.ts'

/** What `{ endUser: true }` adds: the writer on a public route, a widget-session end user or an anonymous visitor. */
export type EndUserContext = {
  workspace: Workspace
  caller: EndUserCaller
  /** Scopes Idempotency-Key per writer, like per credential on the authenticated routes. */
  writerKey: string
  /** An anonymous visitor's identities: the response carries a session for the writer and a claim for the address (`Chorus-Session-Token`, `Chorus-Claim-Id`). */
  anonymous: AnonymousWriter | null
  /** Which of the end user's votes this writer may take back (docs/security.md#end-user-identity). */
  voteRemoval: VoteRemoval
  /** Where the write came from and the address it names (or the session's), for moderation's score and blocks. */
  clientIp: string
  address: string | null
}

/**
 * `any` for a confirmed identity; `session` for an unconfirmed session (only the votes it cast);
 * `none` without a session: such a write may add a vote for an address, never remove one. `sessionId`
 * is recorded on the votes cast: for `none`, the id of the session the write's answer carries.
 */
export type VoteRemoval = { kind: 'any' } | { kind: 'session' | 'none'; sessionId: string }

/** The response headers of an anonymous write: a session bound to the identity the visitor wrote as. */
export const SESSION_TOKEN_HEADER = 'chorus-session-token'
export const SESSION_EXPIRES_HEADER = 'chorus-session-expires'
/** And the claim started for the address: polled, it gives the writer's browser a confirmed session once the link is opened. */
export const CLAIM_ID_HEADER = 'chorus-claim-id'
export const CLAIM_EXPIRES_HEADER = 'chorus-claim-expires'

/** `settings.allow_anonymous` defaults to true. */
export const allowsAnonymous = (workspace: Workspace) => workspace.settings.allow_anonymous !== false

/**
 * Who writes on a public route; both kinds are rate-limited (sessions per end user, anonymous visitors per IP).
 * The `endUser` macro calls it for the JSON routes; the portal's server-rendered forms call it with the
 * session from their cookie as the bearer, so both surfaces share one gate and one budget.
 */
export async function endUserWriter(ctx: AppContext, request: Pick<Request, 'headers'>, slug: string, email: string | undefined, clientIp: string, headers: Record<string, string | number>): Promise<EndUserContext> {
  const workspace = await workspaceBySlug(ctx, slug)
  const authorization = request.headers.get('authorization')
  let writer: EndUserContext
  if (authorization !== null) {
    const token = /^bearer\s+(\S+)$/i.exec(authorization.trim())?.[1]
    if (!token) throw new ApiError('UNAUTHENTICATED', 'Send the session token from identify as `Authorization: Bearer <session_token>`')
    const { endUser, unconfirmedSessionId } = await widgetSession(ctx, workspace.id, token)
    // The widget may repeat the session's own address; any other one is a mistake.
    if (email !== undefined && email.trim().toLowerCase() !== endUser.email) throw invalid(['body', 'email'], 'An identified end user writes as themselves: leave email out')
    await enforceRateLimit(ctx, headers, `public-write:eu:${endUser.id}`, ctx.config.rateLimitPerIp)
    const voteRemoval: VoteRemoval = unconfirmedSessionId === null ? { kind: 'any' } : { kind: 'session', sessionId: unconfirmedSessionId }
    writer = { workspace, caller: { kind: 'end_user', endUserId: endUser.id }, writerKey: `eu:${endUser.id}`, anonymous: null, voteRemoval, clientIp, address: endUser.email }
  } else {
    if (!allowsAnonymous(workspace)) throw new ApiError('UNAUTHENTICATED', 'This workspace accepts feedback from identified users only: identify first and send the session token')
    await enforceRateLimit(ctx, headers, `public-write:ip:${clientIp}`, ctx.config.rateLimitPerIp)
    if (email === undefined) throw invalid(['body', 'email'], 'Anonymous visitors give an e-mail address (or identify first)')
    const normalized = email.trim().toLowerCase()
    writer = { workspace, caller: { kind: 'end_user', email: normalized }, writerKey: `anon:${sha256Hex(normalized)}`, anonymous: null, voteRemoval: { kind: 'none', sessionId: randomToken(12) }, clientIp, address: normalized }
  }
  // A lapsed subscription makes the whole workspace read-only, its public routes included.
  if (dashboardAccess(workspace, new Date(), ctx.config.billing) !== 'full') {
    throw new ApiError('SUBSCRIPTION_INACTIVE', "The workspace's subscription has lapsed: it accepts no new feedback for now")
  }
  if ('email' in writer.caller) {
    const anonymous = await anonymousWriter(ctx, workspace.id, writer.caller.email)
    writer = { ...writer, caller: { kind: 'end_user', endUserId: anonymous.identity.id }, anonymous }
  }
  return writer
}
