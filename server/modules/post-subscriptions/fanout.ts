// Who follows a post, and what they have to hear, worked out from the outbox in the dispatcher's
// transaction (events/dispatch.ts): authors, voters and public commenters are subscribed as their
// events pass, and a status change, a public team reply or a merge queues one `subscriber_updates` row
// per subscriber, which the sender (mail.ts) batches per end user. SQL text (server/db/sql-text.ts), set-based: a status change
// on a post with 10,000 subscribers is one INSERT ... SELECT.
import { sql, type SqlRunner } from '../../db/sql-text.ts'
import type { OutboxEvent } from '../../events/outbox-event.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'
import type { SubscriptionReason, UpdateKind } from '../../db/schema/index.ts'

type Tx = SqlRunner

type Data = Record<string, any>

function subscribe(tx: Tx, event: OutboxEvent, postId: string, endUserId: string, reason: SubscriptionReason) {
  // An end user who unsubscribed keeps the row (and stays unsubscribed) whatever they do next on the post.
  return tx.rows(sql`
    insert into post_subscriptions (post_id, end_user_id, workspace_id, reason)
    select ${postId}, ${endUserId}, ${event.workspaceId}, ${reason}
    -- Either may be gone by the time the event is dispatched; a foreign-key error would fail the whole batch.
    where exists (select 1 from posts where id = ${postId}) and exists (select 1 from end_users where id = ${endUserId})
    -- An author is also the post's first voter, and the two events of one create may carry ids of the same
    -- millisecond in either order: whichever comes first, the author's row says 'author'.
    on conflict (post_id, end_user_id) do update set reason = 'author'
      where excluded.reason = 'author' and post_subscriptions.reason = 'voter'`)
}

/**
 * One update per subscriber of `postId` who can hear it: an address that was confirmed (or an identified
 * end user, whose own product may tell them through `end_user.notified`), not unsubscribed, not bounced.
 */
function queueUpdates(tx: Tx, event: OutboxEvent, postId: string, kind: UpdateKind, data: Data) {
  return tx.rows(sql`
    insert into subscriber_updates (event_id, end_user_id, workspace_id, post_id, kind, data)
    select ${event.id}, s.end_user_id, s.workspace_id, s.post_id, ${kind}, ${JSON.stringify(data)}::jsonb
    from post_subscriptions s join end_users eu on eu.id = s.end_user_id
    where s.post_id = ${postId} and s.unsubscribed_at is null and eu.notifications_off_at is null
      and (eu.external_id is not null or (eu.email is not null and eu.verified_at is not null and eu.email_bounced_at is null))
    on conflict do nothing`)
}

const postRef = (post: Data | undefined) => ({ id: post?.id as string, title: post?.title as string })

async function fanOutOne(tx: Tx, event: OutboxEvent) {
  const data = event.data as Data
  switch (event.type) {
    case 'post.created':
      if (data.post?.author?.type === 'end_user' && data.post.author.id) await subscribe(tx, event, data.post.id, data.post.author.id, 'author')
      return
    case 'vote.created':
      if (data.vote?.voter?.type === 'end_user') await subscribe(tx, event, data.vote.post_id, data.vote.voter.id, 'voter')
      return
    case 'vote.deleted':
      // Taking a vote back stops what the vote subscribed to (an author or commenter stays subscribed).
      if (data.vote?.voter?.type === 'end_user') {
        await tx.rows(sql`delete from post_subscriptions where post_id = ${data.vote.post_id} and end_user_id = ${data.vote.voter.id} and reason = 'voter' and unsubscribed_at is null`)
      }
      return
    case 'comment.created': {
      const comment = data.comment as Data | undefined
      if (!comment || comment.internal) return
      if (comment.author?.type === 'end_user' && comment.author.id) return void await subscribe(tx, event, data.post_id, comment.author.id, 'commenter')
      if (comment.author?.type !== 'team') return
      const [post] = await tx.rows<Data>(sql`select id, title from posts where id = ${data.post_id}`)
      if (!post) return
      await queueUpdates(tx, event, data.post_id, 'reply', { post: postRef(post), comment: { id: comment.id, body: comment.body, author: comment.author } })
      return
    }
    case 'status.changed':
      await queueUpdates(tx, event, data.post.id, 'status', { post: postRef(data.post), from: data.from_status, to: data.to_status, message: data.message ?? null, author: data.author ?? null })
      return
    case 'post.merged': {
      // The source's subscribers follow the target from now on (keeping an unsubscribe), then hear of the merge.
      await tx.rows(sql`
        insert into post_subscriptions (post_id, end_user_id, workspace_id, reason, unsubscribed_at)
        select ${data.into.id}, end_user_id, workspace_id, 'merged', unsubscribed_at from post_subscriptions
        where post_id = ${data.post.id} and exists (select 1 from posts where id = ${data.into.id})
        on conflict do nothing`)
      await queueUpdates(tx, event, data.post.id, 'merged', { post: postRef(data.post), into: postRef(data.into) })
    }
  }
}

/** In event order: a vote subscribes before the status change that follows it in the same batch is queued. */
export async function fanOutPostUpdates(tx: Tx, rows: OutboxEvent[]) {
  for (const event of rows) await fanOutOne(tx, event)
}

export const postSubscribersSubscriber: EventSubscriber = { name: 'post-subscribers', fanOut: fanOutPostUpdates }
