import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import type { IntegrationProvider } from '../../../db/schema/index.ts'
import { ApiError, invalid } from '../../../errors.ts'
import { EVENT_TYPES } from '../../../events/outbox.ts'
import { createDns } from '../../../lib/dns.ts'
import { html } from '../../../lib/html.ts'
import { cookieValue } from '../../../lib/http-headers.ts'
import { roleAllows } from '../../../plugins/auth.ts'
import { listBoards } from '../../boards/service.ts'
import { listChatChannels } from '../../integrations/chat-api.ts'
import { createMapping, deleteMapping, listMappings } from '../../integrations/mappings.ts'
import { ChatChannelMappingCreate } from '../../integrations/model.ts'
import { connect, disconnect, integrationDeps, listIntegrations, stateFor, withProvider } from '../../integrations/service.ts'
import { listTeams } from '../../integrations/tracker.ts'
import { CustomDomainRequest } from '../../sending-domain/model.ts'
import { createDomain, deleteDomain, getDomain, toDomainResponse, type DomainDeps } from '../../sending-domain/service.ts'
import { SubscriptionCreate } from '../../notifications/model.ts'
import { createSubscription, deleteSubscription, listNotificationEvents, listSubscriptions, updateSubscription } from '../../notifications/service.ts'
import { errorPage, seeOther, viewerOf, workspaceViewer, type WorkspaceViewer } from '../context.ts'
import { DASHBOARD } from '../pages.ts'
import { checkedBody, csrfField, formList, formText, hidden, messageOf, settingsPage, settingsPath, settingsRoutes, type Refusal } from './common.ts'

// Settings: integrations and notifications (issue 35, page 6). Connecting goes through the providers'
// OAuth install with the state GET /workspaces/{slug}/integrations mints (bound to this session, this
// workspace and the provider); the provider sends the browser back to one fixed callback per provider,
// which finds the workspace in a short-lived cookie set by "Connect" and finishes through the same
// `connect` service as POST …/integrations/{provider}/oauth. Everything else is the API's services.

const INSTALL_COOKIE = 'chorus_install'
const CALLBACK = (provider: IntegrationProvider) => `${DASHBOARD}/_/integrations/${provider}/callback`
const SCOPES: Record<IntegrationProvider, string> = { chat: 'chat:write,channels:read,channels:join,groups:read', tracker: 'read,write' }
const NAMES: Record<IntegrationProvider, string> = { chat: 'Chat', tracker: 'Issue tracker' }

/** A live call to the provider for the page: its answer, or the API's refusal as a sentence (never a failed page). */
async function live<T>(call: () => Promise<T>): Promise<{ value: T } | { problem: string }> {
  try {
    return { value: await call() }
  } catch (error) {
    if (error instanceof ApiError) return { problem: `${messageOf(error)}${typeof error.extra.detail === 'string' ? ` (${error.extra.detail})` : ''}` }
    throw error
  }
}

export const integrationsSettingsModule = (ctx: AppContext) => {
  const routes = settingsRoutes(ctx)
  const ready = integrationDeps(ctx)
  const domains: DomainDeps = { db: ctx.db, dns: createDns(ctx.config.dnsResolver), secrets: ctx.secrets, mailHost: new URL(ctx.config.baseUrl).hostname }
  // "Connect" answers with a redirect to the provider: the page's CSP must let its form go there.
  const authorizeOrigins = [new URL(ctx.config.chatAuthorizeUrl).origin, new URL(ctx.config.trackerAuthorizeUrl).origin]
  const redirectUri = (provider: IntegrationProvider) => `${ctx.config.baseUrl}${CALLBACK(provider)}`

  async function render(viewer: WorkspaceViewer, refusal: Refusal) {
    const ws = viewer.workspace
    const base = settingsPath(ws.slug, 'integrations')
    const csrf = csrfField(viewer.csrf)
    const admin = roleAllows(viewer.member.role, 'admin')
    const owner = roleAllows(viewer.member.role, 'owner')
    const audience = { workspaceId: ws.id, userId: viewer.session.user.id }
    const [rows, subscriptions, events] = await Promise.all([
      listIntegrations(ctx.db, ws.id), listSubscriptions(ctx.db, audience), listNotificationEvents(ctx.db, audience, { page: 1, perPage: 20, offset: 0 }),
    ])
    const chat = rows.find((row) => row.provider === 'chat')
    const tracker = rows.find((row) => row.provider === 'tracker')
    const status = (row: typeof chat) => (!row ? 'Not connected' : row.status === 'error' ? `Needs reconnecting: ${row.statusReason ?? 'the provider refused its token'}` : `Connected to ${row.externalName ?? row.externalId ?? 'the provider'}`)
    const connectForm = (provider: IntegrationProvider, row: typeof chat) => html`<form method="post" action="${base}/${provider}/install">${csrf}<p><button class="btn" type="submit">${row ? 'Reconnect' : 'Connect'} ${NAMES[provider].toLowerCase()}</button></p></form>
${row && html`<form method="post" action="${base}/${provider}/disconnect">${csrf}
<p><label><input type="checkbox" name="confirm" value="yes" required> Disconnect ${NAMES[provider].toLowerCase()}: its stored tokens${provider === 'chat' ? ', channel mappings and pending messages' : ''} are deleted${provider === 'tracker' ? '; posts keep their issue links' : ''}</label></p>
<p><button class="btn plain" type="submit">Disconnect ${NAMES[provider].toLowerCase()}</button></p></form>`}`

    let chatPart = html``
    let trackerPart = html``
    if (admin) {
      const deps = await ready
      const [channels, mappings, boards, teams] = await Promise.all([
        chat?.status === 'active' ? live(() => withProvider(deps, ws.id, 'chat', (token) => listChatChannels(deps.chat, token))) : null,
        listMappings(ctx.db, ws.id), listBoards(ctx.db, ws.id),
        tracker?.status === 'active' ? live(() => listTeams(deps, ws.id)) : null,
      ])
      const channelName = (id: string) => (channels && 'value' in channels ? channels.value.find((c) => c.id === id)?.name : undefined)
      chatPart = html`<section aria-labelledby="chat-h" class="card"><h3 id="chat-h">Chat</h3>
<p id="chat-status">${status(chat)}</p>${connectForm('chat', chat)}
${chat && html`<h4>Channel mappings</h4>
${mappings.length ? html`<ul>${mappings.map((m) => html`<li>#${channelName(m.channel_id) ?? m.channel_id} ← ${m.board_slug ? `board ${m.board_slug}` : 'every board'}: ${m.events.join(', ')}
<form method="post" action="${base}/chat/mappings/${m.id}/delete">${csrf}<button class="btn plain" type="submit">Remove mapping to #${channelName(m.channel_id) ?? m.channel_id}</button></form></li>`)}</ul>` : html`<p>No channel receives events yet.</p>`}
${channels && 'problem' in channels && html`<p class="alert">The channels could not be listed: ${channels.problem}</p>`}
${channels && 'value' in channels && html`<form method="post" action="${base}/chat/mappings">${csrf}
<p><label for="map-channel">Channel</label><select id="map-channel" name="channel_id">${channels.value.map((c) => html`<option value="${c.id}">#${c.name}${c.is_private ? ' (private)' : ''}</option>`)}</select></p>
<p><label for="map-board">Board</label><select id="map-board" name="board_slug"><option value="">Every board</option>${boards.map((b) => html`<option value="${b.slug}">${b.name}</option>`)}</select></p>
<fieldset><legend>Events to post</legend>${EVENT_TYPES.map((type) => html`<label><input type="checkbox" name="events" value="${type}"${type === 'post.created' ? html` checked` : ''}> ${type}</label> `)}</fieldset>
<p><button class="btn" type="submit">Add mapping</button></p></form>`}`}</section>`
      trackerPart = html`<section aria-labelledby="tracker-h" class="card"><h3 id="tracker-h">Issue tracker</h3>
<p id="tracker-status">${status(tracker)}</p>${connectForm('tracker', tracker)}
${teams && 'problem' in teams && html`<p class="alert">The teams could not be listed: ${teams.problem}</p>`}
${teams && 'value' in teams && html`<h4>Teams</h4><p>Choose the team when you file an issue from a post (its id goes in <code>team_id</code> of POST /posts/{id}/tracker-issue).</p>
<ul>${teams.value.map((team) => html`<li>${team.name} (${team.key}) <code>${team.id}</code></li>`)}</ul>`}</section>`
    }

    let domainPart = html``
    if (owner) {
      const domain = ws.plan === 'business' ? await live(() => getDomain(domains, ws)) : null
      domainPart = html`<section aria-labelledby="domain-h"><h3 id="domain-h">Custom sending domain</h3>
${ws.plan !== 'business' ? html`<p>Sending notification e-mail from your own domain needs the Business plan.</p>`
  : domain && 'value' in domain ? (() => {
    const d = toDomainResponse(domain.value.row, domains.mailHost, domain.value.found)
    return html`<p>${d.domain}: <strong>${d.status === 'verified' ? 'Verified' : 'Pending verification'}</strong>; mail goes out from ${d.from_address}${d.status === 'verified' ? '' : ' once verified'}.</p>
<table><caption>DNS records to add</caption><thead><tr><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Found</th></tr></thead>
<tbody>${d.records.map((r) => html`<tr><td>${r.type}</td><td><code>${r.name}</code></td><td><code>${r.value}</code></td><td>${r.verified ? 'Yes' : 'Not yet'}</td></tr>`)}</tbody></table>
<p><a href="${base}">Check again</a></p>
<form method="post" action="${base}/domain/delete">${csrf}<p><label><input type="checkbox" name="confirm" value="yes" required> Remove ${d.domain}: mail goes out from the default sender again</label></p><p><button class="btn plain" type="submit">Remove domain</button></p></form>`
  })()
  : html`<form method="post" action="${base}/domain">${csrf}<p><label for="domain">Domain</label><input id="domain" name="domain" required maxlength="253" placeholder="mail.example.com" value="${refusal.typed?.domain ?? ''}"${refusal.field === 'domain' ? html` aria-invalid="true" aria-describedby="form-error"` : ''}></p><p><button class="btn" type="submit">Set up domain</button></p></form>`}</section>`
    }

    const subscription = (channel: 'email' | 'in_app', delivery: 'instant' | 'daily') => subscriptions.find((s) => s.channel === channel && s.delivery === delivery)
    const KINDS = [['email', 'instant', 'E-mail'], ['email', 'daily', 'Daily e-mail digest'], ['in_app', 'instant', 'In the dashboard']] as const
    return settingsPage(viewer, 'Integrations', refusal, html`<h1>Integrations</h1>
<section aria-labelledby="connect-h"><h2 id="connect-h">Chat and issue tracker</h2>
${admin ? html`${chatPart}${trackerPart}` : html`<p class="muted">Only admins connect chat and the issue tracker.</p>`}</section>
<section aria-labelledby="notify-h"><h2 id="notify-h">Notifications</h2>
<p>What you hear about in this workspace (your own subscriptions). E-mail goes out per event, or once a day in a digest.</p>
${KINDS.map(([channel, delivery, label]) => {
  const sub = subscription(channel, delivery)
  return html`<div class="card"><h3>${label}</h3>${sub ? html`<p>${sub.enabled ? 'On' : 'Paused'}: ${sub.events.join(', ')}</p>
<form method="post" action="${base}/subscriptions/${sub.id}/toggle">${csrf}<input type="hidden" name="enabled" value="${sub.enabled ? 'false' : 'true'}"><button class="btn plain" type="submit">${sub.enabled ? 'Pause' : 'Resume'} ${label.toLowerCase()} notifications</button></form>
<form method="post" action="${base}/subscriptions/${sub.id}/delete">${csrf}<button class="btn plain" type="submit">Stop ${label.toLowerCase()} notifications</button></form>`
    : html`<form method="post" action="${base}/subscriptions">${csrf}<input type="hidden" name="channel" value="${channel}"><input type="hidden" name="delivery" value="${delivery}">
<fieldset><legend>Events by ${label.toLowerCase()}</legend>${EVENT_TYPES.map((type) => html`<label><input type="checkbox" name="events" value="${type}"> ${type}</label> `)}</fieldset>
<p><button class="btn" type="submit">Subscribe by ${label.toLowerCase()}</button></p></form>`}</div>`
})}
<h3>Recent notifications</h3>
${events.items.length ? html`<ul>${events.items.map((e) => html`<li>${e.subject} <span class="muted">(${e.eventType}, ${e.channel}${e.emailStatus ? `, ${e.emailStatus}` : ''}, <time datetime="${e.createdAt.toISOString()}">${e.createdAt.toISOString().slice(0, 16).replace('T', ' ')}</time>)</span></li>`)}</ul>` : html`<p>None yet.</p>`}
${domainPart}</section>`, authorizeOrigins)
  }

  const view = (viewer: WorkspaceViewer, refusal: Refusal) => render(viewer, refusal)
  const path = `${DASHBOARD}/:workspace_slug/settings/integrations`
  const admin = { role: 'admin' as const, section: 'integrations' as const, render: view }
  const member = { ...admin, role: 'member' as const }
  const owner = { ...admin, role: 'owner' as const, typed: (body: Record<string, unknown>) => ({ domain: formText(body.domain) }) }
  const parse = { parse: 'urlencoded' as const, ...hidden }
  const confirmed = (body: Record<string, unknown>) => {
    if (formText(body.confirm) !== 'yes') throw invalid(['body', 'confirm'], 'Tick the box to confirm.')
  }

  /** "Connect": a fresh state for this session, the workspace in a cookie for the callback, then the provider's authorize page. */
  const install = (provider: IntegrationProvider) => routes.action(admin, async (viewer) => {
    const { state } = await stateFor((await ready).stateKey, viewer.session.sessionId, viewer.workspace.id, provider)
    const authorize = new URL(provider === 'chat' ? ctx.config.chatAuthorizeUrl : ctx.config.trackerAuthorizeUrl)
    const clientId = provider === 'chat' ? ctx.config.chatClientId : ctx.config.trackerClientId
    if (!clientId) throw new ApiError('CONFLICT', `The ${NAMES[provider].toLowerCase()} integration is not configured on this server (set ${provider.toUpperCase()}_CLIENT_ID and ${provider.toUpperCase()}_CLIENT_SECRET)`)
    authorize.search = new URLSearchParams({ client_id: clientId, scope: SCOPES[provider], state, redirect_uri: redirectUri(provider), ...(provider === 'tracker' && { response_type: 'code' }) }).toString()
    const cookie = `${INSTALL_COOKIE}=${viewer.workspace.slug}; Path=${DASHBOARD}/_/integrations; HttpOnly; SameSite=Lax; Max-Age=600${ctx.config.secureCookies ? '; Secure' : ''}`
    return new Response(null, { status: 303, headers: { location: authorize.toString(), 'set-cookie': cookie, 'cache-control': 'no-store' } })
  })

  /** The provider's redirect back: the same checks as the API's connect route (state bound to session, workspace, provider). */
  const callback = (provider: IntegrationProvider) => async ({ request, query }: { request: Request; query: Record<string, string | undefined> }) => {
    const viewer = await viewerOf(ctx, request)
    if (!viewer) return seeOther(`/signin?${new URLSearchParams({ return_to: `${DASHBOARD}` })}`)
    const slug = cookieValue(request.headers, INSTALL_COOKIE)
    try {
      if (!slug) throw new ApiError('FORBIDDEN', 'This install was not started from this browser (or took longer than 10 minutes): start it again from the Integrations page')
      const member = await workspaceViewer(ctx, viewer, slug)
      const back = settingsPath(slug, 'integrations')
      if (!roleAllows(member.member.role, 'admin')) throw new ApiError('FORBIDDEN', 'This needs the admin role')
      if (query.error || !query.code || !query.state) {
        return seeOther(`${back}?${new URLSearchParams({ done: `${NAMES[provider]} was not connected: ${(query.error ?? 'the provider sent no code').slice(0, 100)}` })}`)
      }
      try {
        await connect(await ready, member.workspace.id, { sessionId: viewer.session.sessionId, userId: viewer.session.user.id }, provider, { code: query.code, state: query.state, redirect_uri: redirectUri(provider) })
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 403) throw error
        return render(member, { error: `${NAMES[provider]} was not connected: ${messageOf(error)}${typeof error.extra.detail === 'string' ? ` (${error.extra.detail})` : ''}`, status: error.status })
      }
      const clear = `${INSTALL_COOKIE}=; Path=${DASHBOARD}/_/integrations; HttpOnly; SameSite=Lax; Max-Age=0`
      return new Response(null, { status: 303, headers: { location: `${back}?${new URLSearchParams({ done: `${NAMES[provider]} connected` })}`, 'set-cookie': clear, 'cache-control': 'no-store' } })
    } catch (error) {
      if (error instanceof ApiError) return errorPage(error, viewer.csrf)
      throw error
    }
  }

  return new Elysia({ name: 'dashboard-settings-integrations' })
    .get(path, routes.view('member', view), hidden)
    .post(`${path}/chat/install`, install('chat'), parse)
    .post(`${path}/tracker/install`, install('tracker'), parse)
    .get(CALLBACK('chat'), callback('chat'), hidden)
    .get(CALLBACK('tracker'), callback('tracker'), hidden)
    .post(`${path}/:provider/disconnect`, routes.action(admin, async (viewer, { body, params }) => {
      confirmed(body)
      const provider = params.provider === 'chat' || params.provider === 'tracker' ? params.provider : null
      if (!provider) throw invalid(['path', 'provider'], 'Unknown integration')
      await disconnect(ctx.db, viewer.workspace.id, provider)
      return `${NAMES[provider]} disconnected`
    }), parse)
    .post(`${path}/chat/mappings`, routes.action(admin, async (viewer, { body }) => {
      const input = checkedBody<{ channel_id: string; board_slug?: string | null; events: string[] }>(ChatChannelMappingCreate,
        { channel_id: formText(body.channel_id), ...(formText(body.board_slug) && { board_slug: formText(body.board_slug) }), events: formList(body.events) },
        { events: 'Tick at least one event to post.', channel_id: 'Choose a channel.', board_slug: 'Choose a board.' })
      await createMapping(ctx.db, viewer.workspace.id, input)
      return 'Mapping added'
    }), parse)
    .post(`${path}/chat/mappings/:mapping_id/delete`, routes.action(admin, async (viewer, { params }) => {
      await deleteMapping(ctx.db, viewer.workspace.id, params.mapping_id!)
      return 'Mapping removed'
    }), parse)
    .post(`${path}/subscriptions`, routes.action(member, async (viewer, { body }) => {
      const input = checkedBody<{ events: string[]; channel: 'email' | 'in_app'; delivery?: 'instant' | 'daily' }>(SubscriptionCreate, { events: formList(body.events), channel: formText(body.channel), ...(formText(body.delivery) && { delivery: formText(body.delivery) }) }, { events: 'Tick at least one event.', channel: 'Choose e-mail or the dashboard.', delivery: 'Choose at once or a daily digest.' })
      await createSubscription(ctx.db, viewer.workspace.id, viewer.session.user.id, input)
      return 'Subscribed'
    }), parse)
    .post(`${path}/subscriptions/:subscription_id/toggle`, routes.action(member, async (viewer, { body, params }) => {
      await updateSubscription(ctx.db, { workspaceId: viewer.workspace.id, userId: viewer.session.user.id }, params.subscription_id!, { enabled: formText(body.enabled) === 'true' })
      return formText(body.enabled) === 'true' ? 'Notifications resumed' : 'Notifications paused'
    }), parse)
    .post(`${path}/subscriptions/:subscription_id/delete`, routes.action(member, async (viewer, { params }) => {
      await deleteSubscription(ctx.db, { workspaceId: viewer.workspace.id, userId: viewer.session.user.id }, params.subscription_id!)
      return 'Subscription removed'
    }), parse)
    .post(`${path}/domain`, routes.action(owner, async (viewer, { body }) => {
      const input = checkedBody<{ domain: string }>(CustomDomainRequest, { domain: formText(body.domain).trim() }, { domain: 'Enter a domain like mail.example.com.' })
      await createDomain(domains, viewer.workspace, input.domain)
      return 'Domain added: add the DNS records below'
    }), parse)
    .post(`${path}/domain/delete`, routes.action(owner, async (viewer, { body }) => {
      confirmed(body)
      await deleteDomain(ctx.db, viewer.workspace)
      return 'Domain removed'
    }), parse)
}
