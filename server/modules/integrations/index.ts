import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { INTEGRATION_PROVIDERS, type IntegrationProvider } from '../../db/schema/index.ts'
import type { Caller } from '../../plugins/auth.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { listChatChannels } from './chat-api.ts'
import * as mappings from './mappings.ts'
import {
  ChatChannelListResponse, ChatChannelMappingCreate, ChatChannelMappingResponse, ChatChannelMappingUpdate, ChatOAuthCallback,
  IntegrationParams, IntegrationResponse, MappingParams, TrackerOAuthCallback, TrackerTeamResponse,
} from './model.ts'
import * as integrations from './service.ts'
import { listTeams } from './tracker.ts'

const tags = ['Integrations']
const admin = { role: 'admin' as const }

const INSTALL_FLOW = `**Install flow.** 1. The dashboard calls \`GET /workspaces/{slug}/integrations\`; each entry carries a fresh \`oauth_state\` bound to the caller's session, this workspace and the provider (valid 10 minutes). 2. It sends the admin to the provider's authorize page with that \`state\`. 3. The provider redirects back with \`code\` and \`state\`; the dashboard posts both here. 4. The server recomputes the state's HMAC over the caller's session id, the workspace and the provider and checks its age: a state minted for another session (an attacker's install link opened by a victim), workspace or provider, altered, or expired is 403 FORBIDDEN. Then it exchanges the code; a refused exchange is 502 \`UPSTREAM_ERROR\` with the provider's error in \`detail\`. Tokens are stored sealed (AES-256-GCM, a key derived from SECRET_KEY) and never returned or logged; connecting again replaces them and keeps the id (and mappings).`

/** The session behind a dashboard-only route (keys never get this far). */
const sessionOf = (caller: Caller) => {
  if (caller.kind !== 'session') throw new Error('dashboard-only route reached without a session')
  return { sessionId: caller.sessionId, userId: caller.user.id }
}

export const integrationsModule = (ctx: AppContext) => {
  const ready = integrations.integrationDeps(ctx)

  async function present(workspaceId: string, caller: Caller, provider: IntegrationProvider, row: integrations.Integration | null) {
    const deps = await ready
    const { state, expiresAt } = await integrations.stateFor(deps.stateKey, sessionOf(caller).sessionId, workspaceId, provider)
    return {
      provider,
      id: row?.id ?? null,
      status: !row ? 'disconnected' as const : row.status === 'error' ? 'error' as const : 'connected' as const,
      status_reason: row?.statusReason ?? null,
      external_id: row?.externalId ?? null,
      external_name: row?.externalName ?? null,
      scopes: row?.scopes ?? null,
      token_expires_at: row?.expiresAt?.toISOString() ?? null,
      connected_at: row?.createdAt.toISOString() ?? null,
      updated_at: row?.updatedAt.toISOString() ?? null,
      oauth_state: state,
      oauth_state_expires_at: expiresAt.toISOString(),
    }
  }

  const connectRoute = (provider: IntegrationProvider) => async ({ workspace, caller, body, set }: { workspace: { id: string }; caller: Caller; body: integrations.ConnectInput; set: { status?: number | string } }) => {
    const row = await integrations.connect(await ready, workspace.id, sessionOf(caller), provider, body)
    set.status = 201
    return present(workspace.id, caller, provider, row)
  }

  return new Elysia({ prefix: '/workspaces/:workspace_slug/integrations' })
    .use(authPlugin(ctx))
    .get('', async ({ workspace, caller }) => {
      const rows = await integrations.listIntegrations(ctx.db, workspace.id)
      return Promise.all(INTEGRATION_PROVIDERS.map((provider) => present(workspace.id, caller, provider, rows.find((row) => row.provider === provider) ?? null)))
    }, {
      params: IntegrationParams,
      workspace: admin,
      response: { 200: t.Array(IntegrationResponse) },
      detail: { operationId: 'listIntegrations', tags, summary: 'The chat and tracker connections, each with a fresh install state', description: `One entry per provider, connected or not. Dashboard-only: API keys get 403 DASHBOARD_ONLY, members below admin 403 FORBIDDEN.\n\n${INSTALL_FLOW}` },
    })
    .post('/chat/oauth', connectRoute('chat'), {
      params: IntegrationParams,
      body: ChatOAuthCallback,
      workspace: admin,
      response: { 201: IntegrationResponse },
      detail: { operationId: 'connectChat', tags, 'x-upstream-error': true, summary: 'Finish the chat install: exchange the OAuth code for a bot token', description: `Calls \`oauth.v2.access\` at CHAT_API_BASE. Rotating bot tokens (with \`refresh_token\` and \`expires_in\`) are refreshed on demand before they expire.\n\n${INSTALL_FLOW}` },
    })
    .delete('/chat', async ({ workspace, set }) => {
      await integrations.disconnect(ctx.db, workspace.id, 'chat')
      set.status = 204
    }, {
      params: IntegrationParams,
      workspace: admin,
      response: { 204: t.Void() },
      detail: { operationId: 'disconnectChat', tags, summary: 'Disconnect chat: deletes its tokens, channel mappings and pending messages', description: '404 when chat is not connected.' },
    })
    .get('/chat/channels', async ({ workspace }) => {
      const deps = await ready
      return integrations.withProvider(deps, workspace.id, 'chat', (token) => listChatChannels(deps.chat, token))
    }, {
      params: IntegrationParams,
      workspace: admin,
      response: { 200: t.Array(ChatChannelListResponse) },
      detail: { operationId: 'listChatChannels', tags, 'x-upstream-error': true, summary: 'Channels the bot can post to, live from the chat provider', description: 'Every page of `conversations.list` (public and private channels the bot can see, archived ones left out). 409 when chat is not connected or its token was revoked; 502 UPSTREAM_ERROR when the provider fails.' },
    })
    .post('/chat/channel-mappings', async ({ workspace, body, set }) => {
      const mapping = await mappings.createMapping(ctx.db, workspace.id, body)
      set.status = 201
      return mapping
    }, {
      params: IntegrationParams,
      body: ChatChannelMappingCreate,
      workspace: admin,
      response: { 201: ChatChannelMappingResponse },
      detail: { operationId: 'createChatChannelMapping', tags, summary: 'Post events of a board (or every board) to a channel', description: 'Matching events become Block Kit messages (title, board, status, votes, a link to the public post), delivered from the same durable outbox as webhooks: retried on failure (5 s, 5 min, 30 min, …), never lost across a restart, every attempt logged. A bot outside a public channel joins it first. An unknown board is 422; 409 when chat is not connected.' },
    })
    .get('/chat/channel-mappings', ({ workspace }) => mappings.listMappings(ctx.db, workspace.id), {
      params: IntegrationParams,
      workspace: admin,
      response: { 200: t.Array(ChatChannelMappingResponse) },
      detail: { operationId: 'listChatChannelMappings', tags, summary: 'The channel mappings, oldest first', description: '`board_slug` null means every board. Mappings of a connection in `error` stay, and resume once an admin reconnects.' },
    })
    .patch('/chat/channel-mappings/:mapping_id', ({ workspace, params, body }) => mappings.updateMapping(ctx.db, workspace.id, params.mapping_id, body), {
      params: MappingParams,
      body: ChatChannelMappingUpdate,
      workspace: admin,
      response: { 200: ChatChannelMappingResponse },
      detail: { operationId: 'updateChatChannelMapping', tags, summary: 'Change the channel, board (null: every board) or event kinds', description: 'Applies to events raised from now on.' },
    })
    .delete('/chat/channel-mappings/:mapping_id', async ({ workspace, params, set }) => {
      await mappings.deleteMapping(ctx.db, workspace.id, params.mapping_id)
      set.status = 204
    }, {
      params: MappingParams,
      workspace: admin,
      response: { 204: t.Void() },
      detail: { operationId: 'deleteChatChannelMapping', tags, summary: 'Delete a mapping and the messages it still had pending', description: 'Its delivery logs go with it. 404 for an unknown mapping or one of another workspace.' },
    })
    .post('/tracker/oauth', connectRoute('tracker'), {
      params: IntegrationParams,
      body: TrackerOAuthCallback,
      workspace: admin,
      response: { 201: IntegrationResponse },
      detail: { operationId: 'connectTracker', tags, 'x-upstream-error': true, summary: 'Finish the tracker install: exchange the OAuth code for an access token', description: `Calls \`/oauth/token\` at TRACKER_API_BASE (authorization_code grant), then reads the organization over GraphQL. Access tokens expire (24 h); the refresh token is stored sealed and used on demand.\n\n${INSTALL_FLOW}` },
    })
    .delete('/tracker', async ({ workspace, set }) => {
      await integrations.disconnect(ctx.db, workspace.id, 'tracker')
      set.status = 204
    }, {
      params: IntegrationParams,
      workspace: admin,
      response: { 204: t.Void() },
      detail: { operationId: 'disconnectTracker', tags, summary: 'Disconnect the tracker and delete its tokens', description: 'Posts keep their `tracker_issue` link; its completion no longer reaches them. 404 when the tracker is not connected.' },
    })
    .get('/tracker/teams', async ({ workspace }) => listTeams(await ready, workspace.id), {
      params: IntegrationParams,
      workspace: admin,
      response: { 200: t.Array(TrackerTeamResponse) },
      detail: { operationId: 'listTrackerTeams', tags, 'x-upstream-error': true, summary: 'Issue-tracker teams, live from the tracker', description: 'The `teams` GraphQL query. 409 when the tracker is not connected or its token was revoked; 502 UPSTREAM_ERROR when the provider fails.' },
    })
}
