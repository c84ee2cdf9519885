import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { at, createdAt, id } from './columns.ts'
import { events } from './feedback.ts'
import { workspaces } from './workspaces.ts'

export const webhooks = pgTable('webhooks', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  events: jsonb('events').$type<string[]>().notNull(),
  description: text('description'),
  enabled: boolean('enabled').notNull().default(true),
  /** Why the service turned the endpoint off (e.g. the receiver answered 410); null when a person did, or when enabled. */
  disabledReason: text('disabled_reason'),
  /** The signing secret, sealed with a key derived from SECRET_KEY (server/lib/secrets.ts, context `webhook:<id>`). */
  secret: text('secret').notNull(),
  /** The secret before the last rotation, still signing alongside the new one until previousSecretExpiresAt. */
  previousSecret: text('previous_secret'),
  previousSecretExpiresAt: at('previous_secret_expires_at'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [index('webhooks_workspace_idx').on(table.workspaceId)])

/**
 * Outbox events not yet fanned out to the subscribers (notifications, chat, post subscribers, duplicate checks). A trigger on `events` inserts
 * here in the writer's transaction (migrations 0005, 0054), so no committed event can be missed.
 */
export const eventDispatch = pgTable('event_dispatch', {
  eventId: text('event_id').primaryKey().references(() => events.id, { onDelete: 'cascade' }),
})

/**
 * Events queued for the webhook lane: those whose workspace had an enabled endpoint subscribed to their kind
 * when they were written (the same trigger, migration 0066). The delivery loop takes them and inserts their
 * deliveries (modules/webhooks/queue.ts `takeWebhookEvents`), apart from the other subscribers' fan-out.
 */
export const webhookDispatch = pgTable('webhook_dispatch', {
  eventId: text('event_id').primaryKey().references(() => events.id, { onDelete: 'cascade' }),
})

export const DELIVERY_STATES = ['pending', 'failed', 'canceled'] as const

/**
 * One job per (endpoint, event) while it has work or a final failure to show: pending → failed | canceled,
 * and a successful attempt deletes it (the delivery log keeps every attempt; migration 0019).
 */
export const webhookDeliveries = pgTable('webhook_deliveries', {
  webhookId: text('webhook_id').notNull().references(() => webhooks.id, { onDelete: 'cascade' }),
  eventId: text('event_id').notNull().references(() => events.id, { onDelete: 'cascade' }),
  status: text('status', { enum: DELIVERY_STATES }).notNull().default('pending'),
  /** Attempts made so far; the next one is attempts + 1. */
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: at('next_attempt_at').notNull().defaultNow(),
  /** A manual retry is one attempt: on failure it does not restart the automatic schedule. */
  manual: boolean('manual').notNull().default(false),
  /** The claiming runner's advisory-lock key; the claim lapses when that lock is gone or leaseUntil passes. */
  leaseOwner: integer('lease_owner'),
  leaseUntil: at('lease_until'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [
  primaryKey({ columns: [table.webhookId, table.eventId] }),
  index('webhook_deliveries_due_idx').on(table.nextAttemptAt).where(sql`status = 'pending'`),
  index('webhook_deliveries_event_idx').on(table.eventId),
])

/** Every attempt, successful or not (docs/api.md#webhooks). */
export const webhookDeliveryLogs = pgTable('webhook_delivery_logs', {
  id: id(),
  webhookId: text('webhook_id').notNull().references(() => webhooks.id, { onDelete: 'cascade' }),
  eventId: text('event_id').notNull(),
  eventType: text('event_type').notNull(),
  attempt: integer('attempt').notNull(),
  success: boolean('success').notNull(),
  responseStatus: integer('response_status'),
  /** The first 4 KiB of the answer. */
  responseBody: text('response_body'),
  error: text('error'),
  durationMs: integer('duration_ms').notNull(),
  /** Which server process sent it (`host/pid`), for operators; not part of the API. */
  sentBy: text('sent_by'),
  createdAt: createdAt(),
}, (table) => [index('webhook_delivery_logs_webhook_created_idx').on(table.webhookId, table.createdAt)])
