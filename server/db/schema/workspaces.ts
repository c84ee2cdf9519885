import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from './accounts.ts'
import { at, createdAt, id } from './columns.ts'

export const PLANS = ['free', 'startup', 'scale', 'business'] as const
export const SUBSCRIPTION_STATUSES = ['active', 'trialing', 'past_due', 'canceled', 'unpaid', 'incomplete', 'none'] as const
export const ROLES = ['member', 'admin', 'owner'] as const

export type Plan = (typeof PLANS)[number]
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number]
export type Role = (typeof ROLES)[number]

export const workspaces = pgTable('workspaces', {
  id: id(),
  slug: text('slug').notNull(),
  name: text('name').notNull(),
  logoFileId: text('logo_file_id'),
  faviconFileId: text('favicon_file_id'),
  settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
  /** The workspace's custom scoring formula compiled to SQL when it reads `demand.*` (migration 0053), else null. */
  scoreSql: text('score_sql'),
  plan: text('plan', { enum: PLANS }).notNull().default('startup'),
  subscriptionStatus: text('subscription_status', { enum: SUBSCRIPTION_STATUSES }).notNull().default('trialing'),
  comped: boolean('comped').notNull().default(false),
  pastDueSince: at('past_due_since'),
  currentPeriodEnd: at('current_period_end'),
  billingCustomerId: text('billing_customer_id'),
  billingSubscriptionId: text('billing_subscription_id'),
  /** The local part of the workspace's intake address; the column default generates it (migration 0012). */
  emailIntakeToken: text('email_intake_token').notNull().default(sql`replace(gen_random_uuid()::text, '-', '')`),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [
  uniqueIndex('workspaces_slug_key').on(table.slug),
  index('workspaces_billing_customer_idx').on(table.billingCustomerId),
  uniqueIndex('workspaces_email_intake_token_key').on(table.emailIntakeToken),
])

export const members = pgTable('members', {
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ROLES }).notNull(),
  status: text('status', { enum: ['pending', 'active'] }).notNull(),
  invitedBy: text('invited_by').references(() => users.id, { onDelete: 'set null' }),
  invitedAt: at('invited_at'),
  joinedAt: at('joined_at'),
}, (table) => [primaryKey({ columns: [table.workspaceId, table.userId] }), index('members_user_idx').on(table.userId)])

export const apiKeys = pgTable('api_keys', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  /** `chorus_sk_` plus the first 4 characters of the random part, for recognising a key in lists. */
  start: text('start').notNull(),
  keyHash: text('key_hash').notNull(),
  scopes: jsonb('scopes').$type<string[]>().notNull(),
  createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  lastUsedAt: at('last_used_at'),
  revokedAt: at('revoked_at'),
}, (table) => [uniqueIndex('api_keys_hash_key').on(table.keyHash), index('api_keys_workspace_idx').on(table.workspaceId)])

/** POST responses kept for 24 h per (scope, Idempotency-Key), so a retried request replays instead of repeating. */
export const idempotencyKeys = pgTable('idempotency_keys', {
  scope: text('scope').notNull(),
  key: text('key').notNull(),
  requestHash: text('request_hash').notNull(),
  responseStatus: integer('response_status'),
  responseBody: jsonb('response_body'),
  createdAt: createdAt(),
  completedAt: at('completed_at'),
  /** Who holds the key now: set by each claim and take-over; only the holder's transactions may commit. */
  holder: text('holder'),
  /** Set in the transaction that committed the request's effect: a retry then never runs it again. */
  effectCommittedAt: at('effect_committed_at'),
}, (table) => [primaryKey({ columns: [table.scope, table.key] })])

/** Billing-provider events already applied, so a redelivered event is a no-op. */
export const billingEvents = pgTable('billing_events', {
  id: text('id').primaryKey(),
  type: text('type').notNull(),
  receivedAt: createdAt(),
})
