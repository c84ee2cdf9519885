// Members' daily digests. A digest row (a `daily` subscription's notification) is written scheduled for
// the next NOTIFY_DIGEST_HOUR (rows.ts: `digest_at` and its lease, also its "not before") and claimed by
// the notification mailer like any other once that time comes: the member's due rows of the workspace go
// out as one e-mail and are marked sent together. A row written unscheduled (by a process older than
// migration 0065, during a rolling upgrade) is scheduled here the first time the mailer sees it.
import { and, eq, inArray, isNotNull, lte, sql } from 'drizzle-orm'
import type { BackgroundContext } from '../../background/context.ts'
import { rowsOf } from '../../db/client.ts'
import { notificationEvents } from '../../db/schema/index.ts'
import { describeError } from '../../db/errors.ts'
import { giveBackUntried } from '../../db/leased-queue.ts'
import { MailNotStarted, withWorkspaceLogo } from '../../lib/mail.ts'
import { postPath } from '../dashboard/links.ts'
import { fileUrl } from '../files/url.ts'
import { AUTOMATIC_MAIL_HEADERS } from '../inbound-email/addresses.ts'
import { senderFor } from '../sending-domain/service.ts'
import { nextDigestAt } from './digest-time.ts'
import { NOTIFICATION_MAIL_QUEUE } from './mail-queue.ts'

type NotificationEvent = typeof notificationEvents.$inferSelect
export interface DigestRow {
  event: NotificationEvent
  email: string
  workspaceName: string
  workspaceSlug: string
  logoFileId: string | null
}


/** Digest rows scheduled per statement; a larger burst is scheduled by the mailer's next rounds. */
const SCHEDULE_BATCH = 1000

/**
 * Schedules the daily-digest rows written unscheduled since the last round (only an older process writes
 * them so: rows.ts schedules its own) for the next digest hour, in one statement; returns how many. More than one digest a day would not be a digest: a
 * member's later rows of the day join the scheduled one.
 */
export async function scheduleDigests(ctx: BackgroundContext): Promise<number> {
  const at = nextDigestAt(new Date(), ctx.config.notifyDigestHour).toISOString()
  return rowsOf(await ctx.db.execute(sql`
    update notification_events set digest_at = ${at}::timestamptz, email_lease_until = ${at}::timestamptz
    where ctid = any(array(select ctid from notification_events where email_status = 'pending' and digest and digest_at is null
      order by created_at limit ${SCHEDULE_BATCH} for update skip locked))
    returning id`)).length
}

/** A digest row claimed before it was scheduled (its provisional day ran out first) is scheduled as `scheduleDigests` would. */
async function schedule(ctx: BackgroundContext, rows: DigestRow[]) {
  if (!rows.length) return
  const at = nextDigestAt(new Date(), ctx.config.notifyDigestHour)
  await ctx.db.update(notificationEvents).set({ digestAt: at, emailLeaseUntil: at, emailAttempts: 0 })
    .where(inArray(notificationEvents.id, rows.map((row) => row.event.id)))
}

/** Leases the member's other due digest rows of the workspace that this claim did not take (another batch's share of the same digest). */
async function sweepRest(ctx: BackgroundContext, first: DigestRow, taken: string[]): Promise<NotificationEvent[]> {
  const ids = rowsOf<{ id: string }>(await ctx.db.execute(sql`
    update notification_events set email_lease_until = now() + interval '60 seconds', email_attempts = email_attempts + 1
    where ctid = any(array(
      select ctid from notification_events
      where user_id = ${first.event.userId} and workspace_id = ${first.event.workspaceId} and digest and email_status = 'pending'
        and digest_at <= now() and (email_lease_until is null or email_lease_until < now()) and id not in ${taken}
      for update skip locked))
    returning id`)).map((row) => row.id)
  if (!ids.length) return []
  return ctx.db.select().from(notificationEvents)
    .where(and(inArray(notificationEvents.id, ids), eq(notificationEvents.digest, true), isNotNull(notificationEvents.digestAt), lte(notificationEvents.digestAt, sql`now()`)))
}

function digestText(ctx: BackgroundContext, first: DigestRow, events: NotificationEvent[]) {
  const lines = events.map((event) => {
    const postId = (event.data as { post?: { id?: string } }).post?.id
    return `- ${event.subject}${postId ? `\n  ${ctx.config.dashboardUrl}${postPath(first.workspaceSlug, postId)}` : ''}`
  })
  return `Since your last digest in ${first.workspaceName}:\n\n${lines.join('\n')}\n\nYou get this once a day. Change it (or have each one at once) in your notification settings: ${ctx.config.dashboardUrl}\n`
}

async function sendDigest(ctx: BackgroundContext, group: DigestRow[], startBy: number) {
  const first = group[0]!
  const rest = await sweepRest(ctx, first, group.map((row) => row.event.id))
  const events = [...group.map((row) => row.event), ...rest]
    // Oldest first: one dispatch writes a batch's rows with one created_at, and event ids grow with time.
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.eventId.localeCompare(b.eventId))
  const ids = events.map((event) => event.id)
  const newPosts = events.filter((event) => event.eventType === 'post.created').length
  const subject = newPosts === events.length ? `${newPosts} new ${newPosts === 1 ? 'post' : 'posts'}` : `${events.length} updates`
  try {
    const sender = await senderFor(ctx.db, ctx.secrets, first.event.workspaceId, first.workspaceName)
    await ctx.mail.send(withWorkspaceLogo({
      to: first.email,
      subject: `[${first.workspaceName}] Your daily digest: ${subject}`,
      text: digestText(ctx, first, events),
      ...(sender ?? {}),
      workspaceId: first.event.workspaceId,
      headers: AUTOMATIC_MAIL_HEADERS,
    }, { name: first.workspaceName, logoUrl: fileUrl(ctx.config.baseUrl, first.logoFileId) }), { startBy })
    await ctx.db.update(notificationEvents).set({ emailStatus: 'sent', sentAt: sql`now()`, emailLeaseUntil: null }).where(inArray(notificationEvents.id, ids))
  } catch (error) {
    if (error instanceof MailNotStarted) return giveBackUntried(ctx.db, NOTIFICATION_MAIL_QUEUE, inArray(notificationEvents.id, ids))
    const attempts = Math.max(...events.map((event) => event.emailAttempts))
    ctx.log.warn('digest e-mail not sent', { user: first.event.userId, attempt: attempts, error: describeError(error) })
    await ctx.db.update(notificationEvents)
      .set(attempts >= 5 ? { emailStatus: 'failed', emailLeaseUntil: null } : { emailLeaseUntil: sql`now() + ${`${30 * 2 ** (attempts - 1)} seconds`}::interval` })
      .where(inArray(notificationEvents.id, ids))
  }
}

/** Schedules the claimed digest rows seen for the first time, and sends one e-mail per member and workspace for the due ones. */
export async function handleDigestRows(ctx: BackgroundContext, rows: DigestRow[], startBy: number) {
  const due = rows.filter((row) => row.event.digestAt !== null)
  await schedule(ctx, rows.filter((row) => row.event.digestAt === null))
  const groups = new Map<string, DigestRow[]>()
  for (const row of due) {
    const key = `${row.event.workspaceId}:${row.event.userId}`
    groups.set(key, [...(groups.get(key) ?? []), row])
  }
  await Promise.all([...groups.values()].map((group) => sendDigest(ctx, group, startBy)))
}
