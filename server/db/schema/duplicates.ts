import { sql } from 'drizzle-orm'
import { index, integer, jsonb, pgTable, real, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { at, createdAt, id } from './columns.ts'
import { posts } from './feedback.ts'
import { workspaces } from './workspaces.ts'

/**
 * "`postId` (the newer post) asks for what `candidateId` already asks" (migration 0030), found when the
 * post was created; one row per pair whichever way round, so a dismissed pair is never suggested again.
 */
export const duplicateSuggestions = pgTable('duplicate_suggestions', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  candidateId: text('candidate_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  score: real('score').notNull(),
  reasons: jsonb('reasons').$type<string[]>().notNull().default([]),
  status: text('status', { enum: ['open', 'accepted', 'dismissed'] }).notNull().default('open'),
  decidedAt: at('decided_at'),
  createdAt: createdAt(),
}, (table) => [
  uniqueIndex('duplicate_suggestions_pair_idx').on(sql`least(${table.postId}, ${table.candidateId})`, sql`greatest(${table.postId}, ${table.candidateId})`),
  index('duplicate_suggestions_open_idx').on(table.workspaceId, table.createdAt.desc(), table.id.desc()).where(sql`status = 'open'`),
  index('duplicate_suggestions_candidate_idx').on(table.candidateId),
])

/** A new post whose duplicate-suggestion step is still to run (migration 0038): queued by the dispatcher, worked off by the suggester loop. */
export const duplicateChecks = pgTable('duplicate_checks', {
  postId: text('post_id').primaryKey().references(() => posts.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  attempts: integer('attempts').notNull().default(0),
  leaseUntil: at('lease_until'),
  createdAt: createdAt(),
}, (table) => [index('duplicate_checks_created_idx').on(table.createdAt)])
