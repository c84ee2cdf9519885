import { and, count, desc, eq, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { notificationEvents, notificationSubscriptions } from '../../db/schema/index.ts'
import { conflict, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Page } from '../../lib/paging.ts'

/** Whose notifications a caller sees: a member their own; an API key (no person behind it) every member's. */
export type Audience = { workspaceId: string; userId: string | null }

const subscriptionsOf = (audience: Audience): SQL =>
  and(eq(notificationSubscriptions.workspaceId, audience.workspaceId), audience.userId ? eq(notificationSubscriptions.userId, audience.userId) : undefined)!

export const listSubscriptions = (db: Db, audience: Audience) =>
  db.select().from(notificationSubscriptions).where(subscriptionsOf(audience)).orderBy(notificationSubscriptions.createdAt)

export async function createSubscription(db: Db, workspaceId: string, userId: string, input: { events: string[]; channel: 'email' | 'in_app' }) {
  const [row] = await db.insert(notificationSubscriptions)
    .values({ id: newId('notificationSubscription'), workspaceId, userId, events: input.events, channel: input.channel })
    .onConflictDoNothing()
    .returning()
  if (!row) throw conflict(`You already have a ${input.channel} subscription here; change its events by deleting and re-creating it`)
  return row
}

export async function toggleSubscription(db: Db, audience: Audience, id: string, enabled: boolean) {
  const [row] = await db.update(notificationSubscriptions).set({ enabled, updatedAt: new Date() })
    .where(and(eq(notificationSubscriptions.id, id), subscriptionsOf(audience))).returning()
  if (!row) throw notFound('Subscription')
  return row
}

export async function deleteSubscription(db: Db, audience: Audience, id: string) {
  const [row] = await db.delete(notificationSubscriptions).where(and(eq(notificationSubscriptions.id, id), subscriptionsOf(audience))).returning({ id: notificationSubscriptions.id })
  if (!row) throw notFound('Subscription')
}

export async function listNotificationEvents(db: Db, audience: Audience, page: Page) {
  const where = and(eq(notificationEvents.workspaceId, audience.workspaceId), audience.userId ? eq(notificationEvents.userId, audience.userId) : undefined)
  const [items, [total]] = await Promise.all([
    db.select().from(notificationEvents).where(where).orderBy(desc(notificationEvents.createdAt), desc(notificationEvents.id)).limit(page.perPage).offset(page.offset),
    db.select({ value: count() }).from(notificationEvents).where(where),
  ])
  return { items, total: total!.value }
}
