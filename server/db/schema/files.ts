import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from './accounts.ts'
import { at, createdAt, id } from './columns.ts'
import { workspaces } from './workspaces.ts'

export const FILE_PURPOSES = ['avatar', 'logo', 'favicon'] as const
export type FilePurpose = (typeof FILE_PURPOSES)[number]

/**
 * Every stored upload, owned by exactly one user or workspace (cascading with it), with its object key
 * in storage. Deleting an owner must also delete the objects: list them here first (deleteStoredFiles).
 * `users.avatar_file_id`, `workspaces.logo_file_id` and `.favicon_file_id` reference `files.id`
 * ON DELETE SET NULL (declared in the migration only, to keep these modules free of an import cycle).
 */
export const files = pgTable('files', {
  id: id(),
  key: text('key').notNull(),
  purpose: text('purpose', { enum: FILE_PURPOSES }).notNull(),
  /** The type detected from the bytes, served as Content-Type. */
  contentType: text('content_type').notNull(),
  size: integer('size').notNull(),
  userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
}, (table) => [
  uniqueIndex('files_key_key').on(table.key),
  index('files_user_idx').on(table.userId),
  index('files_workspace_idx').on(table.workspaceId),
  check('files_one_owner', sql`num_nonnulls(${table.userId}, ${table.workspaceId}) = 1`),
])

/** Contact-form challenges already redeemed, kept until they expire so every process refuses a replay. */
export const contactChallengesUsed = pgTable('contact_challenges_used', {
  /** SHA-256 of the challenge nonce. */
  id: text('id').primaryKey(),
  expiresAt: at('expires_at').notNull(),
}, (table) => [index('contact_challenges_used_expires_idx').on(table.expiresAt)])

export const contactMessages = pgTable('contact_messages', {
  id: id(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  message: text('message').notNull(),
  createdAt: createdAt(),
})
