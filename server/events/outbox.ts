// The outbox: every change writes its event here in its own transaction; a trigger queues it in
// `event_dispatch`, and the dispatcher (dispatch.ts) hands it to every subscriber (subscribers.ts), and in
// `webhook_dispatch` when an endpoint hears it, for the webhook lane (modules/webhooks/queue.ts).
import { sql } from 'drizzle-orm'
import type { Db, Tx } from '../db/client.ts'
import { compiled } from '../db/compiled.ts'
import { events } from '../db/schema/index.ts'
import { newId } from '../lib/ids.ts'

export const EVENT_TYPES = [
  'post.created', 'post.updated', 'post.deleted', 'post.merged', 'status.changed',
  'comment.created', 'comment.deleted', 'vote.created', 'vote.deleted', 'changelog.published', 'score.changed',
  'end_user.notified', 'post.duplicate_suggested', 'end_user.erased',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

export { workspacesOf, type OutboxEvent } from './outbox-event.ts'

const insertEvent = compiled('insert_event', (db) =>
  db.insert(events).values({ id: sql.placeholder('id'), workspaceId: sql.placeholder('workspaceId'), type: sql.placeholder('type'), data: sql.placeholder('data') }))

/**
 * Writes an event to the outbox. Call it with the transaction of the change it describes, so a
 * rolled-back change leaves no event and a committed one always has its event (at-least-once delivery).
 */
export async function recordEvent(tx: Db | Tx, workspaceId: string, type: EventType, data: Record<string, unknown>) {
  const id = newId('event')
  await insertEvent(tx).execute({ id, workspaceId, type, data })
  return id
}

/** Several events of one change in one statement (a bulk change): the same rows recordEvent would write, in order. */
export async function recordEvents(tx: Db | Tx, workspaceId: string, list: { type: EventType; data: Record<string, unknown> }[]) {
  if (list.length === 0) return
  await tx.insert(events).values(list.map((event) => ({ id: newId('event'), workspaceId, type: event.type, data: event.data })))
}
