import { and, eq, sql, type SQLWrapper } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import type { Db, Tx } from '../../db/client.ts'
import { apiKeys, endUsers, users, workspaces } from '../../db/schema/index.ts'
import { invalid, notFound } from '../../errors.ts'
import { endUserByEmail, type EndUserCaller } from '../../identity/end-users.ts'
import type { Caller } from '../../plugins/auth.ts'

// Defined with end-user identity (server/identity/end-users.ts); re-exported for the feedback services.
export { endUserByEmail, type EndUserCaller }

export interface OnBehalf {
  email?: string
  end_user_id?: string
}

/** Whoever calls a feedback write: a key, a member session, or an end user on the public routes. */
export type FeedbackCaller = Caller | EndUserCaller

/** Who did it: a dashboard user, an end user, or an API key acting as itself. */
export type Actor =
  | { kind: 'member'; userId: string; name: string | null }
  | { kind: 'end_user'; endUserId: string; name: string | null; verified: boolean }
  | { kind: 'api_key'; keyId: string; name: string }


/**
 * The actor of a write: the end user named by `end_user_id` or `email` (an unknown e-mail creates an
 * anonymous end user), else the caller itself. A foreign or unknown end_user_id is 404. An end user
 * on the public routes always acts as themselves, whatever the body says.
 */
export async function resolveActor(db: Db | Tx, workspaceId: string, caller: FeedbackCaller, onBehalf: OnBehalf): Promise<Actor> {
  const named: OnBehalf = caller.kind !== 'end_user' ? onBehalf : 'endUserId' in caller ? { end_user_id: caller.endUserId } : { email: caller.email }
  if (named.end_user_id !== undefined && named.email !== undefined) {
    throw invalid(['body', 'email'], 'Send either email or end_user_id, not both')
  }
  if (named.end_user_id !== undefined) {
    const [row] = await db.select().from(endUsers).where(and(eq(endUsers.id, named.end_user_id), eq(endUsers.workspaceId, workspaceId)))
    if (!row) throw notFound('End user')
    return { kind: 'end_user', endUserId: row.id, name: row.name ?? row.email, verified: row.verifiedAt !== null }
  }
  if (named.email !== undefined) {
    const row = await endUserByEmail(db, workspaceId, named.email, caller.kind !== 'end_user')
    return { kind: 'end_user', endUserId: row.id, name: row.name ?? row.email, verified: row.verifiedAt !== null }
  }
  if (caller.kind === 'api_key') return { kind: 'api_key', keyId: caller.keyId, name: caller.name }
  if (caller.kind === 'end_user') throw new Error('unreachable: an end user always names itself')
  return { kind: 'member', userId: caller.user.id, name: caller.user.name ?? caller.user.email }
}

export const authorColumns = (actor: Actor) => ({
  authorUserId: actor.kind === 'member' ? actor.userId : null,
  authorEndUserId: actor.kind === 'end_user' ? actor.endUserId : null,
  authorKeyId: actor.kind === 'api_key' ? actor.keyId : null,
  authorName: actor.name,
})

// Aliases joined (left) to posts and comments, so the author is rendered without a query per row.
export const authorUser = alias(users, 'author_user')
export const authorEndUser = alias(endUsers, 'author_end_user')
export const authorKey = alias(apiKeys, 'author_key')

export const authorSelection = {
  authorUserId: authorUser.id,
  authorUserName: sql<string | null>`coalesce(${authorUser.name}, ${authorUser.email})`,
  authorUserEmail: authorUser.email,
  authorEndUserId: authorEndUser.id,
  authorEndUserName: sql<string | null>`coalesce(${authorEndUser.name}, ${authorEndUser.email})`,
  authorEndUserEmail: authorEndUser.email,
  authorEndUserVerifiedAt: authorEndUser.verifiedAt,
  authorKeyId: authorKey.id,
  authorKeyName: authorKey.name,
}

export type AuthorRow = { [K in Exclude<keyof typeof authorSelection, 'authorEndUserVerifiedAt'>]: string | null } & { authorEndUserVerifiedAt: Date | null }

/** Whether what the author wrote counts as verified: only an unconfirmed anonymous e-mail identity does not. */
export const authorVerified = (row: Pick<AuthorRow, 'authorEndUserId' | 'authorEndUserVerifiedAt'>) => row.authorEndUserId === null || row.authorEndUserVerifiedAt !== null

/** For `verified=true|false` filters: the row's end user (`column`) is an unconfirmed anonymous identity. */
export const isUnverifiedEndUser = (column: SQLWrapper) => sql`exists (select 1 from ${endUsers} where ${endUsers.id} = ${column} and ${endUsers.verifiedAt} is null)`

export interface AuthorResponse {
  type: 'member' | 'end_user' | 'api_key' | 'team' | 'deleted'
  id: string | null
  name: string
  email: string | null
}

/** `publicView` hides e-mail addresses, and every part of one (portal and widget). */
export function toAuthor(row: AuthorRow, publicView = false): AuthorResponse {
  const email = (value: string | null) => (publicView ? null : value)
  if (row.authorUserId) return { type: 'member', id: row.authorUserId, name: publicView ? publicName(row.authorUserName, row.authorUserEmail, 'Team member') : row.authorUserName ?? 'Team member', email: email(row.authorUserEmail) }
  if (row.authorEndUserId) return { type: 'end_user', id: row.authorEndUserId, name: publicView ? publicName(row.authorEndUserName, row.authorEndUserEmail, 'Anonymous') : row.authorEndUserName ?? 'Anonymous', email: email(row.authorEndUserEmail) }
  if (row.authorKeyId) return { type: 'api_key', id: row.authorKeyId, name: row.authorKeyName ?? 'API key', email: null }
  return { type: 'deleted', id: null, name: 'Deleted user', email: null }
}

/**
 * In public, a name someone chose, else the fallback ("Anonymous", "Team member"): never the address
 * nor its local part, which is often the person's name (docs/security.md#end-user-identity).
 */
function publicName(name: string | null, email: string | null, fallback: string) {
  return name && name !== email && !name.includes('@') ? name : fallback
}

/**
 * The author of a comment: what a member or an API key writes is the team speaking (`type: "team"`),
 * under the member's name or, for a key, the workspace's name; a key's own name is internal and never shown.
 */
export function toReplyAuthor(row: AuthorRow, workspaceName: string, publicView = false): AuthorResponse {
  const author = toAuthor(row, publicView)
  if (author.type === 'member') return { ...author, type: 'team' }
  if (author.type === 'api_key') return { type: 'team', id: null, name: workspaceName, email: null }
  return author
}

/** Who on the team made a change (a status change's message), as `toReplyAuthor` names them; null for the service itself. */
export async function teamAuthor(db: Db | Tx, workspaceId: string, caller: Caller | { kind: 'service' }): Promise<{ type: 'team'; name: string } | null> {
  if (caller.kind === 'session' || caller.kind === 'oauth') return { type: 'team', name: caller.user.name ?? caller.user.email }
  if (caller.kind !== 'api_key') return null
  const [row] = await db.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, workspaceId))
  return row ? { type: 'team', name: row.name } : null
}
