import { sql } from 'drizzle-orm'
import { index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { at, createdAt } from './columns.ts'
import { endUsers, posts } from './feedback.ts'
import { workspaces } from './workspaces.ts'

export const SUBSCRIPTION_REASONS = ['author', 'voter', 'commenter', 'merged'] as const
export type SubscriptionReason = (typeof SUBSCRIPTION_REASONS)[number]

const workspaceId = () => text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' })

/** An end user following a post, and why (docs/notifications.md); an unsubscribe keeps the row so a later vote does not re-subscribe. */
export const postSubscriptions = pgTable('post_subscriptions', {
  postId: text('post_id').notNull().references(() => posts.id, { onDelete: 'cascade' }),
  endUserId: text('end_user_id').notNull().references(() => endUsers.id, { onDelete: 'cascade' }),
  workspaceId: workspaceId(),
  reason: text('reason', { enum: SUBSCRIPTION_REASONS }).notNull(),
  unsubscribedAt: at('unsubscribed_at'),
  createdAt: createdAt(),
}, (table) => [primaryKey({ columns: [table.postId, table.endUserId] }), index('post_subscriptions_end_user_idx').on(table.endUserId)])

export const UPDATE_KINDS = ['status', 'reply', 'merged'] as const
export type UpdateKind = (typeof UPDATE_KINDS)[number]

/**
 * What one subscriber has to hear about one event: the queue of post-update e-mail. The sender takes all
 * of an end user's pending rows at once, so a burst becomes one e-mail (post-subscriptions/mail.ts).
 */
export const subscriberUpdates = pgTable('subscriber_updates', {
  eventId: text('event_id').notNull(),
  endUserId: text('end_user_id').notNull().references(() => endUsers.id, { onDelete: 'cascade' }),
  workspaceId: workspaceId(),
  postId: text('post_id').notNull(),
  kind: text('kind', { enum: UPDATE_KINDS }).notNull(),
  data: jsonb('data').$type<Record<string, any>>().notNull(),
  status: text('status', { enum: ['pending', 'sent', 'skipped', 'failed'] }).notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  leaseUntil: at('lease_until'),
  sentAt: at('sent_at'),
  createdAt: createdAt(),
}, (table) => [
  primaryKey({ columns: [table.eventId, table.endUserId] }),
  index('subscriber_updates_queue_idx').on(table.endUserId, table.createdAt).where(sql`status = 'pending'`),
])
