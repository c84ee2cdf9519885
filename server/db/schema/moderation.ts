import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { createdAt, id } from './columns.ts'
import { posts } from './feedback.ts'
import { workspaces } from './workspaces.ts'

/** What the spam score saw of one end-user write (hashed) and what it gave (migration 0047); bursts are counted here. */
export const moderationChecks = pgTable('moderation_checks', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  postId: text('post_id').references(() => posts.id, { onDelete: 'cascade' }),
  ipHash: text('ip_hash'),
  emailHash: text('email_hash'),
  domainHash: text('domain_hash'),
  textHash: text('text_hash').notNull(),
  score: integer('score').notNull(),
  reasons: jsonb('reasons').$type<string[]>().notNull().default([]),
  createdAt: createdAt(),
}, (table) => [
  index('moderation_checks_ip_idx').on(table.workspaceId, table.ipHash, table.createdAt),
  index('moderation_checks_email_idx').on(table.workspaceId, table.emailHash, table.createdAt),
  index('moderation_checks_domain_idx').on(table.workspaceId, table.domainHash, table.createdAt),
  index('moderation_checks_text_idx').on(table.workspaceId, table.textHash, table.createdAt),
  index('moderation_checks_post_idx').on(table.postId),
])

/** A blocked e-mail address, domain or IP: only its HMAC under SECRET_KEY is kept, and a masked hint to recognise it. */
export const moderationBlocks = pgTable('moderation_blocks', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  kind: text('kind', { enum: ['email', 'domain', 'ip'] }).notNull(),
  valueHash: text('value_hash').notNull(),
  hint: text('hint').notNull(),
  note: text('note'),
  createdAt: createdAt(),
}, (table) => [uniqueIndex('moderation_blocks_value_idx').on(table.workspaceId, table.kind, table.valueHash)])
