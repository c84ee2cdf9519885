import type { SqlRunner } from '../db/sql-text.ts'
import type { OutboxEvent } from './outbox-event.ts'

/**
 * A consumer of outbox events (notifications, chat, post subscribers, ...; webhooks have a lane of their own). `fanOut` runs inside the
 * dispatcher's transaction, with the batch's events, and should only write its own durable work
 * rows (deliveries, notification rows), with SQL text (server/db/sql-text.ts: the worker loads no drizzle): slow I/O happens later, from those rows. If it throws, the
 * whole batch rolls back and is dispatched again, so it must be idempotent (insert ... on conflict do nothing).
 * `workspaceIds` are the batch's workspaces (`workspacesOf(events)`), worked out once per batch.
 */
export interface EventSubscriber {
  name: string
  fanOut(tx: SqlRunner, events: OutboxEvent[], workspaceIds: string[]): Promise<void>
}
