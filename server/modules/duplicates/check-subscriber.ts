// Duplicate checks as an outbox subscriber: every `post.created` queues a `duplicate_checks` row in the
// dispatcher's transaction (SQL text: the worker's fan-out loads no drizzle); queue.ts works them off.
import { sql } from '../../db/sql-text.ts'
import type { EventSubscriber } from '../../events/subscriber.ts'

export const duplicateCheckSubscriber: EventSubscriber = {
  name: 'duplicate-checks',
  async fanOut(tx, events) {
    const created = events.filter((event) => event.type === 'post.created').map((event) => (event.data as { post?: { id?: string } }).post?.id).filter((id): id is string => !!id)
    if (!created.length) return
    // The post may be gone by dispatch time; a foreign-key error would fail the whole batch.
    await tx.rows(sql`insert into duplicate_checks (post_id, workspace_id)
      select p.id, p.workspace_id from posts p where p.id = any(${created}::text[]) and p.merged_into_id is null
      on conflict do nothing`)
  },
}
