import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { ApiError } from '../../../errors.ts'
import { EVENT_TYPES } from '../../../events/outbox.ts'
import * as hooks from '../../webhooks/service.ts'
import { seeOther, type WorkspaceViewer } from '../context.ts'
import { dashboardGuards, list, requireRole, text, withNotice, type Form } from '../guard.ts'
import { hidden, isFormError, messageOf, noticeOf, requireConfirmation, settingsPage, settingsPath, urlencoded, type Rendered } from './kit.ts'
import { deliveryLogView, webhooksView, type WebhooksView } from './webhooks-view.ts'

// Webhooks (issue 35, page 4) over the webhooks service; admin only, as every webhook route. The secret
// is in the answer to the form that made it and nowhere else; "Send test event" and "Retry" queue real,
// signed deliveries that the background worker sends and logs.

const KNOWN = new Set<string>(EVENT_TYPES)

export const webhooksSettings = (ctx: AppContext) => {
  const { inWorkspace } = dashboardGuards(ctx)
  const deps: hooks.WebhookDeps = { db: ctx.db, outbound: ctx.outbound, secrets: ctx.secrets }
  const path = (viewer: WorkspaceViewer) => settingsPath(viewer.workspace.slug, 'webhooks')

  async function render(viewer: WorkspaceViewer, rendered: Rendered & Pick<WebhooksView, 'secret' | 'typed' | 'invalidUrl'> = {}) {
    const rows = await hooks.listWebhooks(ctx.db, viewer.workspace.id)
    return settingsPage(viewer, 'Webhooks', webhooksView({ slug: viewer.workspace.slug, csrf: viewer.csrf, webhooks: rows, ...rendered }), rendered)
  }
  /** An admin's form about one endpoint: back to the list (or the log) with a notice, or the page with the reason. */
  const act = (run: (viewer: WorkspaceViewer, webhookId: string, body: Form) => Promise<string | Response>, back: 'list' | 'log' = 'list') => inWorkspace(async (viewer, { params, body }) => {
    requireRole(viewer, 'admin')
    try {
      const done = await run(viewer, params.webhook_id!, body)
      if (done instanceof Response) return done
      return seeOther(withNotice(back === 'log' ? `${path(viewer)}/${params.webhook_id}` : path(viewer), done))
    } catch (error) {
      if (!isFormError(error)) throw error
      return render(viewer, { error: messageOf(error), status: error.status })
    }
  })

  return new Elysia({ name: 'dashboard-settings-webhooks' })
    .get('/dashboard/:workspace_slug/settings/webhooks', inWorkspace(async (viewer, { query }) => {
      requireRole(viewer, 'admin')
      return render(viewer, { notice: noticeOf(query) })
    }), hidden)
    .post('/dashboard/:workspace_slug/settings/webhooks', inWorkspace(async (viewer, { body }) => {
      requireRole(viewer, 'admin')
      const typed = { url: text(body.url).trim(), description: text(body.description).trim(), events: list(body.events) }
      try {
        if (!typed.url || typed.url.length > 2048) throw new ApiError('VALIDATION_ERROR', 'Enter the URL of your endpoint.')
        if (typed.events.length === 0) throw new ApiError('VALIDATION_ERROR', 'Tick at least one event.')
        if (typed.events.some((type) => !KNOWN.has(type))) throw new ApiError('VALIDATION_ERROR', 'Unknown event kind.')
        if (typed.description.length > 500) throw new ApiError('VALIDATION_ERROR', 'The description is at most 500 characters.')
        const { webhook, secret } = await hooks.createWebhook(deps, viewer.workspace.id, { url: typed.url, events: [...new Set(typed.events)], description: typed.description || null })
        return render(viewer, { secret: { url: webhook.url, value: secret }, notice: 'Endpoint added', status: 201 })
      } catch (error) {
        if (!isFormError(error)) throw error
        const onUrl = String(error.issues?.[0]?.loc.at(-1) ?? '') === 'url' || /URL/.test(messageOf(error))
        return render(viewer, { error: messageOf(error), status: error.status, typed, invalidUrl: onUrl })
      }
    }), urlencoded)
    .get('/dashboard/:workspace_slug/settings/webhooks/:webhook_id', inWorkspace(async (viewer, { params, query }) => {
      requireRole(viewer, 'admin')
      const webhook = await hooks.findWebhook(ctx.db, viewer.workspace.id, params.webhook_id!)
      const success = query.success === 'true' ? true : query.success === 'false' ? false : undefined
      const logs = await hooks.listLogs(ctx.db, viewer.workspace.id, webhook.id, { page: 1, perPage: 100, offset: 0 }, success)
      return settingsPage(viewer, 'Delivery log', deliveryLogView({ slug: viewer.workspace.slug, csrf: viewer.csrf, webhook, logs, success }), { notice: noticeOf(query) })
    }), hidden)
    .post('/dashboard/:workspace_slug/settings/webhooks/:webhook_id/test', act(async (viewer, webhookId) => {
      await hooks.sendTestEvent(ctx.db, viewer.workspace.id, webhookId)
      return 'Test event queued: it appears in the log once sent'
    }, 'log'), urlencoded)
    .post('/dashboard/:workspace_slug/settings/webhooks/:webhook_id/enabled', act(async (viewer, webhookId, body) => {
      const enabled = text(body.enabled) === 'true'
      await hooks.updateWebhook(deps, viewer.workspace.id, webhookId, { enabled })
      return enabled ? 'Endpoint enabled: new events are sent to it' : 'Endpoint disabled: pending deliveries were cancelled'
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/webhooks/:webhook_id/rotate', act(async (viewer, webhookId, body) => {
      requireConfirmation(body, 'rotate the signing secret')
      const { webhook, secret, previousSecretExpiresAt } = await hooks.rotateSecret(deps, viewer.workspace.id, webhookId)
      return render(viewer, { secret: { url: webhook.url, value: secret, overlapUntil: previousSecretExpiresAt }, notice: 'Secret rotated' })
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/webhooks/:webhook_id/delete', act(async (viewer, webhookId, body) => {
      requireConfirmation(body, 'delete the endpoint')
      await hooks.deleteWebhook(ctx.db, viewer.workspace.id, webhookId)
      return 'Endpoint deleted'
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/webhooks/logs/:log_id/retry', inWorkspace(async (viewer, { params }) => {
      requireRole(viewer, 'admin')
      try {
        const queued = await hooks.retryLog(ctx.db, viewer.workspace.id, params.log_id!)
        return seeOther(withNotice(`${path(viewer)}/${queued.webhook_id}`, 'Retry queued: the new attempt appears in the log once sent'))
      } catch (error) {
        if (!isFormError(error)) throw error
        return render(viewer, { error: messageOf(error), status: error.status })
      }
    }), urlencoded)
}
