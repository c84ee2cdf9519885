import { boolean, index, jsonb, pgTable, primaryKey, text, uniqueIndex, type AnyPgColumn } from 'drizzle-orm/pg-core'
import { at, createdAt, id } from './columns.ts'
import { workspaces } from './workspaces.ts'

export const users = pgTable('users', {
  id: id(),
  /** Stored lower-cased; unique. */
  email: text('email').notNull(),
  name: text('name'),
  locale: text('locale').notNull().default('en'),
  avatarFileId: text('avatar_file_id'),
  emailVerified: boolean('email_verified').notNull().default(false),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [uniqueIndex('users_email_key').on(table.email)])

export const sessions = pgTable('sessions', {
  id: id(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  /** Set when a superadmin acts as this user; such sessions cannot refresh. */
  impersonatorId: text('impersonator_id'),
  userAgent: text('user_agent'),
  createdAt: createdAt(),
  expiresAt: at('expires_at').notNull(),
  revokedAt: at('revoked_at'),
}, (table) => [index('sessions_user_idx').on(table.userId)])

/** One row per refresh token ever issued; a second use of a rotated one revokes the session. */
export const refreshTokens = pgTable('refresh_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  sessionId: text('session_id').notNull().references(() => sessions.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
  expiresAt: at('expires_at').notNull(),
  rotatedAt: at('rotated_at'),
}, (table) => [index('refresh_tokens_session_idx').on(table.sessionId)])

/** Single-use tokens sent by e-mail or minted for impersonation; only their SHA-256 is stored. */
export const authTokens = pgTable('auth_tokens', {
  tokenHash: text('token_hash').primaryKey(),
  purpose: text('purpose', { enum: ['magic_link', 'verify_email', 'invitation', 'impersonation'] }).notNull(),
  email: text('email').notNull(),
  userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
  data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
  createdAt: createdAt(),
  expiresAt: at('expires_at').notNull(),
  usedAt: at('used_at'),
}, (table) => [index('auth_tokens_email_idx').on(table.email)])

/** Messages kept when no SMTP server is configured, so a local user can still sign in. */
export const emailOutbox = pgTable('email_outbox', {
  id: id(),
  to: text('to').notNull(),
  subject: text('subject').notNull(),
  text: text('text').notNull(),
  html: text('html'),
  /** Mail about a workspace (invitations, notifications) is deleted with it. */
  workspaceId: text('workspace_id').references((): AnyPgColumn => workspaces.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
}, (table) => [index('email_outbox_workspace_idx').on(table.workspaceId), index('email_outbox_to_idx').on(table.to)])

/** A sign-in through an OpenID provider: the provider's (issuer, sub) pair names the user, never the e-mail alone. */
export const userIdentities = pgTable('user_identities', {
  issuer: text('issuer').notNull(),
  subject: text('subject').notNull(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  /** The address the provider last asserted, for support; linking never reads it. */
  email: text('email'),
  createdAt: createdAt(),
  lastLoginAt: at('last_login_at').notNull().defaultNow(),
}, (table) => [primaryKey({ columns: [table.issuer, table.subject] }), index('user_identities_user_idx').on(table.userId)])
