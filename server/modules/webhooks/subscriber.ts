import { and, eq, sql } from 'drizzle-orm'
import { anyOf } from '../../db/client.ts'
import { compiled } from '../../db/compiled.ts'
import { webhookDeliveries, webhooks } from '../../db/schema/index.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'

// Compiled: every batch the dispatcher takes runs it.
const enabledEndpoints = compiled('fanout_webhook_endpoints', (db) => db
  .select({ id: webhooks.id, workspaceId: webhooks.workspaceId, events: webhooks.events }).from(webhooks)
  .where(and(anyOf(webhooks.workspaceId, sql.placeholder('workspaceIds')), eq(webhooks.enabled, true))))

/** One pending delivery per enabled endpoint of the event's workspace that subscribed to its kind. */
export const webhookSubscriber: EventSubscriber = {
  name: 'webhooks',
  async fanOut(tx, rows, workspaceIds) {
    const endpoints = await enabledEndpoints(tx).execute({ workspaceIds })
    const jobs = rows.flatMap((event) => endpoints
      .filter((endpoint) => endpoint.workspaceId === event.workspaceId && endpoint.events.includes(event.type))
      .map((endpoint) => ({ webhookId: endpoint.id, eventId: event.id })))
    // Two array parameters however many deliveries: a batch of 500 events is not 500 rows of parameters to build.
    if (jobs.length) {
      await tx.execute(sql`insert into ${webhookDeliveries} (webhook_id, event_id)
        select * from unnest(${sql.param(jobs.map((job) => job.webhookId))}::text[], ${sql.param(jobs.map((job) => job.eventId))}::text[])
        on conflict do nothing`)
    }
  },
}
