import { and, count, desc, eq, type SQL } from 'drizzle-orm'
import { isUniqueViolation, type Db, type Tx } from '../../db/client.ts'
import { notificationEvents, notificationSubscriptions, type NotificationChannel, type NotificationDelivery } from '../../db/schema/index.ts'
import { conflict, invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import type { Page } from '../../lib/paging.ts'

/** Whose notifications a caller sees: a member their own; an API key (no person behind it) every member's. */
export type Audience = { workspaceId: string; userId: string | null }

const subscriptionsOf = (audience: Audience): SQL =>
  and(eq(notificationSubscriptions.workspaceId, audience.workspaceId), audience.userId ? eq(notificationSubscriptions.userId, audience.userId) : undefined)!

export const listSubscriptions = (db: Db, audience: Audience) =>
  db.select().from(notificationSubscriptions).where(subscriptionsOf(audience)).orderBy(notificationSubscriptions.createdAt)

/** A digest gathers e-mails; in-app notifications are read in a list and have nothing to gather. */
function checkDelivery(channel: NotificationChannel, delivery: NotificationDelivery) {
  if (delivery === 'daily' && channel !== 'email') throw invalid(['body', 'delivery'], 'A daily digest is for the email channel only')
}

export async function createSubscription(db: Db | Tx, workspaceId: string, userId: string, input: { events: string[]; channel: NotificationChannel; delivery?: NotificationDelivery }) {
  const delivery = input.delivery ?? 'instant'
  checkDelivery(input.channel, delivery)
  const [row] = await db.insert(notificationSubscriptions)
    .values({ id: newId('notificationSubscription'), workspaceId, userId, events: input.events, channel: input.channel, delivery })
    .onConflictDoNothing()
    .returning()
  if (!row) throw conflict(`You already have a ${delivery} ${input.channel} subscription here; change its events by deleting and re-creating it`)
  return row
}

/** What a new workspace's owner hears by default: each new post, in one e-mail a day. */
export const OWNER_DEFAULT_SUBSCRIPTION: { events: string[]; channel: NotificationChannel; delivery: NotificationDelivery } = { events: ['post.created'], channel: 'email', delivery: 'daily' }

export async function updateSubscription(db: Db, audience: Audience, id: string, change: { enabled?: boolean; delivery?: NotificationDelivery }) {
  if (change.delivery) {
    const [current] = await db.select({ channel: notificationSubscriptions.channel }).from(notificationSubscriptions).where(and(eq(notificationSubscriptions.id, id), subscriptionsOf(audience)))
    if (!current) throw notFound('Subscription')
    checkDelivery(current.channel, change.delivery)
  }
  try {
    const [row] = await db.update(notificationSubscriptions).set({ ...change, updatedAt: new Date() })
      .where(and(eq(notificationSubscriptions.id, id), subscriptionsOf(audience))).returning()
    if (!row) throw notFound('Subscription')
    return row
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`You already have a ${change.delivery} subscription on this channel`)
    throw error
  }
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
