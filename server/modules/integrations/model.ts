import { t } from 'elysia'
import { EventKind, EventKinds } from '../../events/model.ts'
import { Enum, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'

const slug = t.String({ ...WorkspaceSlugParams.properties.workspace_slug, examples: ['acme'] })

export const IntegrationParams = t.Object({ workspace_slug: slug })

export const IntegrationResponse = t.Object({
  provider: Enum(['chat', 'tracker'], { description: '`chat`: a Slack-compatible workspace; `tracker`: a Linear-compatible organization' }),
  id: t.Nullable(t.String({ description: '`int_...`; null while not connected' })),
  status: Enum(['connected', 'error', 'disconnected'], { description: '`error`: the provider refused the token (revoked, account inactive); nothing is sent until an admin reconnects' }),
  status_reason: t.Nullable(t.String({ description: 'Why the integration is in `error`' })),
  external_id: t.Nullable(t.String({ description: "The provider's id of the connected team or organization" })),
  external_name: t.Nullable(t.String({ description: 'Its name, e.g. the Slack team name' })),
  scopes: t.Nullable(t.String({ description: 'The scopes the provider granted, as it lists them' })),
  token_expires_at: t.Nullable(Timestamp, { description: 'When the current access token expires (refreshed on demand before then); null for tokens that do not expire' }),
  connected_at: t.Nullable(Timestamp),
  updated_at: t.Nullable(Timestamp),
  oauth_state: t.String({ description: "A fresh OAuth `state` for (re)installing this provider, bound to the caller's session, this workspace and the provider; valid 10 minutes" }),
  oauth_state_expires_at: Timestamp,
}, {
  $id: 'Integration',
  examples: [{
    provider: 'chat', id: 'int_0mhc2x9a4k3j5n6p7q8r9s0t1', status: 'connected', status_reason: null, external_id: 'T0001', external_name: 'Acme',
    scopes: 'chat:write,channels:read,channels:join', token_expires_at: '2026-11-22T21:30:00.000Z', connected_at: '2026-11-22T09:30:00.000Z',
    updated_at: '2026-11-22T09:30:00.000Z', oauth_state: '1795400400.bm9uY2U.c2lnbmF0dXJl', oauth_state_expires_at: '2026-11-22T09:40:00.000Z',
  }],
})

const code = t.String({ minLength: 1, maxLength: 512, description: 'The `code` the provider added to the redirect' })
const state = t.String({ minLength: 1, maxLength: 256, description: 'The `state` the provider echoed back: the `oauth_state` this session got from GET /integrations' })
const redirectUri = t.Optional(t.String({ maxLength: 2048, description: 'The redirect URI used in the authorize step, when the provider needs it repeated' }))

export const ChatOAuthCallback = t.Object({ code, state, redirect_uri: redirectUri }, {
  additionalProperties: false, $id: 'ChatOAuthCallback', examples: [{ code: '1234.5678.abcd', state: '1795400400.bm9uY2U.c2lnbmF0dXJl', redirect_uri: 'https://app.example.com/integrations/chat/callback' }],
})
export const TrackerOAuthCallback = t.Object({ code, state, redirect_uri: redirectUri }, {
  additionalProperties: false, $id: 'TrackerOAuthCallback', examples: [{ code: 'a1b2c3', state: '1795400400.bm9uY2U.c2lnbmF0dXJl', redirect_uri: 'https://app.example.com/integrations/tracker/callback' }],
})

export const ChatChannelListResponse = t.Object({
  id: t.String(),
  name: t.String(),
  is_private: t.Boolean({ description: 'Private channels need the bot invited (`/invite`) before it can post' }),
  is_member: t.Boolean({ description: 'Whether the bot is in the channel already (it joins public channels by itself when it first posts)' }),
}, { $id: 'ChatChannel', examples: [{ id: 'C0123ABCD', name: 'feedback', is_private: false, is_member: true }] })

const ChannelId = t.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: "The provider's channel id (from GET .../chat/channels)" })
const BoardSlug = t.Nullable(t.String({ minLength: 2, maxLength: 48, description: 'Only events of this board; null or absent: every board' }))
const Events = EventKinds

export const ChatChannelMappingCreate = t.Object({ channel_id: ChannelId, board_slug: t.Optional(BoardSlug), events: Events }, {
  additionalProperties: false, $id: 'ChatChannelMappingCreate', examples: [{ channel_id: 'C0123ABCD', board_slug: 'ideas', events: ['post.created', 'status.changed'] }],
})
export const ChatChannelMappingUpdate = t.Object({ channel_id: t.Optional(ChannelId), board_slug: t.Optional(BoardSlug), events: t.Optional(Events) }, {
  additionalProperties: false, minProperties: 1, $id: 'ChatChannelMappingUpdate', examples: [{ events: ['post.created'] }],
})

export const ChatChannelMappingResponse = t.Object({
  id: t.String({ description: '`map_...`' }),
  channel_id: t.String(),
  board_slug: t.Nullable(t.String({ description: 'null: every board' })),
  events: t.Array(EventKind),
  created_at: Timestamp,
  updated_at: Timestamp,
}, {
  $id: 'ChatChannelMapping',
  examples: [{ id: 'map_0mhc2x9a4k3j5n6p7q8r9s0t1', channel_id: 'C0123ABCD', board_slug: 'ideas', events: ['post.created'], created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-22T09:30:00.000Z' }],
})

export const TrackerTeamResponse = t.Object({ id: t.String(), name: t.String(), key: t.String({ description: 'The prefix of its issue identifiers, e.g. ENG' }) }, {
  $id: 'TrackerTeam', examples: [{ id: '72b2a2dc-6f4f-4423-9d34-24b5bd10634a', name: 'Engineering', key: 'ENG' }],
})

export const MappingParams = t.Object({ workspace_slug: slug, mapping_id: t.String({ maxLength: 64, examples: ['map_0mhc2x9a4k3j5n6p7q8r9s0t1'] }) })

export const TrackerIssueCreate = t.Object({ team_id: t.String({ minLength: 1, maxLength: 128, description: 'A team id from GET /workspaces/{slug}/integrations/tracker/teams' }) }, {
  additionalProperties: false, $id: 'TrackerIssueCreate', examples: [{ team_id: '72b2a2dc-6f4f-4423-9d34-24b5bd10634a' }],
})

export const TrackerWebhookResponse = t.Object({ received: t.Boolean(), outcome: Enum(['applied', 'ignored']) }, {
  $id: 'TrackerWebhookResult', examples: [{ received: true, outcome: 'applied' }],
})


