import { bigint, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { users } from './accounts.ts'
import { at, createdAt, id } from './columns.ts'
import { workspaces } from './workspaces.ts'

export const IMPORT_FORMATS = ['csv', 'fider', 'canny'] as const
export type ImportFormat = (typeof IMPORT_FORMATS)[number]

/** Counts per entity (post, comment, vote, user, ...): created, merged into an existing row, skipped (already imported or invalid). */
export type ImportCounts = Record<string, { created: number; merged: number; skipped: number }>
export interface ImportRowError { file: string; line: number; message: string }
/** Where a resumed run starts: the pass (entity) in progress and how many of its records are committed. */
export interface ImportCheckpoint { pass?: string; records?: number; bytes?: number }

/** An import job (migration 0040, docs/import.md): leased like the delivery jobs, committed batch by batch with its checkpoint. */
export const imports = pgTable('imports', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  format: text('format', { enum: IMPORT_FORMATS }).notNull(),
  state: text('state', { enum: ['pending', 'done', 'failed'] }).notNull().default('pending'),
  /** Part name (`file`, `votes`, `comments`) → storage key. */
  files: jsonb('files').$type<Record<string, string>>().notNull().default({}),
  options: jsonb('options').$type<{ board?: string }>().notNull().default({}),
  bytesTotal: bigint('bytes_total', { mode: 'number' }).notNull().default(0),
  checkpoint: jsonb('checkpoint').$type<ImportCheckpoint>().notNull().default({}),
  counts: jsonb('counts').$type<ImportCounts>().notNull().default({}),
  errors: jsonb('errors').$type<ImportRowError[]>().notNull().default([]),
  errorCount: integer('error_count').notNull().default(0),
  failure: text('failure'),
  attempts: integer('attempts').notNull().default(0),
  leaseOwner: integer('lease_owner'),
  leaseUntil: at('lease_until'),
  createdByUserId: text('created_by_user_id').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  startedAt: at('started_at'),
  finishedAt: at('finished_at'),
})

/** Source id → local id, per workspace, source format and entity kind: what makes a second run create nothing. */
export const externalRefs = pgTable('external_refs', {
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  source: text('source').notNull(),
  kind: text('kind').notNull(),
  externalId: text('external_id').notNull(),
  localId: text('local_id').notNull(),
  importId: text('import_id'),
  createdAt: createdAt(),
}, (table) => [primaryKey({ columns: [table.workspaceId, table.source, table.kind, table.externalId] })])
