// Connections to the chat and tracker providers: code exchange, sealed token storage, refresh on
// demand, and the `error` state a revoked token leaves behind. Plain functions over the database.
import { and, eq, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import type { Db } from '../../db/client.ts'
import { integrations, type IntegrationProvider } from '../../db/schema/index.ts'
import { ApiError, notFound, upstreamError } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Outbound } from '../../lib/outbound.ts'
import { sealContext, type Sealer } from '../../lib/secrets.ts'
import { exchangeChatCode, refreshChatToken, REVOKED_ERRORS, type ChatClientCredentials } from './chat-api.ts'
import { ProviderError } from './provider-http.ts'
import { mintState, verifyState } from './state.ts'
import { exchangeTrackerCode, ORGANIZATION_QUERY, refreshTrackerToken, trackerGraphql, type TrackerClientCredentials } from './tracker-api.ts'

export type Integration = typeof integrations.$inferSelect

/** What the integration services need; built once per app (`integrationDeps`), and by webhook delivery with its own outbound guard. */
export interface IntegrationDeps {
  db: Db
  sealer: Sealer
  chat: ChatClientCredentials
  tracker: TrackerClientCredentials
}

/** The provider clients over the app's database and sealer, calling out through `outbound`. */
export function integrationClients(ctx: Pick<AppContext, 'db' | 'secrets' | 'config' | 'outbound'>, outbound: Outbound = ctx.outbound): IntegrationDeps {
  return {
    db: ctx.db,
    sealer: ctx.secrets,
    chat: { base: ctx.config.chatApiBase, outbound, clientId: ctx.config.chatClientId, clientSecret: ctx.config.chatClientSecret },
    tracker: { base: ctx.config.trackerApiBase, outbound, clientId: ctx.config.trackerClientId, clientSecret: ctx.config.trackerClientSecret },
  }
}

export async function integrationDeps(ctx: AppContext): Promise<IntegrationDeps & { stateKey: Uint8Array }> {
  return { ...integrationClients(ctx), stateKey: await ctx.secrets.deriveKey('integration-oauth-state') }
}

/** Refresh this long before expiry, so a token never expires between the check and its use. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000

const PROVIDER_NAMES: Record<IntegrationProvider, string> = { chat: 'chat', tracker: 'issue-tracker' }

/** A provider failure as the API reports it: 502 with the provider's own error in `detail`. */
export function asUpstream(provider: IntegrationProvider, error: unknown): never {
  if (error instanceof ProviderError) throw upstreamError(PROVIDER_NAMES[provider], error.detail)
  throw error
}

export const listIntegrations = (db: Db, workspaceId: string) =>
  db.select().from(integrations).where(eq(integrations.workspaceId, workspaceId))

export async function findIntegration(db: Db, workspaceId: string, provider: IntegrationProvider): Promise<Integration | null> {
  const [row] = await db.select().from(integrations).where(and(eq(integrations.workspaceId, workspaceId), eq(integrations.provider, provider)))
  return row ?? null
}

/** The connection, or 409 when the workspace has not connected the provider (or its token was revoked). */
export async function requireIntegration(db: Db, workspaceId: string, provider: IntegrationProvider): Promise<Integration> {
  const row = await findIntegration(db, workspaceId, provider)
  if (!row) throw new ApiError('CONFLICT', `Connect the ${PROVIDER_NAMES[provider]} integration first`)
  if (row.status === 'error') throw new ApiError('CONFLICT', `The ${PROVIDER_NAMES[provider]} integration needs to be reconnected: ${row.statusReason ?? 'the provider refused its token'}`)
  return row
}

export const stateFor = (key: Uint8Array, sessionId: string, workspaceId: string, provider: IntegrationProvider) =>
  mintState(key, { sessionId, workspaceId, provider })

export interface ConnectInput { code: string; state: string; redirect_uri?: string }

/**
 * Checks the state against the caller's session, exchanges the code, and stores (or replaces) the
 * connection with its tokens sealed. Reconnecting keeps the id, so channel mappings survive.
 */
export async function connect(deps: IntegrationDeps & { stateKey: Uint8Array }, workspaceId: string, session: { sessionId: string; userId: string }, provider: IntegrationProvider, input: ConnectInput) {
  if (!(await verifyState(deps.stateKey, { sessionId: session.sessionId, workspaceId, provider }, input.state))) {
    throw new ApiError('FORBIDDEN', 'The OAuth state is not valid for this session, workspace and provider (or has expired): start the install again')
  }
  let grant: { accessToken: string; refreshToken: string | null; expiresIn: number | null; scope: string | null }
  let external: { id: string | null; name: string | null }
  try {
    if (provider === 'chat') {
      const chat = await exchangeChatCode(deps.chat, input.code, input.redirect_uri)
      grant = chat
      external = { id: chat.teamId, name: chat.teamName }
    } else {
      grant = await exchangeTrackerCode(deps.tracker, input.code, input.redirect_uri)
      const { organization } = await trackerGraphql(deps.tracker, grant.accessToken, ORGANIZATION_QUERY)
      external = { id: organization?.id ?? null, name: organization?.name ?? null }
    }
  } catch (error) {
    asUpstream(provider, error)
  }
  return deps.db.transaction(async (tx) => {
    const [existing] = await tx.select({ id: integrations.id }).from(integrations)
      .where(and(eq(integrations.workspaceId, workspaceId), eq(integrations.provider, provider))).for('update')
    const id = existing?.id ?? newId('integration')
    const values = {
      status: 'active' as const,
      statusReason: null,
      externalId: external.id,
      externalName: external.name,
      scopes: grant.scope,
      accessToken: await deps.sealer.seal(grant.accessToken, sealContext.integrationToken(id, 'access')),
      refreshToken: grant.refreshToken ? await deps.sealer.seal(grant.refreshToken, sealContext.integrationToken(id, 'refresh')) : null,
      expiresAt: grant.expiresIn ? new Date(Date.now() + grant.expiresIn * 1000) : null,
      connectedByUserId: session.userId,
      updatedAt: new Date(),
    }
    const [row] = existing
      ? await tx.update(integrations).set(values).where(eq(integrations.id, id)).returning()
      : await tx.insert(integrations).values({ id, workspaceId, provider, ...values }).returning()
    return row!
  })
}

/** Deletes the connection with its sealed tokens (and, for chat, its mappings and pending deliveries). */
export async function disconnect(db: Db, workspaceId: string, provider: IntegrationProvider) {
  const deleted = await db.delete(integrations).where(and(eq(integrations.workspaceId, workspaceId), eq(integrations.provider, provider))).returning({ id: integrations.id })
  if (!deleted.length) throw notFound('Integration')
}

/** The provider refused the token for good: stop using it until an admin reconnects. */
export async function markRevoked(db: Db, integrationId: string, reason: string) {
  await db.update(integrations).set({ status: 'error', statusReason: reason, updatedAt: sql`now()` }).where(eq(integrations.id, integrationId))
}

const needsRefresh = (row: Integration, now = Date.now()) =>
  row.refreshToken !== null && row.expiresAt !== null && row.expiresAt.getTime() - now < REFRESH_MARGIN_MS

/** Errors of the refresh grant that mean the refresh token is dead (not a passing outage). */
const DEAD_REFRESH = new Set(['invalid_grant', 'invalid_refresh_token', ...REVOKED_ERRORS])

/**
 * A usable access token. Near expiry it is refreshed under a row lock: a concurrent caller waits,
 * then finds the new pair and uses it, so a single-use refresh token is never spent twice, and the
 * rotated pair is stored in the same transaction that read the old one.
 */
export async function accessToken(deps: IntegrationDeps, row: Integration): Promise<string> {
  if (!needsRefresh(row)) return deps.sealer.unseal(row.accessToken, sealContext.integrationToken(row.id, 'access'))
  try {
    return await deps.db.transaction(async (tx) => {
      const [locked] = await tx.select().from(integrations).where(eq(integrations.id, row.id)).for('update')
      if (!locked) throw new ProviderError('the integration was disconnected')
      if (!needsRefresh(locked)) return deps.sealer.unseal(locked.accessToken, sealContext.integrationToken(locked.id, 'access'))
      const refreshToken = await deps.sealer.unseal(locked.refreshToken!, sealContext.integrationToken(locked.id, 'refresh'))
      const grant = locked.provider === 'chat' ? await refreshChatToken(deps.chat, refreshToken) : await refreshTrackerToken(deps.tracker, refreshToken)
      await tx.update(integrations).set({
        accessToken: await deps.sealer.seal(grant.accessToken, sealContext.integrationToken(locked.id, 'access')),
        // A provider that does not rotate keeps the old refresh token valid.
        refreshToken: await deps.sealer.seal(grant.refreshToken ?? refreshToken, sealContext.integrationToken(locked.id, 'refresh')),
        expiresAt: grant.expiresIn ? new Date(Date.now() + grant.expiresIn * 1000) : null,
        updatedAt: sql`now()`,
      }).where(eq(integrations.id, locked.id))
      return grant.accessToken
    })
  } catch (error) {
    if (error instanceof ProviderError && DEAD_REFRESH.has(error.detail)) await markRevoked(deps.db, row.id, `token refresh refused: ${error.detail}`)
    throw error
  }
}

/** Whether a provider error means the token is gone for good (not a passing outage). */
export const isRevoked = (provider: IntegrationProvider, error: ProviderError) =>
  provider === 'chat' ? REVOKED_ERRORS.has(error.detail) : error.status === 401

/**
 * Runs a live call with the workspace's token: 409 when not connected, the integration marked
 * `error` when the provider refuses the token, and any provider failure as 502 UPSTREAM_ERROR.
 */
export async function withProvider<T>(deps: IntegrationDeps, workspaceId: string, provider: IntegrationProvider, call: (token: string) => Promise<T>): Promise<T> {
  const integration = await requireIntegration(deps.db, workspaceId, provider)
  try {
    return await call(await accessToken(deps, integration))
  } catch (error) {
    if (error instanceof ProviderError && isRevoked(provider, error)) await markRevoked(deps.db, integration.id, `the provider refused the token: ${error.detail}`)
    asUpstream(provider, error)
  }
}
