import { index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from './accounts.ts'
import { at, createdAt, id } from './columns.ts'
import { workspaces } from './workspaces.ts'

/**
 * Third-party apps. `id` is the client_id: `oac_...` for registered clients (RFC 7591), or the
 * https URL of a Client ID Metadata Document (`kind: cimd`), whose fields are refreshed from it.
 */
export const oauthClients = pgTable('oauth_clients', {
  id: id(),
  kind: text('kind', { enum: ['dcr', 'cimd'] }).notNull(),
  name: text('name').notNull(),
  redirectUris: jsonb('redirect_uris').$type<string[]>().notNull(),
  authMethod: text('auth_method', { enum: ['none', 'client_secret_basic'] }).notNull(),
  /** SHA-256 of the secret of a confidential client. */
  secretHash: text('secret_hash'),
  clientUri: text('client_uri'),
  logoUri: text('logo_uri'),
  registeredIp: text('registered_ip'),
  createdAt: createdAt(),
  /** When the metadata document of a CIMD client was last fetched. */
  fetchedAt: at('fetched_at'),
  lastAuthorizedAt: at('last_authorized_at'),
})

/**
 * One authorization request waiting for (then carrying) the user's decision. Approving it sets the
 * workspace, the granted scopes and the code's hash; exchanging the code records the grant family.
 */
export const oauthConsentRequests = pgTable('oauth_consent_requests', {
  id: id(),
  clientId: text('client_id').notNull().references(() => oauthClients.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  redirectUri: text('redirect_uri').notNull(),
  scopes: jsonb('scopes').$type<string[]>().notNull(),
  resource: text('resource'),
  state: text('state'),
  codeChallenge: text('code_challenge').notNull(),
  status: text('status', { enum: ['pending', 'approved', 'denied', 'exchanged'] }).notNull().default('pending'),
  createdAt: createdAt(),
  expiresAt: at('expires_at').notNull(),
  /** The workspace the user chose on the consent page; the request goes with it. */
  workspaceId: text('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
  grantedScopes: jsonb('granted_scopes').$type<string[]>(),
  codeHash: text('code_hash'),
  codeExpiresAt: at('code_expires_at'),
  familyId: text('family_id'),
}, (table) => [uniqueIndex('oauth_consent_requests_code_key').on(table.codeHash), index('oauth_consent_requests_user_idx').on(table.userId)])

/** A grant: one refresh-token family of one client in one workspace. Revoking it stops every token of the family. */
export const oauthGrants = pgTable('oauth_grants', {
  id: id(),
  clientId: text('client_id').notNull().references(() => oauthClients.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  scopes: jsonb('scopes').$type<string[]>().notNull(),
  resource: text('resource'),
  createdAt: createdAt(),
  lastUsedAt: at('last_used_at'),
  revokedAt: at('revoked_at'),
  revokedReason: text('revoked_reason', { enum: ['user', 'revocation_endpoint', 'refresh_reuse', 'code_replay', 'member_removed'] }),
}, (table) => [index('oauth_grants_workspace_idx').on(table.workspaceId), index('oauth_grants_user_idx').on(table.userId)])

/** Every access and refresh token ever issued, by SHA-256; a refresh token is marked when rotated out. */
export const oauthTokens = pgTable('oauth_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  familyId: text('family_id').notNull().references(() => oauthGrants.id, { onDelete: 'cascade' }),
  kind: text('kind', { enum: ['access', 'refresh'] }).notNull(),
  createdAt: createdAt(),
  expiresAt: at('expires_at').notNull(),
  rotatedAt: at('rotated_at'),
  revokedAt: at('revoked_at'),
}, (table) => [index('oauth_tokens_family_idx').on(table.familyId)])
