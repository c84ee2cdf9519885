import type { Sealer } from '../../lib/secrets.ts'
import { sql, type SqlFragment, type SqlRunner } from '../../db/sql-text.ts'
import type { OutboxEvent } from '../../events/outbox-event.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'
import { insertLeasedDeliveriesIn } from './queue.ts'
import type { DeliveryJob } from './send.ts'

/**
 * The batch's deliveries as a query: one (`target` endpoint, `event`) pair per enabled endpoint of the event's
 * workspace subscribed to its kind, numbered (`n`) as the join yields them (which ones a loop leases first does not
 * matter: the rest wait in the queue for its next claim; sorting them cost more). The endpoints are matched in the
 * statement that inserts the deliveries: read first, they cost the fan-out transaction a round trip of their own.
 */
function deliveriesOf(rows: OutboxEvent[]): SqlFragment {
  return sql`select w.id as target, e.id as event, row_number() over () as n
    from unnest(${rows.map((row) => row.id)}::text[], ${rows.map((row) => row.workspaceId)}::text[], ${rows.map((row) => row.type)}::text[]) e(id, workspace_id, type)
    join webhooks w on w.workspace_id = e.workspace_id and w.enabled and w.events ? e.type`
}

export const webhookSubscriber: EventSubscriber = {
  name: 'webhooks',
  async fanOut(tx, rows) {
    // Three array parameters however many events: a batch of 500 is not 500 rows of parameters to build.
    await tx.rows(sql`insert into webhook_deliveries (webhook_id, event_id) select target, event from (${deliveriesOf(rows)}) k on conflict do nothing`)
  },
}

/**
 * The webhook fan-out of a delivery loop that claims in the same transaction (background/delivery-loop.ts):
 * the first `room()` new deliveries are inserted leased to `owner` and kept in `jobs`, ready to send once the
 * transaction commits; the rest wait in the queue for a claim. `room` is asked before the insert goes out (the
 * loop's claim of due ones runs beside the take, so it has answered by then).
 */
export function leasingWebhookSubscriber(owner: number, room: () => Promise<number>, secrets: Sealer): EventSubscriber & { jobs: DeliveryJob[] } {
  const subscriber = {
    name: webhookSubscriber.name,
    jobs: [] as DeliveryJob[],
    async fanOut(tx: SqlRunner, rows: OutboxEvent[]) {
      subscriber.jobs = await insertLeasedDeliveriesIn(tx, owner, Math.max(0, await room()), deliveriesOf(rows), secrets)
    },
  }
  return subscriber
}
