import { and, eq, gt, inArray, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { members, oauthClients, oauthConsentRequests, workspaces } from '../../db/schema/index.ts'
import { ApiError, conflict, forbidden, invalid, notFound } from '../../errors.ts'
import { randomToken, sha256Hex } from '../../lib/secrets.ts'
import { isId, newId } from '../../lib/ids.ts'
import { findClient, matchRedirectUri, touchClient, type Client } from './clients.ts'
import { OAuthError } from './errors.ts'
import { CODE_SECONDS, CONSENT_SECONDS, SCOPE_WORDS } from './model.ts'
import { checkResource } from './resources.ts'
import { parseScope } from './scopes.ts'

/** An authorize request whose client or redirect URI is wrong: shown to the user, never sent to the redirect URI. */
export class AuthorizePageError extends Error {}

/** An authorize request that is wrong otherwise: the answer goes to the (validated) redirect URI. */
export class AuthorizeRedirectError extends Error {
  constructor(readonly location: string) {
    super('authorization error')
  }
}

export interface AuthorizeRequest {
  client: Client
  redirectUri: string
  scopes: string[]
  state: string | null
  codeChallenge: string
  resource: string | null
}

/** Appends the authorization response (RFC 6749 §4.1.2, with `iss` per RFC 9207) to the client's redirect URI. */
export function responseUrl(ctx: AppContext, redirectUri: string, params: Record<string, string | null>) {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value)
  url.searchParams.set('iss', ctx.config.baseUrl)
  return url.toString()
}

/**
 * Checks an authorize request. Until the client and the redirect URI are known good, failures are
 * AuthorizePageError (rendered, never redirected: an open redirector otherwise); after that they are
 * OAuthError, which the caller sends to the redirect URI with `state`.
 */
export async function checkAuthorizeRequest(ctx: AppContext, query: URLSearchParams): Promise<AuthorizeRequest> {
  for (const name of ['client_id', 'redirect_uri', 'state', 'scope', 'response_type', 'code_challenge', 'code_challenge_method', 'resource']) {
    if (query.getAll(name).length > 1) throw new AuthorizePageError(`The parameter ${name} appears more than once`)
  }
  let client: Client | null
  try {
    client = await findClient(ctx, query.get('client_id'))
  } catch (error) {
    throw new AuthorizePageError(error instanceof OAuthError ? error.description : 'The client could not be loaded')
  }
  if (!client) throw new AuthorizePageError('Unknown client_id: the app that sent you here is not registered')
  const redirectUri = matchRedirectUri(client, query.get('redirect_uri'))
  if (!redirectUri) throw new AuthorizePageError('The redirect_uri is not one the app registered')

  const state = query.get('state')
  if (state !== null && state.length > 500) throw new AuthorizePageError('state is longer than 500 characters')
  try {
    if (query.get('response_type') !== 'code') throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported')
    const challenge = query.get('code_challenge')
    if (query.get('code_challenge_method') !== 'S256') throw new OAuthError('invalid_request', 'PKCE is required with code_challenge_method=S256 (plain is not accepted)')
    if (!challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) throw new OAuthError('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters)')
    const scopes = parseScope(query.get('scope'))
    const resource = checkResource(ctx.config.baseUrl, query.get('resource'))
    return { client, redirectUri, scopes, state, codeChallenge: challenge, resource }
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error
    throw new AuthorizeRedirectError(responseUrl(ctx, redirectUri, { error: error.error, error_description: error.description, state }))
  }
}

export async function createConsentRequest(ctx: AppContext, userId: string, request: AuthorizeRequest) {
  const id = newId('consentRequest')
  await ctx.db.insert(oauthConsentRequests).values({
    id,
    clientId: request.client.id,
    userId,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    resource: request.resource,
    state: request.state,
    codeChallenge: request.codeChallenge,
    expiresAt: new Date(Date.now() + CONSENT_SECONDS * 1000),
  })
  return id
}

/** The workspaces a user may grant to an app: those they administer or own. */
export const grantableWorkspaces = (ctx: AppContext, userId: string) =>
  ctx.db.select({ id: workspaces.id, slug: workspaces.slug, name: workspaces.name }).from(members)
    .innerJoin(workspaces, eq(workspaces.id, members.workspaceId))
    .where(and(eq(members.userId, userId), eq(members.status, 'active'), inArray(members.role, ['admin', 'owner'])))
    .orderBy(workspaces.name)

/** A pending, unexpired request of this user, with its client; anything else is 404 (another user's request is never revealed). */
export async function pendingConsent(ctx: AppContext, userId: string, requestId: string) {
  if (!isId('consentRequest', requestId)) throw notFound('Consent request')
  const [row] = await ctx.db.select({ request: oauthConsentRequests, client: oauthClients }).from(oauthConsentRequests)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthConsentRequests.clientId))
    .where(and(eq(oauthConsentRequests.id, requestId), eq(oauthConsentRequests.userId, userId)))
  if (!row) throw notFound('Consent request')
  if (row.request.status !== 'pending') throw conflict('This consent request has already been answered; start again from the app')
  if (row.request.expiresAt.getTime() <= Date.now()) throw new ApiError('NOT_FOUND', 'This consent request has expired (10 minutes); start again from the app')
  return row
}

export async function describeConsent(ctx: AppContext, userId: string, requestId: string) {
  const { request, client } = await pendingConsent(ctx, userId, requestId)
  return {
    request_id: request.id,
    client_id: client.id,
    client_name: client.name,
    // Every client so far registered itself or published its own metadata: its name is a claim, not a fact.
    client_verified: false,
    redirect_uri: request.redirectUri,
    scopes: request.scopes.map((scope) => ({ scope, description: SCOPE_WORDS[scope as keyof typeof SCOPE_WORDS] ?? scope })),
    workspaces: await grantableWorkspaces(ctx, userId),
    expires_at: request.expiresAt.toISOString(),
  }
}

export interface Decision { approve: boolean; workspace_id: string; scopes?: string[] }

/**
 * Records the user's answer once: the status moves from pending in one conditional update, so two
 * concurrent answers cannot both produce a code. Returns where to send the browser.
 */
export async function decideConsent(ctx: AppContext, userId: string, requestId: string, decision: Decision): Promise<string> {
  const { request } = await pendingConsent(ctx, userId, requestId)
  const pendingOnly = and(eq(oauthConsentRequests.id, request.id), eq(oauthConsentRequests.status, 'pending'), gt(oauthConsentRequests.expiresAt, sql`now()`))
  if (!decision.approve) {
    const [denied] = await ctx.db.update(oauthConsentRequests).set({ status: 'denied' }).where(pendingOnly).returning({ id: oauthConsentRequests.id })
    if (!denied) throw conflict('This consent request has already been answered')
    return responseUrl(ctx, request.redirectUri, { error: 'access_denied', error_description: 'The user denied access', state: request.state })
  }
  const scopes = decision.scopes ?? request.scopes
  const widened = scopes.filter((scope) => !request.scopes.includes(scope))
  if (widened.length) throw invalid(['body', 'scopes'], `Scopes can only be narrowed; not requested: ${widened.join(', ')}`)

  const [membership] = await ctx.db.select({ role: members.role }).from(members)
    .where(and(eq(members.workspaceId, decision.workspace_id), eq(members.userId, userId), eq(members.status, 'active')))
  if (!membership) throw notFound('Workspace')
  if (membership.role === 'member') throw forbidden('Only a workspace admin or owner can connect an app to it')

  const code = randomToken(32)
  const [approved] = await ctx.db.update(oauthConsentRequests).set({
    status: 'approved',
    workspaceId: decision.workspace_id,
    grantedScopes: scopes,
    codeHash: await sha256Hex(code),
    codeExpiresAt: new Date(Date.now() + CODE_SECONDS * 1000),
  }).where(pendingOnly).returning({ id: oauthConsentRequests.id })
  if (!approved) throw conflict('This consent request has already been answered')
  await touchClient(ctx, request.clientId)
  return responseUrl(ctx, request.redirectUri, { code, state: request.state })
}
