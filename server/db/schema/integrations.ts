import { sql } from 'drizzle-orm'
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from './accounts.ts'
import { at, createdAt, id } from './columns.ts'
import { boards, events } from './feedback.ts'
import { workspaces } from './workspaces.ts'

export const INTEGRATION_PROVIDERS = ['chat', 'tracker'] as const
export type IntegrationProvider = (typeof INTEGRATION_PROVIDERS)[number]

/** One connection per workspace and provider. Tokens are sealed (server/modules/integrations/tokens.ts). */
export const integrations = pgTable('integrations', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  provider: text('provider', { enum: INTEGRATION_PROVIDERS }).notNull(),
  /** `error`: the provider refused the token (revoked, account inactive); nothing is sent until reconnected. */
  status: text('status', { enum: ['active', 'error'] }).notNull().default('active'),
  statusReason: text('status_reason'),
  /** The provider's id and name of the connected team or organization. */
  externalId: text('external_id'),
  externalName: text('external_name'),
  scopes: text('scopes'),
  accessToken: text('access_token').notNull(),
  refreshToken: text('refresh_token'),
  /** When the access token expires; null for tokens that do not. */
  expiresAt: at('expires_at'),
  connectedByUserId: text('connected_by_user_id').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [uniqueIndex('integrations_workspace_provider_key').on(table.workspaceId, table.provider)])

/** Which events of which board (null: every board) go to which chat channel. */
export const chatChannelMappings = pgTable('chat_channel_mappings', {
  id: id(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  integrationId: text('integration_id').notNull().references(() => integrations.id, { onDelete: 'cascade' }),
  channelId: text('channel_id').notNull(),
  boardId: text('board_id').references(() => boards.id, { onDelete: 'cascade' }),
  events: jsonb('events').$type<string[]>().notNull(),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [index('chat_channel_mappings_workspace_idx').on(table.workspaceId)])

/** One job per (mapping, event), leased and retried exactly like webhook deliveries. */
export const chatDeliveries = pgTable('chat_deliveries', {
  mappingId: text('mapping_id').notNull().references(() => chatChannelMappings.id, { onDelete: 'cascade' }),
  eventId: text('event_id').notNull().references(() => events.id, { onDelete: 'cascade' }),
  status: text('status', { enum: ['pending', 'done', 'failed', 'canceled'] }).notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: at('next_attempt_at').notNull().defaultNow(),
  leaseOwner: integer('lease_owner'),
  leaseUntil: at('lease_until'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
}, (table) => [
  primaryKey({ columns: [table.mappingId, table.eventId] }),
  index('chat_deliveries_due_idx').on(table.nextAttemptAt).where(sql`status = 'pending'`),
])

/** Every chat delivery attempt. */
export const chatDeliveryLogs = pgTable('chat_delivery_logs', {
  id: id(),
  mappingId: text('mapping_id').notNull().references(() => chatChannelMappings.id, { onDelete: 'cascade' }),
  eventId: text('event_id').notNull(),
  eventType: text('event_type').notNull(),
  attempt: integer('attempt').notNull(),
  success: boolean('success').notNull(),
  error: text('error'),
  durationMs: integer('duration_ms').notNull(),
  sentBy: text('sent_by'),
  createdAt: createdAt(),
}, (table) => [index('chat_delivery_logs_mapping_created_idx').on(table.mappingId, table.createdAt)])

/** Delivery ids of inbound tracker webhooks already acted on: a replay of one is refused. */
export const trackerWebhookDeliveries = pgTable('tracker_webhook_deliveries', {
  deliveryId: text('delivery_id').primaryKey(),
  receivedAt: at('received_at').notNull().defaultNow(),
})
