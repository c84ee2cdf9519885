// What each export holds: sections of rows read in key order, one page at a time (keyset paging).
// PostgreSQL renders each page as JSON text (json_build_object per row, string_agg per page), so the
// server handles one string per page instead of thousands of row objects. Secrets and hashes are
// left out by construction: the field lists below omit them.
import { getTableColumns, sql, type SQL } from 'drizzle-orm'
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core'
import {
  apiKeys, boards, changelogEntries, comments, endUsers, labels, members, notificationEvents, notificationSubscriptions, posts,
  sessions, statusChanges, statuses, users, votes, webhooks, workspaces,
} from '../../db/schema/index.ts'

export interface Section {
  name: string
  /** The FROM clause: a table, or a table and its joins. */
  from: SQL
  where: SQL
  /** The keyset: unique within the section, indexed. */
  key: PgColumn
  /** JSON field name → SQL expression. */
  fields: [string, SQL][]
  /** A section of exactly one row, written as an object. */
  single?: boolean
}

/** The API's time format: ISO 8601 UTC with milliseconds. */
const iso = (column: PgColumn) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** Every column of a table as a field named like the column (snake_case, as in the API), except `omit`. */
function fieldsOf(table: PgTable, omit: string[] = []): [string, SQL][] {
  return Object.entries(getTableColumns(table))
    .filter(([key]) => !omit.includes(key))
    .map(([, column]) => [column.name, column.columnType === 'PgTimestamp' ? iso(column) : sql`${column}`])
}

const changelogPostIds: [string, SQL] = ['post_ids', sql`coalesce((select json_agg(cp.post_id order by cp.post_id) from changelog_posts cp where cp.entry_id = ${changelogEntries.id}), '[]'::json)`]

const section = (name: string, table: PgTable & { id: PgColumn }, where: SQL, omit: string[] = [], extra: [string, SQL][] = []): Section =>
  ({ name, from: sql`${table}`, where, key: table.id, fields: [...fieldsOf(table, omit), ...extra] })

/** Everything a workspace's owner may take away; credentials (intake token, webhook secrets, key hashes) stay behind. */
export function workspaceSections(workspaceId: string): Section[] {
  return [
    { ...section('workspace', workspaces, sql`${workspaces.id} = ${workspaceId}`, ['emailIntakeToken']), single: true },
    {
      name: 'members',
      from: sql`${members} join ${users} on ${users.id} = ${members.userId}`,
      where: sql`${members.workspaceId} = ${workspaceId}`,
      key: members.userId,
      fields: [['user_id', sql`${members.userId}`], ['email', sql`${users.email}`], ['name', sql`${users.name}`], ['role', sql`${members.role}`],
        ['status', sql`${members.status}`], ['invited_at', iso(members.invitedAt)], ['joined_at', iso(members.joinedAt)]],
    },
    section('boards', boards, sql`${boards.workspaceId} = ${workspaceId}`),
    section('statuses', statuses, sql`${statuses.workspaceId} = ${workspaceId}`),
    section('labels', labels, sql`${labels.workspaceId} = ${workspaceId}`),
    section('end_users', endUsers, sql`${endUsers.workspaceId} = ${workspaceId}`),
    section('posts', posts, sql`${posts.workspaceId} = ${workspaceId}`, ['search', 'trending']),
    section('comments', comments, sql`${comments.workspaceId} = ${workspaceId}`),
    section('votes', votes, sql`${votes.workspaceId} = ${workspaceId}`),
    section('status_changes', statusChanges, sql`${statusChanges.postId} in (select p.id from posts p where p.workspace_id = ${workspaceId})`),
    section('webhooks', webhooks, sql`${webhooks.workspaceId} = ${workspaceId}`, ['secret', 'previousSecret', 'previousSecretExpiresAt']),
    section('api_keys', apiKeys, sql`${apiKeys.workspaceId} = ${workspaceId}`, ['keyHash']),
    section('changelog_entries', changelogEntries, sql`${changelogEntries.workspaceId} = ${workspaceId}`, [], [changelogPostIds]),
  ]
}

/** Everything about one user: profile, memberships, sessions (no tokens), what they wrote and voted, their notification settings. */
export function userSections(userId: string): Section[] {
  return [
    { ...section('user', users, sql`${users.id} = ${userId}`), single: true },
    {
      name: 'memberships',
      from: sql`${members} join ${workspaces} on ${workspaces.id} = ${members.workspaceId}`,
      where: sql`${members.userId} = ${userId}`,
      key: members.workspaceId,
      fields: [['workspace_id', sql`${members.workspaceId}`], ['workspace_slug', sql`${workspaces.slug}`], ['workspace_name', sql`${workspaces.name}`],
        ['role', sql`${members.role}`], ['status', sql`${members.status}`], ['invited_at', iso(members.invitedAt)], ['joined_at', iso(members.joinedAt)]],
    },
    section('sessions', sessions, sql`${sessions.userId} = ${userId}`, ['impersonatorId']),
    section('posts', posts, sql`${posts.authorUserId} = ${userId}`, ['search', 'trending']),
    section('comments', comments, sql`${comments.authorUserId} = ${userId}`),
    section('votes', votes, sql`${votes.userId} = ${userId}`),
    section('notification_subscriptions', notificationSubscriptions, sql`${notificationSubscriptions.userId} = ${userId}`),
    section('notifications', notificationEvents, sql`${notificationEvents.userId} = ${userId}`, ['data', 'emailLeaseUntil']),
    section('api_keys_created', apiKeys, sql`${apiKeys.createdBy} = ${userId}`, ['keyHash']),
  ]
}
