// Chat as an outbox subscriber: each event, in the dispatcher's transaction, becomes one job per matching
// channel mapping of an active chat connection (sending them is delivery.ts). SQL text, so the background
// worker's fan-out loads no drizzle (server/db/sql-text.ts).
import { sql } from '../../db/sql-text.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'

type Data = Record<string, any>

/** The board an event belongs to: on the post it carries, else on the post it names. */
const boardOfEvent = (data: Data, boardsByPost: Map<string, string>) =>
  (data.post?.board_id as string | undefined) ?? boardsByPost.get(String(data.post_id ?? ''))

/** Chat as an outbox subscriber (server/events/subscribers.ts). */
export const chatSubscriber: EventSubscriber = {
  name: 'chat',
  async fanOut(tx, rows, workspaceIds) {
    if (!workspaceIds.length) return
    const mappings = await tx.rows<{ id: string; workspace_id: string; board_id: string | null; events: string[] }>(sql`
      select m.id, m.workspace_id, m.board_id, m.events from chat_channel_mappings m
      join integrations i on i.id = m.integration_id and i.status = 'active'
      where m.workspace_id = any(${workspaceIds}::text[])`)
    if (!mappings.length) return
    const postIds = [...new Set(rows.map((row) => (row.data as Data).post?.board_id ? undefined : (row.data as Data).post_id).filter((id): id is string => typeof id === 'string'))]
    const boardsByPost = new Map(postIds.length
      ? (await tx.rows<{ id: string; board_id: string }>(sql`select id, board_id from posts where id = any(${postIds}::text[])`)).map((row) => [row.id, row.board_id])
      : [])
    const jobs = rows.flatMap((event) => mappings
      .filter((mapping) => mapping.workspace_id === event.workspaceId && mapping.events.includes(event.type)
        && (mapping.board_id === null || mapping.board_id === boardOfEvent(event.data as Data, boardsByPost)))
      .map((mapping) => ({ mappingId: mapping.id, eventId: event.id })))
    if (jobs.length) {
      await tx.rows(sql`insert into chat_deliveries (mapping_id, event_id)
        select * from unnest(${jobs.map((job) => job.mappingId)}::text[], ${jobs.map((job) => job.eventId)}::text[])
        on conflict do nothing`)
    }
  },
}
