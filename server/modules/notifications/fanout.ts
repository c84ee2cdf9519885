// Notification rows fanned out from outbox events in the dispatcher's transaction, as SQL text: the
// background worker's fan-out loads no drizzle (server/db/sql-text.ts).
import { DEFAULT_DIGEST_HOUR } from '../../config.ts'
import { sql, type SqlRunner } from '../../db/sql-text.ts'
import { workspacesOf, type OutboxEvent } from '../../events/outbox-event.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'
import { newId } from '../../lib/ids.ts'
import { nextDigestAt } from './digest-time.ts'
import { notifyMentions } from './mentions.ts'
import { insertNotificationRows } from './rows.ts'

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

type Subscription = { id: string; workspace_id: string; user_id: string; events: string[]; channel: string; delivery: string }

/**
 * Notification events for every active member subscribed to each event's kind, written in the
 * dispatcher's transaction; e-mail ones wait in `pending` for the sender (notifications/mailer.ts), daily
 * ones until the next `digestHour` (UTC, NOTIFY_DIGEST_HOUR).
 */
export async function notifySubscribers(tx: SqlRunner, rows: OutboxEvent[], workspaceIds = workspacesOf(rows), digestHour = DEFAULT_DIGEST_HOUR) {
  if (!workspaceIds.length) return
  await notifyMentions(tx, rows)
  const subscriptions = await tx.rows<Subscription>(sql`
    select s.id, s.workspace_id, s.user_id, s.events, s.channel, s.delivery from notification_subscriptions s
    join members m on m.workspace_id = s.workspace_id and m.user_id = s.user_id and m.status = 'active'
    where s.workspace_id = any(${workspaceIds}::text[]) and s.enabled`)
  await insertNotificationRows(tx, rows.flatMap((event) => subscriptions
    .filter((subscription) => subscription.workspace_id === event.workspaceId && subscription.events.includes(event.type))
    .map((subscription) => ({
      id: newId('notificationEvent'),
      workspace_id: event.workspaceId,
      user_id: subscription.user_id,
      subscription_id: subscription.id,
      event_id: event.id,
      event_type: event.type,
      channel: subscription.channel,
      subject: describeEvent(event.type, event.data as Data),
      data: event.data,
      email_status: subscription.channel === 'email' ? ('pending' as const) : null,
      digest: subscription.delivery === 'daily',
    }))), nextDigestAt(new Date(), digestHour))
}

/** The notification fan-out, its daily digests at `digestHour` o'clock UTC (the worker passes NOTIFY_DIGEST_HOUR). */
export const notificationSubscriberAt = (digestHour: number): EventSubscriber => ({
  name: 'notifications',
  fanOut: (tx, rows, workspaceIds) => notifySubscribers(tx, rows, workspaceIds, digestHour),
})
