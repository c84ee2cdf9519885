import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from './accounts.ts'
import { at, createdAt, id } from './columns.ts'
import { workspaces } from './workspaces.ts'

export const NOTIFICATION_CHANNELS = ['email', 'in_app'] as const
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number]
/** `instant`: each event as it happens; `daily`: one e-mail a day gathering them (e-mail only). */
export const NOTIFICATION_DELIVERIES = ['instant', 'daily'] as const
export type NotificationDelivery = (typeof NOTIFICATION_DELIVERIES)[number]

const workspaceId = () => text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' })
const userId = () => text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' })

/** A member's choice of event kinds on one channel; one per member, channel and delivery. */
export const notificationSubscriptions = pgTable('notification_subscriptions', {
  id: id(),
  workspaceId: workspaceId(),
  userId: userId(),
  events: jsonb('events').$type<string[]>().notNull(),
  channel: text('channel', { enum: NOTIFICATION_CHANNELS }).notNull(),
  enabled: boolean('enabled').notNull().default(true),
  delivery: text('delivery', { enum: NOTIFICATION_DELIVERIES }).notNull().default('instant'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [uniqueIndex('notification_subscriptions_member_channel_key').on(table.workspaceId, table.userId, table.channel, table.delivery)])

export const EMAIL_STATES = ['pending', 'sent', 'failed'] as const

/** An outbox event as one member is told of it; e-mail ones carry their sending state. */
export const notificationEvents = pgTable('notification_events', {
  id: id(),
  workspaceId: workspaceId(),
  userId: userId(),
  subscriptionId: text('subscription_id').references(() => notificationSubscriptions.id, { onDelete: 'set null' }),
  eventId: text('event_id').notNull(),
  eventType: text('event_type').notNull(),
  channel: text('channel', { enum: NOTIFICATION_CHANNELS }).notNull(),
  subject: text('subject').notNull(),
  data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  /** Null for in-app notifications. */
  emailStatus: text('email_status', { enum: EMAIL_STATES }),
  /** Part of a daily digest: waits (its lease is its "not before") and goes out with the member's others. */
  digest: boolean('digest').notNull().default(false),
  /** When the digest it belongs to goes out; set by the mailer when it first sees the row. */
  digestAt: at('digest_at'),
  emailAttempts: integer('email_attempts').notNull().default(0),
  /** A sender's claim on the e-mail (or the earliest next try after a failure). */
  emailLeaseUntil: at('email_lease_until'),
  sentAt: at('sent_at'),
  createdAt: createdAt(),
}, (table) => [
  uniqueIndex('notification_events_member_event_key').on(table.userId, table.eventId, table.channel, table.digest),
  index('notification_events_workspace_created_idx').on(table.workspaceId, table.createdAt),
  // Daily-digest rows not yet scheduled for their hour (modules/notifications/digest.ts scheduleDigests).
  index('notification_events_digest_unscheduled_idx').on(table.createdAt).where(sql`email_status = 'pending' AND digest AND digest_at IS NULL`),
  // The sender's queue: only unsent e-mails, by due time (the lease, else creation), so a claim walks the due
  // rows in the order it takes them and stops at its limit, never reading a digest row waiting for its hour
  // (server/db/leased-queue.ts duePending; migration 0063).
  index('notification_events_email_due_at_idx').on(sql`(coalesce(${table.emailLeaseUntil}, ${table.createdAt}))`).where(sql`email_status = 'pending'`),
])

export const DOMAIN_STATES = ['pending', 'verified'] as const

/** A workspace's own sending domain (Business tier): notification e-mail goes out from it, DKIM-signed. */
export const sendingDomains = pgTable('sending_domains', {
  workspaceId: text('workspace_id').primaryKey().references(() => workspaces.id, { onDelete: 'cascade' }),
  domain: text('domain').notNull(),
  status: text('status', { enum: DOMAIN_STATES }).notNull().default('pending'),
  dkimSelector: text('dkim_selector').notNull(),
  /** Base64 SubjectPublicKeyInfo, as published in the DKIM TXT record. */
  dkimPublicKey: text('dkim_public_key').notNull(),
  /** PKCS#8 PEM, sealed with a key derived from SECRET_KEY. */
  dkimPrivateKey: text('dkim_private_key').notNull(),
  verifiedAt: at('verified_at'),
  lastCheckedAt: at('last_checked_at'),
  createdAt: createdAt(),
}, (table) => [uniqueIndex('sending_domains_domain_key').on(table.domain)])
