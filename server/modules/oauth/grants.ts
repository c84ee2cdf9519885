import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { members, oauthClients, oauthGrants } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { isId } from '../../lib/ids.ts'
import { revokeFamily } from './tokens.ts'

async function roleIn(db: Db, workspaceId: string, userId: string) {
  const [row] = await db.select({ role: members.role }).from(members)
    .where(and(eq(members.workspaceId, workspaceId), eq(members.userId, userId), eq(members.status, 'active')))
  return row?.role ?? null
}

/** The live grants of a workspace: all of them for its admins and owner, a member's own for a member. */
export async function listGrants(db: Db, userId: string, workspaceId: string) {
  const role = isId('workspace', workspaceId) ? await roleIn(db, workspaceId, userId) : null
  if (!role) throw notFound('Workspace')
  const rows = await db.select({ grant: oauthGrants, clientName: oauthClients.name }).from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(and(eq(oauthGrants.workspaceId, workspaceId), isNull(oauthGrants.revokedAt), role === 'member' ? eq(oauthGrants.userId, userId) : undefined))
    .orderBy(desc(oauthGrants.createdAt))
  return rows.map(({ grant, clientName }) => ({
    family_id: grant.id,
    client_id: grant.clientId,
    client_name: clientName,
    workspace_id: grant.workspaceId,
    user_id: grant.userId,
    scopes: grant.scopes,
    created_at: grant.createdAt.toISOString(),
    last_used_at: grant.lastUsedAt?.toISOString() ?? null,
  }))
}

/**
 * Revokes a grant family: its access and refresh tokens stop on the next request (every token lookup
 * joins the family). Idempotent; a grant the user neither made nor administers is 404.
 */
export async function deleteGrant(db: Db, userId: string, familyId: string) {
  const [grant] = isId('grantFamily', familyId) ? await db.select().from(oauthGrants).where(eq(oauthGrants.id, familyId)) : []
  if (!grant) throw notFound('Grant')
  if (grant.userId !== userId) {
    const role = await roleIn(db, grant.workspaceId, userId)
    if (role !== 'admin' && role !== 'owner') throw notFound('Grant')
  }
  await revokeFamily(db, grant.id, 'user')
}

/** Ends every grant a user made in a workspace: called when they leave it or are removed. */
export const revokeMemberGrants = (db: Db, workspaceId: string, userId: string) =>
  db.update(oauthGrants).set({ revokedAt: sql`now()`, revokedReason: 'member_removed' })
    .where(and(eq(oauthGrants.workspaceId, workspaceId), eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)))
