import { sql } from '../../db/sql-text.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'

/** One pending delivery per enabled endpoint of the event's workspace that subscribed to its kind. */
export const webhookSubscriber: EventSubscriber = {
  name: 'webhooks',
  async fanOut(tx, rows, workspaceIds) {
    const endpoints = await tx.rows<{ id: string; workspace_id: string; events: string[] }>(sql`
      select id, workspace_id, events from webhooks where workspace_id = any(${workspaceIds}::text[]) and enabled`)
    const jobs = rows.flatMap((event) => endpoints
      .filter((endpoint) => endpoint.workspace_id === event.workspaceId && endpoint.events.includes(event.type))
      .map((endpoint) => ({ webhookId: endpoint.id, eventId: event.id })))
    // Two array parameters however many deliveries: a batch of 500 events is not 500 rows of parameters to build.
    if (jobs.length) {
      await tx.rows(sql`insert into webhook_deliveries (webhook_id, event_id)
        select * from unnest(${jobs.map((job) => job.webhookId)}::text[], ${jobs.map((job) => job.eventId)}::text[])
        on conflict do nothing`)
    }
  },
}
