// The notification rows the fan-out writes (fanout.ts for subscriptions, mentions.ts for @mentions).
import { sql, type SqlRunner } from '../../db/sql-text.ts'

/** A notification_events row as the fan-out writes it. */
export interface NotificationRow {
  id: string; workspace_id: string; user_id: string; subscription_id: string | null; event_id: string; event_type: string
  channel: string; subject: string; data: unknown; email_status: 'pending' | null; digest: boolean
}

/**
 * Writes notification rows in one statement (one JSON parameter however many), skipping any already there.
 * A daily-digest e-mail is written scheduled for `digestAt` (its digest hour: `digest_at`, and its lease, its
 * "not before"), so the e-mail queue never claims it before then and no later statement rewrites it. Its
 * insert wakes no mailer (migration 0065): there is nothing to send until that hour. Without `digestAt`
 * it is written as before 0065, waiting a day for the mailer to schedule it (digest.ts `scheduleDigests`).
 */
export async function insertNotificationRows(tx: SqlRunner, values: NotificationRow[], digestAt?: Date) {
  if (!values.length) return
  const scheduled = digestAt?.toISOString() ?? null
  await tx.rows(sql`insert into notification_events (id, workspace_id, user_id, subscription_id, event_id, event_type, channel, subject, data, email_status, digest, digest_at, email_lease_until)
    select id, workspace_id, user_id, subscription_id, event_id, event_type, channel, subject, data, email_status, digest,
      case when digest and email_status = 'pending' then ${scheduled}::timestamptz end,
      case when digest and email_status = 'pending' then coalesce(${scheduled}::timestamptz, now() + interval '1 day') end
    from jsonb_to_recordset(${JSON.stringify(values)}::jsonb) as v(id text, workspace_id text, user_id text, subscription_id text, event_id text,
      event_type text, channel text, subject text, data jsonb, email_status text, digest boolean)
    on conflict do nothing`)
}
