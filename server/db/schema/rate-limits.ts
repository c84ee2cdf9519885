import { bigint, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { at } from './columns.ts'

/**
 * Fixed-window request counters shared by every server process on PostgreSQL (without Redis).
 * UNLOGGED in the migration: no WAL per request, and after a crash the counters start again from zero.
 */
export const rateLimitCounters = pgTable('rate_limit_counters', {
  key: text('key').notNull(),
  /** The window's number: epoch milliseconds divided by the window's length. */
  window: bigint('window', { mode: 'number' }).notNull(),
  count: integer('count').notNull(),
  expiresAt: at('expires_at').notNull(),
}, (table) => [primaryKey({ columns: [table.key, table.window] }), index('rate_limit_counters_expires_idx').on(table.expiresAt)])
