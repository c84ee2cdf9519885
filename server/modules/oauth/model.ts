import { t } from 'elysia'
import { SCOPES, type Scope } from '../../plugins/auth.ts'
import { Timestamp } from '../../lib/schema.ts'

export const CODE_SECONDS = 60
export const CONSENT_SECONDS = 10 * 60
export const ACCESS_SECONDS = 60 * 60
export const REFRESH_SECONDS = 30 * 24 * 60 * 60
export const ACCESS_PREFIX = 'chorus_at_'
export const REFRESH_PREFIX = 'chorus_rt_'

/** What the consent page says for each scope. */
export const SCOPE_WORDS: Record<Scope, string> = {
  'workspace:read': 'See the workspace name, plan and settings',
  'boards:read': 'See boards',
  'statuses:read': 'See post statuses',
  'labels:read': 'See labels',
  'labels:write': 'Create, change and delete labels',
  'posts:read': 'Read posts (feedback and ideas)',
  'posts:write': 'Create, change, merge and delete posts',
  'comments:read': 'Read public comments',
  'comments:write': 'Write and change comments',
  'comments:internal': 'Read and write internal team notes',
  'votes:read': 'See who voted',
  'votes:write': 'Vote and remove votes',
  'webhooks:read': 'See webhooks and their delivery logs',
  'webhooks:write': 'Create, change and delete webhooks',
  'notifications:read': 'See notification subscriptions and events',
  'notifications:write': 'Change notification subscriptions',
  'changelog:read': 'Read changelog entries, drafts included',
  'changelog:write': 'Write, publish and delete changelog entries (publishing completes the linked posts and e-mails their voters)',
  'companies:read': "See your customers' companies and their revenue (MRR)",
  'companies:write': 'Create, change and delete companies and how demand is counted',
  'imports:write': 'Import posts, votes, comments and people from other feedback tools, and read how imports went',
  'end_users:read': "Read and export everything stored about one of your customers' end users (their e-mail address, posts, comments and votes)",
  'end_users:write': "Erase one of your customers' end users for good, with their votes (and their posts and comments, or their name on them)",
}

/**
 * A client that asks for no scope gets read access only: writing is something a user chooses to grant.
 * Reading end users' personal data (`end_users:read`) is never a default: a client asks for it by name.
 */
export const DEFAULT_SCOPES: string[] = SCOPES.filter((scope) => scope.endsWith(':read') && scope !== 'end_users:read')

export const ConsentParams = t.Object({ request_id: t.String({ maxLength: 64, examples: ['ocr_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })
export const GrantParams = t.Object({ family_id: t.String({ maxLength: 64, examples: ['ogf_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })
export const GrantsQuery = t.Object({ workspace_id: t.String({ maxLength: 64, examples: ['ws_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

export const ConsentDecision = t.Object({
  approve: t.Boolean({ description: 'true grants access; false answers the client with `error=access_denied`' }),
  workspace_id: t.String({ maxLength: 64, description: 'The workspace the app may act in (the user must be its admin or owner)' }),
  scopes: t.Optional(t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true, description: 'A subset of the requested scopes (narrowing only); default: all requested' })),
}, { additionalProperties: false, $id: 'ConsentDecision', examples: [{ approve: true, workspace_id: 'ws_0mi9x2k3aq1b2c3d4e5f6g7h8', scopes: ['posts:read'] }] })

export const ConsentRequestResponse = t.Object({
  request_id: t.String(),
  client_id: t.String(),
  client_name: t.String(),
  client_verified: t.Boolean({ description: 'false for self-registered and metadata-document clients: their name is what they say about themselves' }),
  redirect_uri: t.String(),
  scopes: t.Array(t.Object({ scope: t.String(), description: t.String() })),
  workspaces: t.Array(t.Object({ id: t.String(), slug: t.String(), name: t.String() }), { description: 'Workspaces the user may grant (admin or owner)' }),
  expires_at: Timestamp,
}, {
  $id: 'ConsentRequest',
  examples: [{
    request_id: 'ocr_0mi9x2k3aq1b2c3d4e5f6g7h8', client_id: 'oac_0mi9x2k3aq1b2c3d4e5f6g7h8', client_name: 'Claude', client_verified: false,
    redirect_uri: 'http://127.0.0.1:33418/callback', scopes: [{ scope: 'posts:read', description: SCOPE_WORDS['posts:read'] }],
    workspaces: [{ id: 'ws_0mi9x2k3aq1b2c3d4e5f6g7h8', slug: 'acme', name: 'Acme' }], expires_at: '2026-11-22T09:40:00.000Z',
  }],
})

export const ConsentResult = t.Object({
  redirect_to: t.String({ description: 'The client redirect URI with `code`, `state` and `iss`, or with `error=access_denied`; send the browser there' }),
}, { $id: 'ConsentResult', examples: [{ redirect_to: 'http://127.0.0.1:33418/callback?code=...&state=xyz&iss=https%3A%2F%2Fchorus.example.com' }] })

export const OAuthGrantResponse = t.Object({
  family_id: t.String(),
  client_id: t.String(),
  client_name: t.String(),
  workspace_id: t.String(),
  user_id: t.String({ description: 'Who granted it' }),
  scopes: t.Array(t.String()),
  created_at: Timestamp,
  last_used_at: t.Nullable(Timestamp),
}, {
  $id: 'OAuthGrant',
  examples: [{ family_id: 'ogf_0mi9x2k3aq1b2c3d4e5f6g7h8', client_id: 'oac_0mi9x2k3aq1b2c3d4e5f6g7h8', client_name: 'Claude', workspace_id: 'ws_0mi9x2k3aq1b2c3d4e5f6g7h8', user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', scopes: ['posts:read'], created_at: '2026-11-22T09:30:00.000Z', last_used_at: null }],
})
