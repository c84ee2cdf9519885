import * as oauth from 'oauth4webapi'
import { BASE, type Harness, type TestClient } from './harness.ts'

export const REDIRECT = 'http://127.0.0.1:8976/callback'

/** Options every oauth4webapi call gets: plain http to the test base URL, answered by `app.handle` (no network). */
export function clientOptions(h: Harness) {
  return {
    [oauth.allowInsecureRequests]: true,
    [oauth.customFetch]: (url: string, init: RequestInit) => h.app.handle(new Request(url, init)),
  }
}

/** Discovery through oauth4webapi (RFC 8414 algorithm), as a real client does it. */
export async function discover(h: Harness) {
  const issuer = new URL(BASE)
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...clientOptions(h) }))
}

export interface RegisteredClient {
  client: oauth.Client
  auth: oauth.ClientAuth
  secret?: string
}

/** Registers a public (`none`) or confidential (`client_secret_basic`) client through oauth4webapi's DCR. */
export async function register(h: Harness, as: oauth.AuthorizationServer, method: 'none' | 'client_secret_basic' = 'none', redirectUris = [REDIRECT]): Promise<RegisteredClient> {
  const response = await oauth.dynamicClientRegistrationRequest(as, {
    client_name: 'Test Assistant', redirect_uris: redirectUris, token_endpoint_auth_method: method, grant_types: ['authorization_code', 'refresh_token'],
  }, clientOptions(h))
  const client = await oauth.processDynamicClientRegistrationResponse(response)
  const secret = client.client_secret as string | undefined
  return { client, auth: method === 'none' ? oauth.None() : oauth.ClientSecretBasic(secret!), secret }
}

export interface AuthorizeOptions {
  scope?: string
  resource?: string
  redirectUri?: string
  state?: string
}

/** The browser leg: authorize with the user's session, returns the consent request id (the location must be the consent page). */
export async function startAuthorization(as: oauth.AuthorizationServer, rc: RegisteredClient, browser: TestClient, options: AuthorizeOptions = {}) {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = options.state ?? oauth.generateRandomState()
  const url = new URL(as.authorization_endpoint!)
  url.searchParams.set('client_id', rc.client.client_id)
  url.searchParams.set('redirect_uri', options.redirectUri ?? REDIRECT)
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier))
  url.searchParams.set('code_challenge_method', 'S256')
  url.searchParams.set('state', state)
  if (options.scope) url.searchParams.set('scope', options.scope)
  if (options.resource) url.searchParams.set('resource', options.resource)
  const response = await browser.get(`${url.pathname}${url.search}`)
  if (response.status !== 302) throw new Error(`authorize answered ${response.status}: ${JSON.stringify(response.body)}`)
  const location = response.headers.get('location')!
  const requestId = /\/oauth\/consent\/(ocr_[0-9a-z]+)$/.exec(location)?.[1]
  if (!requestId) throw new Error(`authorize redirected to ${location}`)
  return { requestId, verifier, state, location }
}

/** Whole flow: authorize → consent POST → code → tokens, every protocol step through oauth4webapi. */
export async function authorizeAndExchange(h: Harness, as: oauth.AuthorizationServer, rc: RegisteredClient, browser: TestClient, workspaceId: string, options: AuthorizeOptions & { scopes?: string[] } = {}) {
  const started = await startAuthorization(as, rc, browser, options)
  const decided = await browser.post(`/api/v1/oauth/consent/${started.requestId}`, { approve: true, workspace_id: workspaceId, ...(options.scopes ? { scopes: options.scopes } : {}) })
  if (decided.status !== 200) throw new Error(`consent answered ${decided.status}: ${JSON.stringify(decided.body)}`)
  const params = oauth.validateAuthResponse(as, rc.client, new URL(decided.body.redirect_to), started.state)
  const response = await oauth.authorizationCodeGrantRequest(as, rc.client, rc.auth, params, options.redirectUri ?? REDIRECT, started.verifier, clientOptions(h))
  const tokens = await oauth.processAuthorizationCodeResponse(as, rc.client, response)
  return { tokens, code: params.get('code')!, verifier: started.verifier, redirectTo: decided.body.redirect_to as string }
}

export async function refreshTokens(h: Harness, as: oauth.AuthorizationServer, rc: RegisteredClient, refreshToken: string) {
  return oauth.processRefreshTokenResponse(as, rc.client, await oauth.refreshTokenGrantRequest(as, rc.client, rc.auth, refreshToken, clientOptions(h)))
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
