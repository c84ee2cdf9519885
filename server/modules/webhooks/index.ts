import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import {
  LogListQuery, LogParams, toLogResponse, toWebhookResponse, WebhookCreate, WebhookCreateResponse, WebhookDeliveryLogResponse,
  WebhookParams, WebhookResponse, WebhookRetryResponse, WebhookRotateResponse, WebhookTestResponse, WebhookUpdate,
} from './model.ts'
import * as hooks from './service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { readOffset } from '../../lib/paging.ts'

const tags = ['Webhooks']

export const webhooksModule = (ctx: AppContext) => {
  const deps: hooks.WebhookDeps = { db: ctx.db, outbound: ctx.outbound, secrets: ctx.secrets }
  return new Elysia({ prefix: '/workspaces/:workspace_slug/webhooks' })
    .use(authPlugin(ctx))
    .post('', async ({ workspace, body, set }) => {
      const { webhook, secret } = await hooks.createWebhook(deps, workspace.id, body)
      set.status = 201
      return { ...toWebhookResponse(webhook), secret }
    }, {
      params: WorkspaceSlugParams,
      body: WebhookCreate,
      workspace: { scope: 'webhooks:write', role: 'admin' },
      response: { 201: WebhookCreateResponse },
      detail: { operationId: 'createWebhook', tags, summary: 'Register an endpoint; the signing secret is returned once', description: 'Deliveries follow Standard Webhooks: `webhook-id` (the event id), `webhook-timestamp`, `webhook-signature`, plus `X-Chorus-Event`. Unknown event kinds are 422; so is a URL whose host resolves to a loopback, private, link-local or metadata address.' },
    })
    .get('', async ({ workspace }) => (await hooks.listWebhooks(ctx.db, workspace.id)).map(toWebhookResponse), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'webhooks:read', role: 'admin' },
      response: { 200: t.Array(WebhookResponse) },
      detail: { operationId: 'listWebhooks', tags, summary: "The workspace's endpoints, newest first", description: 'With an API key (`webhooks:read`) or an admin\'s dashboard session. The signing secret is never returned here.' },
    })
    .patch('/:webhook_id', async ({ workspace, params, body }) => toWebhookResponse(await hooks.updateWebhook(deps, workspace.id, params.webhook_id, body)), {
      params: WebhookParams,
      body: WebhookUpdate,
      workspace: { scope: 'webhooks:write', role: 'admin' },
      response: { 200: WebhookResponse },
      detail: { operationId: 'updateWebhook', tags, summary: 'Change the URL, event kinds, description, or turn the endpoint on or off', description: 'With an API key (`webhooks:write`) or an admin\'s dashboard session. A new URL is checked like at creation (http or https, no private addresses unless WEBHOOK_ALLOW_PRIVATE). Turning an endpoint back on clears `disabled_reason`.' },
    })
    .delete('/:webhook_id', async ({ workspace, params, set }) => {
      await hooks.deleteWebhook(ctx.db, workspace.id, params.webhook_id)
      set.status = 204
    }, {
      params: WebhookParams,
      workspace: { scope: 'webhooks:write', role: 'admin' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteWebhook', tags, summary: 'Delete an endpoint with its pending deliveries and logs', description: 'With an API key (`webhooks:write`) or an admin\'s dashboard session. Pending deliveries are dropped with the endpoint. An unknown id is 404 NOT_FOUND.' },
    })
    .post('/:webhook_id/rotate-secret', async ({ workspace, params }) => {
      const { webhook, secret, previousSecretExpiresAt } = await hooks.rotateSecret(deps, workspace.id, params.webhook_id)
      return { ...toWebhookResponse(webhook), secret, previous_secret_expires_at: previousSecretExpiresAt.toISOString() }
    }, {
      params: WebhookParams,
      workspace: { scope: 'webhooks:write', role: 'admin' },
      response: { 200: WebhookRotateResponse },
      detail: { operationId: 'rotateWebhookSecret', tags, summary: 'Replace the signing secret; the old one keeps signing for 24 hours', description: 'Until `previous_secret_expires_at`, `webhook-signature` carries two space-separated `v1,` entries, one per secret, so a receiver can switch at any moment.' },
    })
    .get('/:webhook_id/logs', async ({ workspace, params, query }) => (await hooks.listLogs(ctx.db, workspace.id, params.webhook_id, readOffset(query), query.success)).map(toLogResponse), {
      params: WebhookParams,
      query: LogListQuery,
      workspace: { scope: 'webhooks:read', role: 'admin' },
      response: { 200: t.Array(WebhookDeliveryLogResponse) },
      detail: { operationId: 'listWebhookLogs', tags, summary: 'Delivery attempts, newest first', description: 'One row per attempt. `limit` 1–100 (default 50), `offset` ≥ 0, `success` filters; out-of-range values are 422.' },
    })
    .post('/:webhook_id/test', async ({ workspace, params, set }) => {
      const queued = await hooks.sendTestEvent(ctx.db, workspace.id, params.webhook_id)
      set.status = 202
      return queued
    }, {
      params: WebhookParams,
      workspace: { scope: 'webhooks:write', role: 'admin' },
      response: { 202: WebhookTestResponse },
      detail: { operationId: 'sendWebhookTestEvent', tags, summary: 'Send a test event to one endpoint', description: 'Queues a `webhook.test` event (`data: {webhook_id, message}`) for this endpoint only, whatever event kinds it takes: signed and logged like any delivery, a single attempt (retry it from the log). 409 when the endpoint is disabled; 404 for an unknown id.' },
    })
    .post('/logs/:log_id/retry', async ({ workspace, params, set }) => {
      const queued = await hooks.retryLog(ctx.db, workspace.id, params.log_id)
      set.status = 202
      return queued
    }, {
      params: LogParams,
      workspace: { scope: 'webhooks:write', role: 'admin' },
      response: { 202: WebhookRetryResponse },
      detail: { operationId: 'retryWebhookDelivery', tags, summary: 'Send a logged delivery again (replay)', description: 'Queues the same event for the same endpoint now, with the same `webhook-id`. A manual retry is a single attempt, numbered on from the last logged attempt of the event. 409 when the endpoint is disabled.' },
    })
}
