import { html } from '../../../lib/html.ts'
import { EVENT_TYPES } from '../../../events/outbox.ts'
import type { webhookDeliveryLogs, webhooks } from '../../../db/schema/index.ts'
import { confirmBox, csrfInput, secretBox, settingsPath } from './kit.ts'

// The Webhooks page (endpoints, the signing secret shown once, the add form) and one endpoint's delivery log.

type Webhook = typeof webhooks.$inferSelect
type Log = typeof webhookDeliveryLogs.$inferSelect

export interface WebhooksView {
  slug: string
  csrf: string
  webhooks: Webhook[]
  secret?: { url: string; value: string; overlapUntil?: Date }
  typed?: { url: string; description: string; events: string[] }
  invalidUrl?: boolean
}

const at = (date: Date) => html`<time datetime="${date.toISOString()}">${date.toISOString().slice(0, 19).replace('T', ' ')} UTC</time>`

export function webhooksView(view: WebhooksView) {
  const base = settingsPath(view.slug, 'webhooks')
  const typed = view.typed ?? { url: '', description: '', events: ['post.created'] }
  const endpoint = (hook: Webhook) => html`<li class="card"><h3>${hook.url}</h3>
<p>${hook.description ?? ''} Events: ${hook.events.join(', ')}. ${hook.enabled ? 'Enabled.' : html`<strong>Disabled</strong>${hook.disabledReason ? `: ${hook.disabledReason}` : ''}.`}</p>
<p><a href="${base}/${hook.id}">Delivery log of ${hook.url}</a></p>
<form method="post" action="${base}/${hook.id}/test" class="inline">${csrfInput(view.csrf)}<button class="btn" type="submit"${hook.enabled ? '' : html` disabled`}>Send test event</button></form>
<form method="post" action="${base}/${hook.id}/enabled" class="inline">${csrfInput(view.csrf)}<input type="hidden" name="enabled" value="${hook.enabled ? 'false' : 'true'}"><button class="btn plain" type="submit">${hook.enabled ? 'Disable' : 'Enable'}</button></form>
<form method="post" action="${base}/${hook.id}/rotate">${csrfInput(view.csrf)}<p>${confirmBox(`Yes, replace the signing secret of ${hook.url}; the old one keeps signing for 24 hours`)}</p><button class="btn plain" type="submit">Rotate secret</button></form>
<form method="post" action="${base}/${hook.id}/delete">${csrfInput(view.csrf)}<p>${confirmBox(`Yes, delete ${hook.url} with its pending deliveries and its log`)}</p><button class="btn plain" type="submit">Delete endpoint</button></form></li>`

  return html`<h1>Webhooks</h1>
<p>Chorus POSTs each event to your endpoints, signed the Standard Webhooks way (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>); failures are retried for about 33 hours.</p>
${view.secret ? secretBox('new-secret', `Signing secret of ${view.secret.url}`, view.secret.value, view.secret.overlapUntil
    ? `The previous secret keeps signing (a second signature) until ${view.secret.overlapUntil.toISOString().slice(0, 16).replace('T', ' ')} UTC, so switch your receiver before then. This is the only time the new secret is shown.`
    : 'This is the only time it is shown. Your receiver verifies each delivery with it.') : ''}
${view.webhooks.length ? html`<ul class="cards">${view.webhooks.map(endpoint)}</ul>` : html`<p>No endpoints yet.</p>`}
<h2>Add an endpoint</h2>
<form method="post" action="${base}">${csrfInput(view.csrf)}
<p><label for="hook-url">URL (http or https; private and loopback addresses are refused)</label><input id="hook-url" name="url" type="url" required maxlength="2048" value="${typed.url}"${view.invalidUrl ? html` aria-invalid="true" aria-describedby="form-error"` : ''}></p>
<p><label for="hook-description">Description (optional)</label><input id="hook-description" name="description" maxlength="500" value="${typed.description}"></p>
<fieldset><legend>Events to send</legend>${EVENT_TYPES.map((type) => html`<label><input type="checkbox" name="events" value="${type}"${typed.events.includes(type) ? html` checked` : ''}> <code>${type}</code></label> `)}</fieldset>
<p><button class="btn" type="submit">Add endpoint</button></p></form>`
}

export interface LogView { slug: string; csrf: string; webhook: Webhook; logs: Log[]; success?: boolean }

export function deliveryLogView(view: LogView) {
  const base = settingsPath(view.slug, 'webhooks')
  const here = `${base}/${view.webhook.id}`
  const filter = (value: string, label: string, current: boolean) => html`<a href="${value ? `${here}?success=${value}` : here}"${current ? html` aria-current="page"` : ''}>${label}</a>`
  const row = (log: Log) => html`<tr><td>${at(log.createdAt)}</td><td><code>${log.eventType}</code></td><td>${log.attempt}</td>
<td>${log.success ? 'Delivered' : html`<strong>Failed</strong>`}</td><td>${log.responseStatus ?? '-'}</td><td>${log.durationMs} ms</td>
<td>${log.error ? html`<p>${log.error}</p>` : ''}${log.responseBody ? html`<pre class="excerpt">${log.responseBody.slice(0, 300)}${log.responseBody.length > 300 ? '…' : ''}</pre>` : ''}</td>
<td><form method="post" action="${base}/logs/${log.id}/retry">${csrfInput(view.csrf)}<button class="btn plain" type="submit" aria-label="Retry ${log.eventType} attempt ${log.attempt}">Retry</button></form></td></tr>`
  return html`<p><a href="${base}">Back to the webhooks</a></p>
<h1>Delivery log</h1>
<p>Endpoint: <code>${view.webhook.url}</code> (${view.webhook.enabled ? 'enabled' : 'disabled'}). Newest first; each row is one attempt.</p>
<form method="post" action="${here}/test" class="inline">${csrfInput(view.csrf)}<button class="btn" type="submit"${view.webhook.enabled ? '' : html` disabled`}>Send test event</button></form>
<a class="btn plain" href="${view.success === undefined ? here : `${here}?success=${view.success}`}">Refresh</a>
<nav aria-label="Filter the log"><ul><li>${filter('', 'All attempts', view.success === undefined)}</li><li>${filter('true', 'Delivered', view.success === true)}</li><li>${filter('false', 'Failed', view.success === false)}</li></ul></nav>
${view.logs.length ? html`<table><caption>Attempts</caption><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Result</th><th scope="col">Status</th><th scope="col">Response time</th><th scope="col">Response</th><th scope="col">Retry</th></tr></thead>
<tbody>${view.logs.map(row)}</tbody></table>` : html`<p>No attempts${view.success === undefined ? ' yet' : ' match'}. Deliveries take a moment: refresh.</p>`}`
}
