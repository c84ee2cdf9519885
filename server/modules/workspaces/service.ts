import { and, asc, eq, sql } from 'drizzle-orm'
import { isUniqueViolation, type Db } from '../../db/client.ts'
import { members, workspaces } from '../../db/schema/index.ts'
import { slugTaken } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Workspace } from '../../plugins/credentials.ts'
import { createDefaultStatuses } from '../statuses/defaults.ts'
import { createSubscription, OWNER_DEFAULT_SUBSCRIPTION } from '../notifications/service.ts'

export const TRIAL_DAYS = 14

export async function createWorkspace(db: Db, ownerId: string, input: { name: string; slug: string }) {
  try {
    return await db.transaction(async (tx) => {
      const [workspace] = await tx.insert(workspaces).values({
        id: newId('workspace'),
        name: input.name.trim(),
        slug: input.slug,
        plan: 'startup',
        subscriptionStatus: 'trialing',
        currentPeriodEnd: new Date(Date.now() + TRIAL_DAYS * 24 * 3600 * 1000),
      }).returning()
      await tx.insert(members).values({ workspaceId: workspace!.id, userId: ownerId, role: 'owner', status: 'active', joinedAt: new Date() })
      await createDefaultStatuses(tx as unknown as Db, workspace!.id)
      await createSubscription(tx, workspace!.id, ownerId, OWNER_DEFAULT_SUBSCRIPTION)
      return workspace!
    })
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTaken(input.slug)
    throw error
  }
}

/** Workspaces where the user is an active member (or, with `pending`, invited), with their role. */
export async function workspacesOfUser(db: Db, userId: string, status: 'active' | 'pending' = 'active') {
  return db
    .select({ workspace: workspaces, role: members.role })
    .from(members)
    .innerJoin(workspaces, eq(workspaces.id, members.workspaceId))
    .where(and(eq(members.userId, userId), eq(members.status, status)))
    .orderBy(asc(workspaces.createdAt))
}

export async function updateWorkspace(db: Db, workspace: Workspace, input: { name?: string; slug?: string; settings?: Record<string, unknown> }) {
  try {
    const [updated] = await db
      .update(workspaces)
      .set({
        ...(input.name !== undefined && { name: input.name.trim() }),
        ...(input.slug !== undefined && { slug: input.slug }),
        ...(input.settings !== undefined && { settings: { ...workspace.settings, ...input.settings } }),
        updatedAt: sql`now()`,
      })
      .where(eq(workspaces.id, workspace.id))
      .returning()
    return updated!
  } catch (error) {
    if (isUniqueViolation(error) && input.slug) throw slugTaken(input.slug)
    throw error
  }
}
