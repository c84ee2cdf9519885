import { t } from 'elysia'
import type { webhookDeliveryLogs, webhooks } from '../../db/schema/index.ts'
import { Enum } from '../../lib/schema.ts'
import { EVENT_TYPES } from '../events/service.ts'
import { Timestamp } from '../user/model.ts'
import { WorkspaceSlugParams } from '../workspaces/model.ts'

const EventKind = Enum([...EVENT_TYPES])
export const EventKinds = t.Array(EventKind, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, description: 'Event kinds to receive' })
const WebhookUrl = t.String({ minLength: 1, maxLength: 2048, description: 'An http(s) URL. Refused when its host resolves to a loopback, private, link-local or metadata address (unless WEBHOOK_ALLOW_PRIVATE).', examples: ['https://example.com/chorus-hook'] })
const Description = t.Nullable(t.String({ maxLength: 500 }))

export const WebhookCreate = t.Object({
  url: WebhookUrl,
  events: EventKinds,
  description: t.Optional(Description),
}, { additionalProperties: false, description: 'WebhookCreate' })

export const WebhookUpdate = t.Object({
  url: t.Optional(WebhookUrl),
  events: t.Optional(EventKinds),
  description: t.Optional(Description),
  enabled: t.Optional(t.Boolean({ description: 'false stops deliveries and cancels pending ones; true resumes with new events' })),
}, { additionalProperties: false, minProperties: 1, description: 'WebhookUpdate' })

const webhookFields = {
  id: t.String(),
  url: t.String(),
  events: t.Array(EventKind),
  description: t.Nullable(t.String()),
  enabled: t.Boolean(),
  disabled_reason: t.Nullable(t.String({ description: 'Why the service turned the endpoint off, e.g. after a 410 answer' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}
const Secret = t.String({ description: '`whsec_` + base64 of 32 bytes (Standard Webhooks). Shown only here.' })

export const WebhookResponse = t.Object(webhookFields, { description: 'WebhookResponse' })
export const WebhookCreateResponse = t.Object({ ...webhookFields, secret: Secret }, { description: 'WebhookCreateResponse' })
export const WebhookRotateResponse = t.Object({
  ...webhookFields,
  secret: Secret,
  previous_secret_expires_at: Timestamp,
}, { description: 'WebhookRotateResponse' })

export const WebhookParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, webhook_id: t.String({ maxLength: 64 }) })
export const LogParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, log_id: t.String({ maxLength: 64 }) })

export const LogListQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, description: '1–100 (default 50)' })),
  offset: t.Optional(t.Integer({ minimum: 0, description: 'Rows to skip (default 0)' })),
  success: t.Optional(t.Boolean({ description: 'Only successful (true) or failed (false) attempts' })),
}, { additionalProperties: false })

export const WebhookDeliveryLogResponse = t.Object({
  id: t.String(),
  webhook_id: t.String(),
  event_id: t.String({ description: 'Also the `webhook-id` header of the delivery' }),
  event_type: t.String(),
  attempt: t.Integer({ description: '1 for the first attempt' }),
  success: t.Boolean(),
  response_status: t.Nullable(t.Integer()),
  response_body: t.Nullable(t.String({ description: 'The first 4 KiB' })),
  error: t.Nullable(t.String()),
  duration_ms: t.Integer(),
  created_at: Timestamp,
}, { description: 'WebhookDeliveryLogResponse' })

export const WebhookRetryResponse = t.Object({
  status: t.Literal('queued'),
  log_id: t.String(),
  webhook_id: t.String(),
  event_id: t.String({ description: 'The re-sent event: the same `webhook-id` as before' }),
}, { description: 'WebhookRetryResponse' })

type WebhookRow = typeof webhooks.$inferSelect

export const toWebhookResponse = (row: WebhookRow) => ({
  id: row.id,
  url: row.url,
  events: row.events as (typeof EVENT_TYPES)[number][],
  description: row.description,
  enabled: row.enabled,
  disabled_reason: row.disabledReason,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

export const toLogResponse = (row: typeof webhookDeliveryLogs.$inferSelect) => ({
  id: row.id,
  webhook_id: row.webhookId,
  event_id: row.eventId,
  event_type: row.eventType,
  attempt: row.attempt,
  success: row.success,
  response_status: row.responseStatus,
  response_body: row.responseBody,
  error: row.error,
  duration_ms: row.durationMs,
  created_at: row.createdAt.toISOString(),
})
