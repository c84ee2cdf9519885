import { t } from 'elysia'
import { PageSizeQuery, pageSizeEnvelope } from '../../lib/paging-schema.ts'
import type { notificationEvents, notificationSubscriptions } from '../../db/schema/index.ts'
import { Enum, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'
import { EventKinds } from '../../events/model.ts'

const Channel = Enum(['email', 'in_app'])
const Delivery = Enum(['instant', 'daily'], { description: '`instant`: an e-mail per event as it happens; `daily`: one e-mail a day (at `NOTIFY_DIGEST_HOUR` UTC) gathering them. `daily` is for the `email` channel only.' })
const slug = WorkspaceSlugParams.properties.workspace_slug

export const SubscriptionCreate = t.Object({ events: EventKinds, channel: Channel, delivery: t.Optional(Delivery) }, { additionalProperties: false, $id: 'NotificationSubscriptionCreate', examples: [{ events: ['post.created', 'status.changed'], channel: 'email', delivery: 'instant' }] })
export const SubscriptionToggle = t.Object({ enabled: t.Optional(t.Boolean()), delivery: t.Optional(Delivery) }, { additionalProperties: false, minProperties: 1, $id: 'NotificationSubscriptionToggle', examples: [{ enabled: false }, { delivery: 'daily' }] })
export const SubscriptionParams = t.Object({ workspace_slug: slug, subscription_id: t.String({ maxLength: 64, examples: ['nsub_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

export const SubscriptionResponse = t.Object({
  id: t.String(),
  user_id: t.String({ description: 'The member this subscription belongs to' }),
  events: t.Array(t.String()),
  channel: Channel,
  delivery: Delivery,
  enabled: t.Boolean(),
  created_at: Timestamp,
}, { $id: 'NotificationSubscription', examples: [{ id: 'nsub_0mi9x2k3aq1b2c3d4e5f6g7h8', user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', events: ['post.created', 'status.changed'], channel: 'email', delivery: 'instant', enabled: true, created_at: '2026-11-22T09:30:00.000Z' }] })

export const NotificationEventQuery = t.Object(PageSizeQuery, { additionalProperties: false })

export const NotificationEventResponse = t.Object({
  id: t.String(),
  user_id: t.String(),
  event_id: t.String(),
  event_type: t.String(),
  channel: Channel,
  subject: t.String({ description: 'One line describing the event' }),
  data: t.Record(t.String(), t.Any(), { description: 'The outbox event data (as in the webhook body)' }),
  email_status: t.Nullable(Enum(['pending', 'sent', 'failed'], { description: 'null for in_app' })),
  delivery: Delivery,
  sent_at: t.Nullable(Timestamp),
  created_at: Timestamp,
}, { $id: 'NotificationEvent', examples: [{ id: 'ntf_0mi9x2k3aq1b2c3d4e5f6g7h8', user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', event_id: 'evt_0mi9x2k3aq1b2c3d4e5f6g7h8', event_type: 'post.created', channel: 'email', subject: 'New post: Dark mode', data: { post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8' }, email_status: 'sent', delivery: 'instant', sent_at: '2026-11-23T14:05:12.345Z', created_at: '2026-11-22T09:30:00.000Z' }] })

export const NotificationEventListResponse = pageSizeEnvelope(NotificationEventResponse, 'NotificationEventPage', [{ items: [{ id: 'ntf_0mi9x2k3aq1b2c3d4e5f6g7h8', user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', event_id: 'evt_0mi9x2k3aq1b2c3d4e5f6g7h8', event_type: 'post.created', channel: 'in_app', subject: 'New post: Dark mode', data: { post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8' }, email_status: null, delivery: 'instant', sent_at: null, created_at: '2026-11-22T09:30:00.000Z' }], page: 1, page_size: 20, total: 1, total_pages: 1 }])

export const toSubscriptionResponse = (row: typeof notificationSubscriptions.$inferSelect) => ({
  id: row.id,
  user_id: row.userId,
  events: row.events,
  channel: row.channel,
  delivery: row.delivery,
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
  delivery: row.digest ? 'daily' as const : 'instant' as const,
  sent_at: row.sentAt?.toISOString() ?? null,
  created_at: row.createdAt.toISOString(),
})
