import { eq, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { oauthClients } from '../../db/schema/index.ts'
import { randomBase62, sha256Hex, timingSafeEqual } from '../../lib/secrets.ts'
import { newId } from '../../lib/ids.ts'
import { formDecode } from '../../lib/text.ts'
import { OutboundRefused } from '../../lib/outbound.ts'
import { OAuthError } from './errors.ts'
import { parseScope } from './scopes.ts'

export type Client = typeof oauthClients.$inferSelect

const MAX_REDIRECT_URIS = 10
const MAX_URI_LENGTH = 2000
const MAX_NAME_LENGTH = 100
const METADATA_MAX_BYTES = 5 * 1024
const METADATA_TIMEOUT_MS = 5000
/** A metadata document is fetched again after this long, so a client's changes reach us without a re-registration. */
const METADATA_TTL_MS = 60 * 60 * 1000

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

const isLoopback = (url: URL) => url.protocol === 'http:' && LOOPBACK.has(url.hostname)

/** https, or http on a loopback address (native apps, RFC 8252); never a fragment or user info. */
function checkRedirectUri(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > MAX_URI_LENGTH) throw new OAuthError('invalid_redirect_uri', `redirect_uris entries are strings of at most ${MAX_URI_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new OAuthError('invalid_redirect_uri', `${raw} is not an absolute URL`)
  }
  if (url.hash || raw.includes('#')) throw new OAuthError('invalid_redirect_uri', 'A redirect URI must not carry a fragment')
  if (url.username || url.password) throw new OAuthError('invalid_redirect_uri', 'A redirect URI must not carry user info')
  if (url.protocol !== 'https:' && !isLoopback(url)) throw new OAuthError('invalid_redirect_uri', 'Redirect URIs use https, or http on a loopback address (127.0.0.1, [::1], localhost)')
  return raw
}

function optionalUri(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null
  if (typeof value !== 'string' || value.length > MAX_URI_LENGTH || !/^https:\/\//.test(value) || !URL.canParse(value)) {
    throw new OAuthError('invalid_client_metadata', `${field} must be an https URL of at most ${MAX_URI_LENGTH} characters`)
  }
  return value
}

interface CheckedMetadata {
  name: string
  redirectUris: string[]
  authMethod: 'none' | 'client_secret_basic'
  clientUri: string | null
  logoUri: string | null
  grantTypes: string[]
  scope: string | null
}

/** Validates RFC 7591 client metadata (shared by registration and metadata documents). Unknown fields are ignored, as the RFC asks. */
function checkMetadata(body: Record<string, unknown>, fallbackName: string): CheckedMetadata {
  const uris = body.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array')
  if (uris.length > MAX_REDIRECT_URIS) throw new OAuthError('invalid_redirect_uri', `At most ${MAX_REDIRECT_URIS} redirect URIs`)
  const redirectUris = [...new Set(uris.map(checkRedirectUri))]

  const method = body.token_endpoint_auth_method ?? 'client_secret_basic'
  if (method !== 'none' && method !== 'client_secret_basic') {
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method must be none (public client) or client_secret_basic')
  }
  const name = body.client_name ?? fallbackName
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > MAX_NAME_LENGTH) {
    throw new OAuthError('invalid_client_metadata', `client_name must be a string of 1 to ${MAX_NAME_LENGTH} characters`)
  }
  const grantTypes = body.grant_types ?? ['authorization_code']
  if (!Array.isArray(grantTypes) || grantTypes.some((type) => type !== 'authorization_code' && type !== 'refresh_token')) {
    throw new OAuthError('invalid_client_metadata', 'grant_types may hold authorization_code and refresh_token only')
  }
  const responseTypes = body.response_types ?? ['code']
  if (!Array.isArray(responseTypes) || responseTypes.some((type) => type !== 'code')) {
    throw new OAuthError('invalid_client_metadata', 'response_types may hold code only')
  }
  const scope = body.scope === undefined ? null : typeof body.scope === 'string' ? body.scope : null
  if (body.scope !== undefined) parseScope(scope ?? undefined, 'invalid_client_metadata')
  return {
    name: name.trim(),
    redirectUris,
    authMethod: method,
    clientUri: optionalUri(body.client_uri, 'client_uri'),
    logoUri: optionalUri(body.logo_uri, 'logo_uri'),
    grantTypes: grantTypes as string[],
    scope,
  }
}

/** RFC 7591 registration: a public client (`none`) or a confidential one, whose secret is returned once and stored hashed. */
export async function registerClient(ctx: AppContext, body: unknown, ip: string) {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object of client metadata')
  const metadata = checkMetadata(body as Record<string, unknown>, 'Unnamed app')
  const secret = metadata.authMethod === 'client_secret_basic' ? randomBase62(43) : null
  const [client] = await ctx.db.insert(oauthClients).values({
    id: newId('oauthClient'),
    kind: 'dcr',
    name: metadata.name,
    redirectUris: metadata.redirectUris,
    authMethod: metadata.authMethod,
    secretHash: secret ? await sha256Hex(secret) : null,
    clientUri: metadata.clientUri,
    logoUri: metadata.logoUri,
    registeredIp: ip,
  }).returning()
  return {
    client_id: client!.id,
    client_id_issued_at: Math.floor(client!.createdAt.getTime() / 1000),
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_name: client!.name,
    redirect_uris: client!.redirectUris,
    token_endpoint_auth_method: client!.authMethod,
    grant_types: metadata.grantTypes,
    response_types: ['code'],
    ...(metadata.clientUri ? { client_uri: metadata.clientUri } : {}),
    ...(metadata.logoUri ? { logo_uri: metadata.logoUri } : {}),
    ...(metadata.scope ? { scope: metadata.scope } : {}),
  }
}

/** A client_id that names a Client ID Metadata Document: https (http too when private targets are allowed, for development). */
export function isMetadataUrl(ctx: AppContext, clientId: string) {
  if (!URL.canParse(clientId)) return false
  const url = new URL(clientId)
  return url.protocol === 'https:' || (ctx.config.webhookAllowPrivate && url.protocol === 'http:')
}

/**
 * The one place this module reaches a URL somebody else chose, through the server's outbound guard:
 * no private or metadata addresses (unless WEBHOOK_ALLOW_PRIVATE), https only, no redirects, size and time limits.
 */
async function fetchGuarded(ctx: AppContext, url: string): Promise<string> {
  let response
  try {
    response = await ctx.outbound.fetch(url, { httpsOnly: true, timeoutMs: METADATA_TIMEOUT_MS, maxBytes: METADATA_MAX_BYTES, headers: { accept: 'application/json' } })
  } catch (error) {
    throw new Error(error instanceof OutboundRefused ? `was refused: the URL ${error.message}` : `could not be fetched (${(error as Error).name})`)
  }
  if (response.status !== 200) throw new Error(`answered HTTP ${response.status}`)
  if (response.truncated) throw new Error(`is larger than ${METADATA_MAX_BYTES} bytes`)
  return response.text()
}

/** Fetches (or reuses, within an hour) the metadata document a URL client_id names; `client_id` inside must equal the URL. */
async function metadataClient(ctx: AppContext, url: string): Promise<Client> {
  const [cached] = await ctx.db.select().from(oauthClients).where(eq(oauthClients.id, url))
  if (cached?.fetchedAt && Date.now() - cached.fetchedAt.getTime() < METADATA_TTL_MS) return cached
  let document: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(await fetchGuarded(ctx, url))
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('is not a JSON object')
    document = parsed as Record<string, unknown>
  } catch (error) {
    throw new OAuthError('invalid_client', `The client metadata document at ${url} could not be used: it ${(error as Error).message}`)
  }
  if (document.client_id !== url) throw new OAuthError('invalid_client', 'The client_id inside the metadata document must equal its URL')
  const metadata = checkMetadata({ ...document, token_endpoint_auth_method: document.token_endpoint_auth_method ?? 'none' }, new URL(url).host)
  if (metadata.authMethod !== 'none') throw new OAuthError('invalid_client', 'Metadata-document clients are public clients (token_endpoint_auth_method none)')
  const values = { name: metadata.name, redirectUris: metadata.redirectUris, authMethod: 'none' as const, clientUri: metadata.clientUri, logoUri: metadata.logoUri, fetchedAt: new Date() }
  const [client] = await ctx.db.insert(oauthClients).values({ id: url, kind: 'cimd', ...values })
    .onConflictDoUpdate({ target: oauthClients.id, set: values }).returning()
  return client!
}

/** The client a client_id names, or null: a registered id, or a metadata-document URL (fetched on demand). */
export async function findClient(ctx: AppContext, clientId: string | null | undefined): Promise<Client | null> {
  if (!clientId || clientId.length > MAX_URI_LENGTH) return null
  if (isMetadataUrl(ctx, clientId)) return metadataClient(ctx, clientId)
  const [client] = await ctx.db.select().from(oauthClients).where(eq(oauthClients.id, clientId))
  return client ?? null
}

/**
 * The registered redirect URI the request names: an exact string match, except that a loopback
 * registration matches any port (RFC 8252 §7.3: native apps listen on an ephemeral port).
 */
export function matchRedirectUri(client: Client, requested: string | null): string | null {
  if (requested === null) return client.redirectUris.length === 1 ? client.redirectUris[0]! : null
  // The rules of registration first (no fragment, no user info, https or loopback http): a loopback
  // registration lets only the port vary, never what else the URL carries.
  try {
    checkRedirectUri(requested)
  } catch {
    return null
  }
  if (client.redirectUris.includes(requested)) return requested
  const asked = new URL(requested)
  if (!isLoopback(asked)) return null
  return client.redirectUris.some((registered) => {
    const url = new URL(registered)
    return isLoopback(url) && url.hostname === asked.hostname && url.pathname === asked.pathname && url.search === asked.search
  }) ? requested : null
}

/**
 * Authenticates the client at the token and revocation endpoints: HTTP Basic for confidential
 * clients, `client_id` in the form for public ones. A confidential client without its secret is refused.
 */
export async function authenticateClient(ctx: AppContext, headers: Headers, form: URLSearchParams): Promise<Client> {
  const authorization = headers.get('authorization')
  let clientId = form.get('client_id')
  let secret: string | null = null
  if (authorization && /^basic\s/i.test(authorization)) {
    let decoded: string
    try {
      decoded = atob(authorization.slice(6).trim())
    } catch {
      throw new OAuthError('invalid_client', 'Malformed Basic credentials', 401)
    }
    const colon = decoded.indexOf(':')
    if (colon === -1) throw new OAuthError('invalid_client', 'Malformed Basic credentials', 401)
    // RFC 6749 §2.3.1: both parts are form-urlencoded; one that does not decode is a bad credential, not a server error.
    const basicId = formDecode(decoded.slice(0, colon))
    const basicSecret = formDecode(decoded.slice(colon + 1))
    if (basicId === undefined || basicSecret === undefined) throw new OAuthError('invalid_client', 'Malformed Basic credentials: the id or secret is not valid percent-encoding', 401)
    if (clientId !== null && clientId !== basicId) throw new OAuthError('invalid_request', 'client_id differs from the Basic credentials')
    clientId = basicId
    secret = basicSecret
  }
  const client = await findClient(ctx, clientId).catch(() => null)
  if (!client) throw new OAuthError('invalid_client', 'Unknown client', 401)
  if (client.authMethod === 'client_secret_basic') {
    if (secret === null || !client.secretHash || !timingSafeEqual(await sha256Hex(secret), client.secretHash)) {
      throw new OAuthError('invalid_client', 'Client authentication failed', 401)
    }
  }
  return client
}

export const touchClient = (ctx: AppContext, clientId: string) =>
  ctx.db.update(oauthClients).set({ lastAuthorizedAt: sql`now()` }).where(eq(oauthClients.id, clientId))
