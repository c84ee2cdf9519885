import { t } from 'elysia'
import type { notificationEvents, notificationSubscriptions } from '../../db/schema/index.ts'
import { Enum } from '../../lib/schema.ts'
import { Timestamp } from '../user/model.ts'
import { EventKinds } from '../webhooks/model.ts'
import { WorkspaceSlugParams } from '../workspaces/model.ts'

const Channel = Enum(['email', 'in_app'])
const slug = WorkspaceSlugParams.properties.workspace_slug

export const SubscriptionCreate = t.Object({ events: EventKinds, channel: Channel }, { additionalProperties: false, description: 'SubscriptionCreate' })
export const SubscriptionToggle = t.Object({ enabled: t.Boolean() }, { additionalProperties: false, description: 'SubscriptionToggle' })
export const SubscriptionParams = t.Object({ workspace_slug: slug, subscription_id: t.String({ maxLength: 64 }) })

export const SubscriptionResponse = t.Object({
  id: t.String(),
  user_id: t.String({ description: 'The member this subscription belongs to' }),
  events: t.Array(t.String()),
  channel: Channel,
  enabled: t.Boolean(),
  created_at: Timestamp,
}, { description: 'SubscriptionResponse' })

export const NotificationEventQuery = t.Object({
  page: t.Optional(t.Integer({ minimum: 1, description: 'Page number, from 1 (default 1)' })),
  page_size: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1–100 (default 50)' })),
}, { additionalProperties: false })

export const NotificationEventResponse = t.Object({
  id: t.String(),
  user_id: t.String(),
  event_id: t.String(),
  event_type: t.String(),
  channel: Channel,
  subject: t.String({ description: 'One line describing the event' }),
  data: t.Record(t.String(), t.Any(), { description: 'The outbox event data (as in the webhook body)' }),
  email_status: t.Nullable(Enum(['pending', 'sent', 'failed'], { description: 'null for in_app' })),
  sent_at: t.Nullable(Timestamp),
  created_at: Timestamp,
}, { description: 'NotificationEventResponse' })

export const NotificationEventListResponse = t.Object({
  items: t.Array(NotificationEventResponse),
  page: t.Integer(),
  page_size: t.Integer(),
  total: t.Integer(),
  total_pages: t.Integer(),
}, { description: 'NotificationEventListResponse' })

export const toSubscriptionResponse = (row: typeof notificationSubscriptions.$inferSelect) => ({
  id: row.id,
  user_id: row.userId,
  events: row.events,
  channel: row.channel,
  enabled: row.enabled,
  created_at: row.createdAt.toISOString(),
})

export const toNotificationEventResponse = (row: typeof notificationEvents.$inferSelect) => ({
  id: row.id,
  user_id: row.userId,
  event_id: row.eventId,
  event_type: row.eventType,
  channel: row.channel,
  subject: row.subject,
  data: row.data,
  email_status: row.emailStatus,
  sent_at: row.sentAt?.toISOString() ?? null,
  created_at: row.createdAt.toISOString(),
})
