// The notification rows the fan-out writes (fanout.ts for subscriptions, mentions.ts for @mentions).
import { sql, type SqlRunner } from '../../db/sql-text.ts'

/** A notification_events row as the fan-out writes it. */
export interface NotificationRow {
  id: string; workspace_id: string; user_id: string; subscription_id: string | null; event_id: string; event_type: string
  channel: string; subject: string; data: unknown; email_status: 'pending' | null; digest: boolean
}

/**
 * Writes notification rows in one statement (one JSON parameter however many), skipping any already there.
 * A daily-digest e-mail is written waiting: its lease (its "not before") a day out until the mailer schedules
 * it for its digest hour with the others of its batch (digest.ts `scheduleDigests`), so the e-mail queue's
 * claims never take it one by one. The day is only a bound: a row never scheduled is claimed then, and
 * scheduled on the spot.
 */
export async function insertNotificationRows(tx: SqlRunner, values: NotificationRow[]) {
  if (!values.length) return
  await tx.rows(sql`insert into notification_events (id, workspace_id, user_id, subscription_id, event_id, event_type, channel, subject, data, email_status, digest, email_lease_until)
    select id, workspace_id, user_id, subscription_id, event_id, event_type, channel, subject, data, email_status, digest,
      case when digest and email_status = 'pending' then now() + interval '1 day' end
    from jsonb_to_recordset(${JSON.stringify(values)}::jsonb) as v(id text, workspace_id text, user_id text, subscription_id text, event_id text,
      event_type text, channel text, subject text, data jsonb, email_status text, digest boolean)
    on conflict do nothing`)
}
