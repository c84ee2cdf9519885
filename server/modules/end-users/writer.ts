import type { AppContext } from '../../context.ts'
import { ApiError, invalid } from '../../errors.ts'
import { sha256Hex } from '../../lib/crypto.ts'
import { dashboardAccess } from '../../lib/subscription.ts'
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, requestFingerprint } from '../../plugins/idempotency.ts'
import { enforceRateLimit } from '../../plugins/rate-limit.ts'
import type { Workspace } from '../../plugins/credentials.ts'
import type { EndUserCaller } from '../feedback/actor.ts'
import { endUserFromSession, workspaceBySlug } from './service.ts'

export interface PublicWrite {
  workspace: Workspace
  caller: EndUserCaller
  /** Scopes Idempotency-Key per writer, like per credential on the authenticated routes. */
  writerKey: string
}

/** `settings.allow_anonymous` defaults to true (CONTRACT §12). */
export const allowsAnonymous = (workspace: Workspace) => workspace.settings.allow_anonymous !== false

interface WriteRequest {
  request: Request
  slug: string
  email: string | undefined
  clientIp: string
  headers: Record<string, string | number>
}

/**
 * Who writes on a public route: the end user of a widget session (`Authorization: Bearer`), or an
 * anonymous visitor naming an e-mail address when the workspace allows it. Both are rate-limited:
 * sessions per end user, anonymous visitors per IP.
 */
export async function publicWriter(ctx: AppContext, { request, slug, email, clientIp, headers }: WriteRequest): Promise<PublicWrite> {
  const workspace = await workspaceBySlug(ctx, slug)
  const authorization = request.headers.get('authorization')
  let write: PublicWrite
  if (authorization !== null) {
    const token = /^bearer\s+(\S+)$/i.exec(authorization.trim())?.[1]
    if (!token) throw new ApiError('UNAUTHENTICATED', 'Send the session token from identify as `Authorization: Bearer <session_token>`')
    const endUser = await endUserFromSession(ctx, workspace.id, token)
    if (email !== undefined) throw invalid(['body', 'email'], 'An identified end user writes as themselves: leave email out')
    await enforceRateLimit(ctx, headers, `public-write:eu:${endUser.id}`, ctx.config.rateLimitPerIp)
    write = { workspace, caller: { kind: 'end_user', endUserId: endUser.id }, writerKey: `eu:${endUser.id}` }
  } else {
    if (!allowsAnonymous(workspace)) throw new ApiError('UNAUTHENTICATED', 'This workspace accepts feedback from identified users only: identify first and send the session token')
    await enforceRateLimit(ctx, headers, `public-write:ip:${clientIp}`, ctx.config.rateLimitPerIp)
    if (email === undefined) throw invalid(['body', 'email'], 'Anonymous visitors give an e-mail address (or identify first)')
    const normalized = email.trim().toLowerCase()
    write = { workspace, caller: { kind: 'end_user', email: normalized }, writerKey: `anon:${await sha256Hex(normalized)}` }
  }
  // A lapsed subscription makes the whole workspace read-only, its public routes included.
  if (dashboardAccess(workspace, new Date(), ctx.config.billing) !== 'full') {
    throw new ApiError('SUBSCRIPTION_INACTIVE', "The workspace's subscription has lapsed: it accepts no new feedback for now")
  }
  return write
}

interface Reply<T> { status: number; body: T }

/**
 * Runs a public write under its Idempotency-Key, if the request has one: the same key and body
 * replay the first response, another body is 422, a twin still running is 409; a failure releases the key.
 */
export async function idempotent<T>(ctx: AppContext, request: Request, write: PublicWrite, body: unknown, set: { status?: unknown; headers: Record<string, string | number> }, run: () => Promise<Reply<T>>): Promise<T> {
  const key = request.headers.get('idempotency-key')
  const finish = (reply: Reply<T>) => {
    set.status = reply.status
    return reply.body
  }
  if (key === null) return finish(await run())
  const scope = `${write.workspace.id}:${write.writerKey}`
  const outcome = await claimIdempotencyKey(ctx.db, scope, key, await requestFingerprint(request.method, new URL(request.url).pathname, body))
  if (outcome.kind === 'replay') {
    set.headers['idempotent-replayed'] = 'true'
    return finish({ status: outcome.status, body: outcome.body as T })
  }
  try {
    const reply = await run()
    await completeIdempotencyKey(ctx.db, scope, key, reply.status, reply.body)
    return finish(reply)
  } catch (error) {
    await releaseIdempotencyKey(ctx.db, scope, key)
    throw error
  }
}
