// A Linear-compatible client: OAuth tokens at `{TRACKER_API_BASE}/oauth/token` (form-encoded, code
// and refresh grants) and GraphQL at `{TRACKER_API_BASE}/graphql`.
import { ProviderError, providerFetch, type ProviderApi } from './provider-http.ts'

export interface TrackerTokenGrant {
  accessToken: string
  refreshToken: string | null
  expiresIn: number | null
  scope: string | null
}

export interface TrackerClientCredentials extends ProviderApi { clientId?: string; clientSecret?: string }

async function tokenRequest(app: TrackerClientCredentials, params: Record<string, string | undefined>): Promise<TrackerTokenGrant> {
  const form = new URLSearchParams()
  for (const [name, value] of Object.entries({ ...params, client_id: app.clientId, client_secret: app.clientSecret })) if (value !== undefined) form.set(name, value)
  const { status, json } = await providerFetch(app, '/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() })
  if (status >= 400 || typeof json?.access_token !== 'string') {
    throw new ProviderError(String(json?.error_description ?? json?.error ?? `HTTP ${status}`), status)
  }
  return {
    accessToken: json.access_token,
    refreshToken: typeof json.refresh_token === 'string' ? json.refresh_token : null,
    expiresIn: typeof json.expires_in === 'number' ? json.expires_in : null,
    scope: typeof json.scope === 'string' ? json.scope : Array.isArray(json.scope) ? json.scope.join(',') : null,
  }
}

export const exchangeTrackerCode = (app: TrackerClientCredentials, code: string, redirectUri?: string) =>
  tokenRequest(app, { grant_type: 'authorization_code', code, redirect_uri: redirectUri })

export const refreshTrackerToken = (app: TrackerClientCredentials, refreshToken: string) =>
  tokenRequest(app, { grant_type: 'refresh_token', refresh_token: refreshToken })

/** A GraphQL call; GraphQL `errors` and non-2xx answers become ProviderError with the provider's message. */
export async function trackerGraphql<T = any>(api: ProviderApi, token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const { status, json } = await providerFetch(api, '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  })
  const message = json?.errors?.[0]?.message
  if (status >= 400 || message) throw new ProviderError(String(message ?? `HTTP ${status}`), status)
  if (!json?.data) throw new ProviderError('GraphQL answer without data', status)
  return json.data as T
}

export const ORGANIZATION_QUERY = 'query Organization { organization { id name } }'
export const TEAMS_QUERY = 'query Teams { teams(first: 250) { nodes { id name key } } }'
export const ISSUE_CREATE_MUTATION = `mutation IssueCreate($input: IssueCreateInput!) {
  issueCreate(input: $input) { success issue { id identifier url } }
}`
export const ISSUE_STATE_QUERY = 'query IssueState($id: String!) { issue(id: $id) { id state { type name } } }'
