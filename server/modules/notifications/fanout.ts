import { and, eq, sql } from 'drizzle-orm'
import { anyOf, type Db, type Tx } from '../../db/client.ts'
import { compiled } from '../../db/compiled.ts'
import { members, notificationEvents, notificationSubscriptions } from '../../db/schema/index.ts'
import { workspacesOf, type OutboxEvent } from '../../events/outbox.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'
import { newId } from '../../lib/ids.ts'
import { notifyMentions } from './mentions.ts'

type Data = Record<string, any>

/** One line a person reads in a list or an e-mail subject. */
export function describeEvent(type: string, data: Data): string {
  const title = data.post?.title ?? data.into?.title
  switch (type) {
    case 'post.created': return `New post: ${title}`
    case 'post.updated': return `Post updated: ${title}`
    case 'post.deleted': return `Post deleted: ${title}`
    case 'post.merged': return `Post merged: ${data.post?.title} → ${data.into?.title}`
    case 'status.changed': return `Status changed: ${title} (${data.from_status} → ${data.to_status})`
    case 'comment.created': return `New comment: ${String(data.comment?.body ?? '').slice(0, 80)}`
    case 'comment.deleted': return 'Comment deleted'
    case 'vote.created': return `New vote (${data.votes} in total)`
    case 'vote.deleted': return `Vote removed (${data.votes} in total)`
    case 'changelog.published': return `Changelog published: ${data.entry?.title}`
    default: return type
  }
}

// Compiled: every batch the dispatcher takes runs it.
const activeSubscriptions = compiled('fanout_notification_subscriptions', (db) => db
  .select({ subscription: notificationSubscriptions })
  .from(notificationSubscriptions)
  .innerJoin(members, and(eq(members.workspaceId, notificationSubscriptions.workspaceId), eq(members.userId, notificationSubscriptions.userId), eq(members.status, 'active')))
  .where(and(anyOf(notificationSubscriptions.workspaceId, sql.placeholder('workspaceIds')), eq(notificationSubscriptions.enabled, true))))

/**
 * Notification events for every active member subscribed to each event's kind, written in the
 * dispatcher's transaction; e-mail ones wait in `pending` for the sender (notifications/mailer.ts).
 */
export async function notifySubscribers(tx: Db | Tx, rows: OutboxEvent[], workspaceIds = workspacesOf(rows)) {
  if (!workspaceIds.length) return
  await notifyMentions(tx, rows)
  const subscriptions = await activeSubscriptions(tx).execute({ workspaceIds })
  const values = rows.flatMap((event) => subscriptions
    .filter(({ subscription }) => subscription.workspaceId === event.workspaceId && subscription.events.includes(event.type))
    .map(({ subscription }) => ({
      id: newId('notificationEvent'),
      workspaceId: event.workspaceId,
      userId: subscription.userId,
      subscriptionId: subscription.id,
      eventId: event.id,
      eventType: event.type,
      channel: subscription.channel,
      subject: describeEvent(event.type, event.data as Data),
      data: event.data,
      emailStatus: subscription.channel === 'email' ? ('pending' as const) : null,
      digest: subscription.delivery === 'daily',
    })))
  if (values.length) await tx.insert(notificationEvents).values(values).onConflictDoNothing()
}

export const notificationSubscriber: EventSubscriber = { name: 'notifications', fanOut: notifySubscribers }
