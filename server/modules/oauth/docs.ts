// OpenAPI descriptions of the protocol endpoints. They answer in the OAuth wire formats (form bodies,
// RFC error objects), which route schemas cannot express, so their documentation is written out here.

import type { DocumentDecoration } from 'elysia'

/** The hand-written objects are valid OpenAPI; Elysia's type is narrower than the spec about schema values. */
const doc = (value: Record<string, unknown>) => value as DocumentDecoration

const tags = ['OAuth']
const root = [{ url: '/', description: 'The protocol endpoints live at the root of BASE_URL, not under /api/v1' }]

const oauthErrorSchema = {
  $id: 'OAuthError',
  type: 'object',
  examples: [{ error: 'invalid_grant', error_description: 'The code has expired', code: 'BAD_REQUEST', message: 'The code has expired', detail: 'The code has expired', request_id: 'req_0mi9x2k3aq1b2c3d4e5f6g7h8' }],
  description: 'An RFC 6749 error object (`error`, `error_description`), with the common error fields (`code`, `message`, `detail`, `request_id`) beside it',
  required: ['error', 'code', 'message', 'detail', 'request_id'],
  properties: { error: { type: 'string', examples: ['invalid_grant'] }, error_description: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' }, detail: {}, request_id: { type: 'string' } },
}
const oauthErrors = {
  400: { description: 'OAuth error (invalid_request, invalid_grant, invalid_client_metadata, ...)', content: { 'application/json': { schema: oauthErrorSchema } } },
  401: { description: 'invalid_client: unknown client, or wrong client secret', content: { 'application/json': { schema: oauthErrorSchema } } },
}
const form = (properties: Record<string, unknown>, required: string[], example: Record<string, string>) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required, properties }, example } },
})
const str = (description: string) => ({ type: 'string', description })

const tokenResponse = {
  $id: 'OAuthTokenResponse',
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in', 'scope'],
  properties: {
    access_token: str('`chorus_at_...`, valid 1 hour; use it as `Authorization: Bearer`, exactly like an API key with the granted scopes'),
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', examples: [3600] },
    refresh_token: str('`chorus_rt_...`, valid 30 days, rotated on every use. Absent when a rotated-out token was presented within the grace window: keep the refresh token you have'),
    scope: str('The granted scopes, space-separated'),
  },
  examples: [{ access_token: 'chorus_at_...', token_type: 'Bearer', expires_in: 3600, refresh_token: 'chorus_rt_...', scope: 'posts:read posts:write' }],
}

export const metadataDoc = doc({
  operationId: 'oauthServerMetadata', tags, security: [], servers: root, summary: 'Authorization server metadata (RFC 8414)',
  description: 'The issuer is BASE_URL exactly, so the document sits at the root well-known path. It names every endpoint, `code_challenge_methods_supported: ["S256"]`, `authorization_response_iss_parameter_supported` and `client_id_metadata_document_supported`.',
  responses: { 200: { description: 'The metadata', content: { 'application/json': { schema: { $id: 'OAuthServerMetadata', type: 'object', required: ['issuer', 'authorization_endpoint', 'token_endpoint'], additionalProperties: true, examples: [{ issuer: 'https://chorus.example.com', authorization_endpoint: 'https://chorus.example.com/oauth/authorize', token_endpoint: 'https://chorus.example.com/oauth/token', code_challenge_methods_supported: ['S256'] }] } } } } },
})

export const registerDoc = doc({
  operationId: 'oauthRegisterClient', tags, security: [], servers: root, summary: 'Register an OAuth client (RFC 7591)',
  description: 'Open registration. `token_endpoint_auth_method` `none` makes a public client (PKCE only); `client_secret_basic` (the RFC default) returns a `client_secret` once, stored hashed. Redirect URIs: https, or http on a loopback address (any port matches at authorize); at most 10, 2000 characters each; `client_name` at most 100 characters. Unknown metadata is ignored. Limited per IP (RATE_LIMIT_PER_IP a minute). Instead of registering, a client may use the https URL of its Client ID Metadata Document as `client_id`.',
  requestBody: { required: true, content: { 'application/json': { schema: { $id: 'OAuthClientMetadata', type: 'object', required: ['redirect_uris'], properties: { redirect_uris: { type: 'array', items: { type: 'string' } }, client_name: { type: 'string' }, token_endpoint_auth_method: { type: 'string', enum: ['none', 'client_secret_basic'] }, grant_types: { type: 'array', items: { type: 'string' } }, client_uri: { type: 'string' }, logo_uri: { type: 'string' }, scope: { type: 'string' } }, examples: [{ client_name: 'My assistant', redirect_uris: ['http://127.0.0.1:33418/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }] } } } },
  responses: { 201: { description: 'The registered client', content: { 'application/json': { schema: { $id: 'OAuthClientInformation', type: 'object', required: ['client_id', 'redirect_uris', 'token_endpoint_auth_method'], additionalProperties: true, examples: [{ client_id: 'oac_0mi9x2k3aq1b2c3d4e5f6g7h8', client_id_issued_at: 1795400000, client_name: 'My assistant', redirect_uris: ['http://127.0.0.1:33418/callback'], token_endpoint_auth_method: 'none' }] } } } }, ...oauthErrors },
})

const AUTHORIZE_EXAMPLE = {
  client_id: 'oac_0mi9x2k3aq1b2c3d4e5f6g7h8', redirect_uri: 'http://127.0.0.1:33418/callback', response_type: 'code',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', scope: 'posts:read posts:write',
  state: 'af0ifjsldkj', resource: 'https://chorus.example.com/mcp',
}

export const authorizeDoc = doc({
  operationId: 'oauthAuthorize', tags, security: [{ cookieAuth: [] }], servers: root, summary: 'Start an authorization (code + PKCE S256)',
  description: '`response_type=code`, `code_challenge` with `code_challenge_method=S256` (plain is refused), the exact registered `redirect_uri` (loopback: any port), optional `scope` (default: the read scopes), `state` (echoed), `resource` (RFC 8707: `{BASE_URL}/mcp` or the API, `{BASE_URL}/api/v1`). A wrong client or redirect URI is shown as an error page and never redirected; other errors go to the redirect URI with `error`, `state` and `iss`. Signed in: 302 to the consent page `{DASHBOARD_URL}/oauth/consent/{request_id}`; otherwise 302 to sign-in, which comes back here.',
  parameters: Object.entries(AUTHORIZE_EXAMPLE).map(([name, example]) => ({ name, in: 'query', required: ['client_id', 'response_type', 'code_challenge', 'code_challenge_method'].includes(name), schema: { type: 'string', examples: [example] } })),
  responses: { 302: { description: 'To the consent page, to sign-in, or (errors) to the client with `error`' }, 400: { description: 'An HTML error page: unknown client or unregistered redirect URI (never redirected)', content: { 'text/html': { schema: { type: 'string' } } } } },
})

export const tokenDoc = doc({
  operationId: 'oauthToken', tags, security: [], servers: root, summary: 'Exchange a code or a refresh token for tokens',
  description: '`authorization_code`: the code lives 60 seconds and is single use (a second use revokes the tokens of the first); `code_verifier` must match the challenge; `redirect_uri` and `resource` must match the authorize request. `refresh_token`: rotates on every use. A rotated-out refresh token presented again within OAUTH_REFRESH_GRACE_SECONDS (default 30) of its rotation gets a new access token and no refresh token; later, the reuse revokes the whole grant. Public clients send `client_id`; confidential ones HTTP Basic.',
  requestBody: form({ grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token'] }, code: str('authorization_code'), code_verifier: str('authorization_code'), redirect_uri: str('authorization_code'), resource: str('optional'), refresh_token: str('refresh_token'), client_id: str('public clients') }, ['grant_type'], { grant_type: 'refresh_token', refresh_token: 'chorus_rt_...', client_id: 'oac_0mi9x2k3aq1b2c3d4e5f6g7h8' }),
  responses: { 200: { description: 'Tokens', content: { 'application/json': { schema: tokenResponse } } }, ...oauthErrors },
})

export const revokeDoc = doc({
  operationId: 'oauthRevoke', tags, security: [], servers: root, summary: 'Revoke a token (RFC 7009)',
  description: 'A refresh token revokes its whole grant (every token of the family); an access token only itself. Unknown tokens, and tokens of other clients, are answered 200 as well.',
  requestBody: form({ token: str('The token'), token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] }, client_id: str('public clients') }, ['token'], { token: 'chorus_rt_...', client_id: 'oac_0mi9x2k3aq1b2c3d4e5f6g7h8' }),
  responses: { 200: { description: 'Revoked (or nothing to revoke)' }, ...oauthErrors },
})
