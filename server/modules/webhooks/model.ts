import { t } from 'elysia'
import { OffsetQuery } from '../../lib/paging-schema.ts'
import type { webhookDeliveryLogs, webhooks } from '../../db/schema/index.ts'
import { EventKind, EventKinds } from '../../events/model.ts'
import type { EventType } from '../../events/outbox.ts'
import { Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'

/** The example of the `Webhook` component, reused by the schemas that embed it. */
export const webhookExample = {
  id: 'wh_0mi9x2k3aq1b2c3d4e5f6g7h8', url: 'https://hooks.acme.example/chorus', events: ['post.created' as const, 'status.changed' as const], description: 'CRM sync',
  enabled: true, disabled_reason: null, created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-23T14:05:12.345Z',
}

const WebhookUrl = t.String({ minLength: 1, maxLength: 2048, description: 'An http(s) URL. Refused when its host resolves to a loopback, private, link-local or metadata address (unless WEBHOOK_ALLOW_PRIVATE).', examples: ['https://example.com/chorus-hook'] })
const Description = t.Nullable(t.String({ maxLength: 500 }))

export const WebhookCreate = t.Object({
  url: WebhookUrl,
  events: EventKinds,
  description: t.Optional(Description),
}, { additionalProperties: false, $id: 'WebhookCreate', examples: [{ url: 'https://hooks.acme.example/chorus', events: ['post.created', 'status.changed'], description: 'CRM sync' }] })

export const WebhookUpdate = t.Object({
  url: t.Optional(WebhookUrl),
  events: t.Optional(EventKinds),
  description: t.Optional(Description),
  enabled: t.Optional(t.Boolean({ description: 'false stops deliveries and cancels pending ones; true resumes with new events' })),
}, { additionalProperties: false, minProperties: 1, $id: 'WebhookUpdate', examples: [{ enabled: false }] })

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

export const WebhookResponse = t.Object(webhookFields, { $id: 'Webhook', examples: [webhookExample] })
export const WebhookCreateResponse = t.Object({ ...webhookFields, secret: Secret }, { $id: 'WebhookCreated', examples: [{ ...webhookExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }] })
export const WebhookRotateResponse = t.Object({
  ...webhookFields,
  secret: Secret,
  previous_secret_expires_at: Timestamp,
}, { $id: 'WebhookSecretRotated', examples: [{ ...webhookExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', previous_secret_expires_at: '2026-11-23T14:05:12.345Z' }] })

export const WebhookParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, webhook_id: t.String({ maxLength: 64, examples: ['wh_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })
export const LogParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, log_id: t.String({ maxLength: 64, examples: ['dlv_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

export const LogListQuery = t.Object({
  ...OffsetQuery,
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
  response_body: t.Nullable(t.String({ description: 'The first 4 KiB of the answer, decoded as UTF-8 (invalid bytes become U+FFFD, NUL characters are dropped)' })),
  error: t.Nullable(t.String()),
  duration_ms: t.Integer(),
  created_at: Timestamp,
}, { $id: 'WebhookDeliveryLog', examples: [{ id: 'dlv_0mi9x2k3aq1b2c3d4e5f6g7h8', webhook_id: 'wh_0mi9x2k3aq1b2c3d4e5f6g7h8', event_id: 'evt_0mi9x2k3aq1b2c3d4e5f6g7h8', event_type: 'post.created', attempt: 1, success: true, response_status: 200, response_body: 'ok', error: null, duration_ms: 84, created_at: '2026-11-22T09:30:00.000Z' }] })

export const WebhookRetryResponse = t.Object({
  status: t.Literal('queued'),
  log_id: t.String(),
  webhook_id: t.String(),
  event_id: t.String({ description: 'The re-sent event: the same `webhook-id` as before' }),
}, { $id: 'WebhookRetry', examples: [{ status: 'queued', log_id: 'dlv_0mi9x2k3aq1b2c3d4e5f6g7h8', webhook_id: 'wh_0mi9x2k3aq1b2c3d4e5f6g7h8', event_id: 'evt_0mi9x2k3aq1b2c3d4e5f6g7h8' }] })

type WebhookRow = typeof webhooks.$inferSelect

export const toWebhookResponse = (row: WebhookRow) => ({
  id: row.id,
  url: row.url,
  events: row.events as EventType[],
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

export const WebhookTestResponse = t.Object({
  status: t.Literal('queued'),
  webhook_id: t.String(),
  event_id: t.String({ description: 'The test event: the `webhook-id` of the delivery, and the `event_id` of its log rows' }),
}, { $id: 'WebhookTest', examples: [{ status: 'queued', webhook_id: 'wh_0mi9x2k3aq1b2c3d4e5f6g7h8', event_id: 'evt_0mi9x2k3aq1b2c3d4e5f6g7h8' }] })
