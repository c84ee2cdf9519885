import type { Result, WebhookCreateParams, WebhookCreated, WebhookLogListParams, WebhookRetryResult, WebhookTestResult, WebhookUpdateParams } from '../api-types.js'
import type { RequestOptions, WithResponse } from '../core/request.js'
import { APIResource } from './resource.js'

/** Webhook endpoints of the key's workspace (`webhooks:read` / `webhooks:write`). */
export class Webhooks extends APIResource {
  async list(options?: RequestOptions): Promise<Result<'listWebhooks'>> {
    return this.client.call('listWebhooks', { ...options, path: { workspace_slug: await this.client.workspaceSlug() } })
  }

  /** The answer carries the signing `secret`, only this once. */
  async create(params: WebhookCreateParams, options?: RequestOptions): Promise<WithResponse<WebhookCreated>> {
    return this.client.call('createWebhook', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, body: params })
  }

  async update(webhookId: string, params: WebhookUpdateParams, options?: RequestOptions): Promise<Result<'updateWebhook'>> {
    const path = { workspace_slug: await this.client.workspaceSlug(), webhook_id: webhookId }
    return this.client.call('updateWebhook', { ...options, path, body: params })
  }

  async delete(webhookId: string, options?: RequestOptions): Promise<void> {
    await this.client.call('deleteWebhook', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), webhook_id: webhookId } })
  }

  /** Delivery attempts, newest first. */
  async logs(webhookId: string, query: WebhookLogListParams = {}, options?: RequestOptions): Promise<Result<'listWebhookLogs'>> {
    const path = { workspace_slug: await this.client.workspaceSlug(), webhook_id: webhookId }
    return this.client.call('listWebhookLogs', { ...options, path, query })
  }

  /** Queues another delivery of a logged attempt. */
  async retry(logId: string, options?: RequestOptions): Promise<WithResponse<WebhookRetryResult>> {
    return this.client.call('retryWebhookDelivery', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), log_id: logId } })
  }

  /** Sends a `webhook.test` event to this endpoint only (a single attempt, logged and retryable). */
  async sendTest(webhookId: string, options?: RequestOptions): Promise<WithResponse<WebhookTestResult>> {
    return this.client.call('sendWebhookTestEvent', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), webhook_id: webhookId } })
  }
}
