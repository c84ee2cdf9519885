// Fan-out of queued outbox events to every subscriber, in one transaction per batch: the queue rows
// are taken FOR UPDATE SKIP LOCKED and deleted in the same transaction, so any number of dispatchers
// (one per process) run side by side and each event is fanned out once. The loop that calls it runs in the
// background worker (server/background/dispatcher.ts); webhooks take their events from a queue of their own.
import { sql, type SqlRunner } from '../db/sql-text.ts'
import { CACHED_PLANS, queueTransaction } from '../db/work.ts'
import { workspacesOf, type OutboxEvent } from './outbox-event.ts'
import type { EventSubscriber } from './subscriber.ts'
import { SUBSCRIBERS } from './subscribers.ts'

/**
 * One statement takes up to `limit` queued events off the queue and reads them: the queue rows are
 * locked (skipping those another dispatcher holds) and deleted, and the events come back oldest first.
 * The delete commits with the fan-out or rolls back with it. The locked rows are deleted by their row
 * address and the events read by `= any(array(...))`, which no plan can turn into a scan: written as
 * `in (subquery)`, a burst of 30,000 queued events made the planner hash-join the whole queue and all of
 * `events` for each batch of 500 (11 ms, growing with every event ever recorded).
 */
const takeQueued = (limit: number) => sql`
  with taken as (
    delete from event_dispatch where ctid = any(array(select ctid from event_dispatch order by event_id limit ${limit} for update skip locked))
    returning event_id)
  select id, workspace_id as "workspaceId", type, data, created_at as "createdAt" from events
  where id = any(array(select event_id from taken)) order by id`

/** Hands up to `limit` queued events to every subscriber; returns how many were dispatched. */
export function dispatchEvents(db: SqlRunner, limit = 500, subscribers: readonly EventSubscriber[] = SUBSCRIBERS): Promise<number> {
  return queueTransaction(db, async (tx) => {
    // A queue row always has its event (the queue references events on delete cascade). The take is planned
    // for the queue's size today; the subscribers' statements after it read no queue and keep their plans
    // (the setting goes out behind the take, pipelined).
    const [rows] = await Promise.all([tx.rows<OutboxEvent>(takeQueued(limit)), tx.rows(CACHED_PLANS)])
    if (!rows.length) return 0
    const workspaceIds = workspacesOf(rows)
    // Each subscriber writes its own tables: their statements go out side by side on the transaction's
    // connection (pipelined), one round trip for all instead of one each. All settle before the first
    // failure rolls the batch back.
    const failed = (await Promise.allSettled(subscribers.map((subscriber) => subscriber.fanOut(tx, rows, workspaceIds)))).find((result) => result.status === 'rejected')
    if (failed) throw failed.reason
    return rows.length
  })
}
