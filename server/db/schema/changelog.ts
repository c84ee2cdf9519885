import { sql } from 'drizzle-orm'
import { index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { at, createdAt, id } from './columns.ts'
import { endUsers, posts } from './feedback.ts'
import { workspaces } from './workspaces.ts'

const workspaceId = () => text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' })

/** A changelog entry: Markdown as written plus its sanitised HTML, rendered once on write. */
export const changelogEntries = pgTable('changelog_entries', {
  id: id(),
  workspaceId: workspaceId(),
  title: text('title').notNull(),
  body: text('body').notNull(),
  bodyHtml: text('body_html').notNull(),
  /** Null while a draft; set once the entry is published (publishing is never undone by the service). */
  publishedAt: at('published_at'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [index('changelog_entries_workspace_published_idx').on(table.workspaceId, table.publishedAt, table.id)])

export const changelogPosts = pgTable('changelog_posts', {
  entryId: text('entry_id').notNull().references(() => changelogEntries.id, { onDelete: 'cascade' }),
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  workspaceId: workspaceId(),
}, (table) => [primaryKey({ columns: [table.entryId, table.postId] }), index('changelog_posts_post_idx').on(table.postId)])

/**
 * One row per (entry, end user): written when the entry is published, so a voter of several linked
 * posts, a re-publish or a retried dispatch can never mail anyone twice. `sent_at` records delivery.
 */
export const changelogEmails = pgTable('changelog_emails', {
  entryId: text('entry_id').notNull().references(() => changelogEntries.id, { onDelete: 'cascade' }),
  endUserId: text('end_user_id').notNull().references(() => endUsers.id, { onDelete: 'cascade' }),
  workspaceId: workspaceId(),
  status: text('status', { enum: ['pending', 'sent', 'skipped', 'failed'] }).notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  leaseUntil: at('lease_until'),
  sentAt: at('sent_at'),
  createdAt: createdAt(),
}, (table) => [
  primaryKey({ columns: [table.entryId, table.endUserId] }),
  // The sender's queue, by due time (as notification_events_email_due_at_idx).
  index('changelog_emails_due_at_idx').on(sql`(coalesce(${table.leaseUntil}, ${table.createdAt}))`).where(sql`status = 'pending'`),
])

/** End users who said "no more changelog mail" for one workspace; the token is their unsubscribe link. */
export const changelogSubscriptions = pgTable('changelog_subscriptions', {
  endUserId: text('end_user_id').primaryKey().references(() => endUsers.id, { onDelete: 'cascade' }),
  workspaceId: workspaceId(),
  token: text('token').notNull(),
  unsubscribedAt: at('unsubscribed_at'),
  createdAt: createdAt(),
}, (table) => [uniqueIndex('changelog_subscriptions_token_key').on(table.token)])
