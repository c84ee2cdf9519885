import type { Sealer } from '../../lib/secrets.ts'
import { sql, type SqlRunner } from '../../db/sql-text.ts'
import type { OutboxEvent } from '../../events/outbox-event.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'
import { insertLeasedDeliveriesIn, type NewDeliveries } from './queue.ts'
import type { DeliveryJob } from './send.ts'

/** One delivery per enabled endpoint of the event's workspace that subscribed to its kind. */
async function deliveriesOf(tx: SqlRunner, rows: OutboxEvent[], workspaceIds: string[]): Promise<NewDeliveries> {
  const endpoints = await tx.rows<{ id: string; workspace_id: string; events: string[] }>(sql`
    select id, workspace_id, events from webhooks where workspace_id = any(${workspaceIds}::text[]) and enabled`)
  const deliveries: NewDeliveries = { webhookIds: [], eventIds: [] }
  for (const event of rows) {
    for (const endpoint of endpoints) {
      if (endpoint.workspace_id !== event.workspaceId || !endpoint.events.includes(event.type)) continue
      deliveries.webhookIds.push(endpoint.id)
      deliveries.eventIds.push(event.id)
    }
  }
  return deliveries
}

export const webhookSubscriber: EventSubscriber = {
  name: 'webhooks',
  async fanOut(tx, rows, workspaceIds) {
    const { webhookIds, eventIds } = await deliveriesOf(tx, rows, workspaceIds)
    // Two array parameters however many deliveries: a batch of 500 events is not 500 rows of parameters to build.
    if (eventIds.length) {
      await tx.rows(sql`insert into webhook_deliveries (webhook_id, event_id)
        select * from unnest(${webhookIds}::text[], ${eventIds}::text[]) on conflict do nothing`)
    }
  },
}

/**
 * The webhook fan-out of a delivery loop that claims in the same transaction (background/delivery-loop.ts):
 * the first `room()` new deliveries are inserted leased to `owner` and kept in `jobs`, ready to send once the
 * transaction commits; the rest wait in the queue for a claim. `room` is asked once the deliveries are known
 * (the loop's claim of due ones runs beside the take).
 */
export function leasingWebhookSubscriber(owner: number, room: () => Promise<number>, secrets: Sealer): EventSubscriber & { jobs: DeliveryJob[] } {
  const subscriber = {
    name: webhookSubscriber.name,
    jobs: [] as DeliveryJob[],
    async fanOut(tx: SqlRunner, rows: OutboxEvent[], workspaceIds: string[]) {
      const deliveries = await deliveriesOf(tx, rows, workspaceIds)
      if (deliveries.eventIds.length) subscriber.jobs = await insertLeasedDeliveriesIn(tx, owner, Math.max(0, await room()), deliveries, secrets)
    },
  }
  return subscriber
}
