import { t } from 'elysia'

const Rows = (description: string) => t.Array(t.Record(t.String(), t.Any()), { description })
const Header = {
  version: t.Integer({ description: 'Export format version; 1 today' }),
  exported_at: t.String({ format: 'date-time', description: 'When the snapshot was taken' }),
  counts: t.Record(t.String(), t.Integer(), { description: 'Rows written per section' }),
}

export const WorkspaceExport = t.Object({
  format: t.Literal('chorus-workspace-export'),
  ...Header,
  workspace: t.Record(t.String(), t.Any(), { description: 'The workspace row (without its intake token)' }),
  members: Rows('Members with user_id, email, name, role, status'),
  boards: Rows('Boards'),
  statuses: Rows('Statuses'),
  labels: Rows('Labels'),
  end_users: Rows('End users (customers) with their e-mail addresses'),
  posts: Rows('Posts, each with label_ids'),
  comments: Rows('Comments, internal ones included'),
  votes: Rows('Votes'),
  status_changes: Rows('Status history of the posts'),
  webhooks: Rows('Webhook endpoints, without signing secrets'),
  api_keys: Rows('API keys: name, start, scopes and dates, without hashes'),
  changelog_entries: Rows('Changelog entries (drafts included), each with post_ids'),
}, { $id: 'WorkspaceExport', description: 'One consistent snapshot, streamed', examples: [{ format: 'chorus-workspace-export', version: 1, exported_at: '2026-11-24T10:00:00.000Z', workspace: { id: 'ws_0mi9x2k3aq1b2c3d4e5f6g7h8', slug: 'acme' }, members: [], boards: [], statuses: [], labels: [], end_users: [], posts: [], comments: [], votes: [], status_changes: [], webhooks: [], api_keys: [], changelog_entries: [], counts: { members: 0 } }] })

export const UserExport = t.Object({
  format: t.Literal('chorus-user-export'),
  ...Header,
  user: t.Record(t.String(), t.Any(), { description: 'The profile' }),
  memberships: Rows('Workspaces the user belongs to or is invited to, with slug, name and role'),
  sessions: Rows('Sign-in sessions: user agent and dates, never tokens'),
  posts: Rows('Posts the user wrote, in every workspace'),
  comments: Rows('Comments the user wrote'),
  votes: Rows("The user's votes"),
  notification_subscriptions: Rows('Notification settings'),
  notifications: Rows('Notifications the user received (subject, type, channel, dates)'),
  api_keys_created: Rows('API keys the user created, without hashes'),
}, { $id: 'UserExport', description: 'One consistent snapshot, streamed', examples: [{ format: 'chorus-user-export', version: 1, exported_at: '2026-11-24T10:00:00.000Z', user: { id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', email: 'ada@example.com' }, memberships: [], sessions: [], posts: [], comments: [], votes: [], notification_subscriptions: [], notifications: [], api_keys_created: [], counts: { posts: 0 } }] })
