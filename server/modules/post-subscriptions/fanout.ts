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

/** An end user subscribed to a post by one of its events. */
interface Subscription { postId: string; endUserId: string; workspaceId: string; reason: SubscriptionReason }

/**
 * Subscribes end users to posts, in one statement for a run of events. An end user who unsubscribed keeps the
 * row (and stays unsubscribed) whatever they do next on the post. A pair the run names twice is written once
 * (PostgreSQL refuses to upsert one row twice in a statement), with the first reason unless 'author' is among
 * them: an author is also the post's first voter, and the two events of one create may carry ids of the same
 * millisecond in either order, so whichever comes first, the author's row says 'author' (and an existing
 * 'voter' row becomes 'author').
 */
function subscribeAll(tx: Tx, run: Subscription[]) {
  const pairs = new Map<string, Subscription>()
  for (const subscription of run) {
    const key = `${subscription.postId} ${subscription.endUserId}`
    const first = pairs.get(key)
    if (!first) pairs.set(key, subscription)
    else if (subscription.reason === 'author') pairs.set(key, { ...first, reason: 'author' })
  }
  const list = [...pairs.values()]
  // One pair (an event of a steady stream) as values: PostgreSQL keeps one plan for that statement, where the
  // arrays' one planned each time cost it twice as much (bench/fan-out.ts).
  const given = list.length === 1
    ? sql`(values (${list[0]!.postId}, ${list[0]!.endUserId}, ${list[0]!.workspaceId}, ${list[0]!.reason}))`
    : sql`unnest(${list.map((item) => item.postId)}::text[], ${list.map((item) => item.endUserId)}::text[], ${list.map((item) => item.workspaceId)}::text[],
      ${list.map((item) => item.reason)}::text[])`
  return tx.rows(sql`
    insert into post_subscriptions (post_id, end_user_id, workspace_id, reason)
    select u.post_id, u.end_user_id, u.workspace_id, u.reason from ${given} u(post_id, end_user_id, workspace_id, reason)
    -- Either may be gone by the time the event is dispatched; a foreign-key error would fail the whole batch.
    where exists (select 1 from posts where id = u.post_id) and exists (select 1 from end_users where id = u.end_user_id)
    on conflict (post_id, end_user_id) do update set reason = 'author'
      where excluded.reason = 'author' and post_subscriptions.reason = 'voter'`)
}

/**
 * One update per subscriber of `postId` who can hear it: an address that was confirmed (or an identified
 * end user, whose own product may tell them through `end_user.notified`), not unsubscribed, not bounced.
 * With `withPost`, the post's id and title are read from the post itself (a reply's event names only its id).
 */
function queueUpdates(tx: Tx, event: OutboxEvent, postId: string, kind: UpdateKind, data: Data, withPost = false) {
  const payload = withPost
    ? sql`${JSON.stringify(data)}::jsonb || jsonb_build_object('post', jsonb_build_object('id', p.id, 'title', p.title))`
    : sql`${JSON.stringify(data)}::jsonb`
  return tx.rows(sql`
    insert into subscriber_updates (event_id, end_user_id, workspace_id, post_id, kind, data)
    select ${event.id}, s.end_user_id, s.workspace_id, s.post_id, ${kind}, ${payload}
    from post_subscriptions s join end_users eu on eu.id = s.end_user_id join posts p on p.id = s.post_id
    where s.post_id = ${postId} and s.unsubscribed_at is null and eu.notifications_off_at is null
      and (eu.external_id is not null or (eu.email is not null and eu.verified_at is not null and eu.email_bounced_at is null))
    on conflict do nothing`)
}

const postRef = (post: Data | undefined) => ({ id: post?.id as string, title: post?.title as string })

/** What one event does: subscribes someone (gathered into runs, `subscribeAll`), or sends its own statements. */
type Step = { subscribe: Subscription } | { send: (tx: Tx) => Promise<unknown>[] } | null

function stepOf(event: OutboxEvent): Step {
  const data = event.data as Data
  const subscribe = (postId: string, endUserId: string, reason: SubscriptionReason): Step => ({ subscribe: { postId, endUserId, workspaceId: event.workspaceId, reason } })
  switch (event.type) {
    case 'post.created':
      return data.post?.author?.type === 'end_user' && data.post.author.id ? subscribe(data.post.id, data.post.author.id, 'author') : null
    case 'vote.created':
      return data.vote?.voter?.type === 'end_user' ? subscribe(data.vote.post_id, data.vote.voter.id, 'voter') : null
    case 'vote.deleted':
      // Taking a vote back stops what the vote subscribed to (an author or commenter stays subscribed).
      return data.vote?.voter?.type === 'end_user'
        ? { send: (tx) => [tx.rows(sql`delete from post_subscriptions where post_id = ${data.vote.post_id} and end_user_id = ${data.vote.voter.id} and reason = 'voter' and unsubscribed_at is null`)] }
        : null
    case 'comment.created': {
      const comment = data.comment as Data | undefined
      if (!comment || comment.internal) return null
      if (comment.author?.type === 'end_user' && comment.author.id) return subscribe(data.post_id, comment.author.id, 'commenter')
      if (comment.author?.type !== 'team') return null
      return { send: (tx) => [queueUpdates(tx, event, data.post_id, 'reply', { comment: { id: comment.id, body: comment.body, author: comment.author } }, true)] }
    }
    case 'status.changed':
      return { send: (tx) => [queueUpdates(tx, event, data.post.id, 'status', { post: postRef(data.post), from: data.from_status, to: data.to_status, message: data.message ?? null, author: data.author ?? null })] }
    case 'post.merged':
      // The source's subscribers follow the target from now on (keeping an unsubscribe), then hear of the merge.
      return {
        send: (tx) => [
          tx.rows(sql`
            insert into post_subscriptions (post_id, end_user_id, workspace_id, reason, unsubscribed_at)
            select ${data.into.id}, end_user_id, workspace_id, 'merged', unsubscribed_at from post_subscriptions
            where post_id = ${data.post.id} and exists (select 1 from posts where id = ${data.into.id})
            on conflict do nothing`),
          queueUpdates(tx, event, data.post.id, 'merged', { post: postRef(data.post), into: postRef(data.into) }),
        ],
      }
    default:
      return null
  }
}

/**
 * In event order: a vote subscribes before the status change that follows it in the same batch is queued. The
 * events' subscriptions between two other steps are one statement, and no statement waits for another's
 * answer: the batch's statements go out on the transaction's connection together (pipelined), and PostgreSQL
 * runs them in the order they were sent. A burst of 500 end users' posts and votes was 500 statements one after
 * the other (BENCHMARKS.md). All settle before the first failure rolls the batch back.
 */
export async function fanOutPostUpdates(tx: Tx, rows: OutboxEvent[]) {
  const sent: Promise<unknown>[] = []
  let run: Subscription[] = []
  const endRun = () => {
    if (run.length) sent.push(subscribeAll(tx, run))
    run = []
  }
  let thrown: { error: unknown } | undefined
  try {
    for (const event of rows) {
      const step = stepOf(event)
      if (!step) continue
      if ('subscribe' in step) run.push(step.subscribe)
      else {
        endRun()
        sent.push(...step.send(tx))
      }
    }
    endRun()
  } catch (error) {
    // An event missing what its kind must carry: what was sent is still awaited, so none of it rejects unheard.
    thrown = { error }
  }
  const failed = (await Promise.allSettled(sent)).find((result) => result.status === 'rejected')
  if (thrown) throw thrown.error
  if (failed) throw failed.reason
}

export const postSubscribersSubscriber: EventSubscriber = { name: 'post-subscribers', fanOut: fanOutPostUpdates }
