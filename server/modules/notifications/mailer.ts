// Sends pending e-mail notifications through the mail module (ctx.mail), as a queue of the background
// mailer (server/background/mailer.ts), woken by the NOTIFY of each new notification. Claims are leases
// (`email_lease_until`), so several processes can send side by side and a crash means a resend, never a loss.
import { eq, inArray, sql } from 'drizzle-orm'
import type { BackgroundContext } from '../../background/context.ts'
import type { MailQueue } from '../../background/mailer.ts'
import { notificationEvents, users, workspaces } from '../../db/schema/index.ts'
import { AUTOMATIC_MAIL_HEADERS, intakeAddress, notificationMessageId } from '../inbound-email/addresses.ts'
import { MailNotStarted, withWorkspaceLogo } from '../../lib/mail.ts'
import { fileUrl } from '../files/url.ts'
import { sendersFor, type Sender } from '../sending-domain/service.ts'
import { describeError } from '../../db/errors.ts'
import { claimOldestPending, giveBackUntried, msUntilPending, sendDeadline } from '../../db/leased-queue.ts'
import { NOTIFICATION_MAIL_QUEUE } from './mail-queue.ts'
import { handleDigestRows, scheduleDigests } from './digest.ts'

const MAX_ATTEMPTS = 5

/** Leases up to `limit` due e-mails and reads what sending them needs (server/db/work.ts `claimOldestPending`). */
function claim(ctx: BackgroundContext, limit: number) {
  return claimOldestPending(ctx.db, NOTIFICATION_MAIL_QUEUE, limit, (tx, claimed: { id: string }[]) => tx
    .select({ event: notificationEvents, email: users.email, workspaceName: workspaces.name, workspaceSlug: workspaces.slug, intakeToken: workspaces.emailIntakeToken, logoFileId: workspaces.logoFileId })
    .from(notificationEvents)
    .innerJoin(users, eq(users.id, notificationEvents.userId))
    .innerJoin(workspaces, eq(workspaces.id, notificationEvents.workspaceId))
    .where(inArray(notificationEvents.id, claimed.map((row) => row.id))))
}

type Claimed = Awaited<ReturnType<typeof claim>>[number]

/** Sends one e-mail; true when it went, false when it was rescheduled (backed off, or untried) or given up. */
async function sendOne(ctx: BackgroundContext, row: Claimed, sender: Sender, startBy: number): Promise<boolean> {
  const { event } = row
  try {
    await ctx.mail.send(withWorkspaceLogo({
      to: row.email,
      subject: `[${row.workspaceName}] ${event.subject}`,
      text: `${event.subject}\n\nEvent: ${event.eventType}\nWorkspace: ${row.workspaceName}\n\nReply to this e-mail to comment on the post.\nManage your notifications: ${ctx.config.dashboardUrl}\n`,
      ...(sender ?? {}),
      workspaceId: event.workspaceId,
      // Replies come back through the workspace's intake address and are threaded by this id.
      messageId: notificationMessageId(event.id, ctx.config.inboundEmailDomain),
      replyTo: intakeAddress(row.intakeToken, ctx.config.inboundEmailDomain),
      headers: AUTOMATIC_MAIL_HEADERS,
    }, { name: row.workspaceName, logoUrl: fileUrl(ctx.config.baseUrl, row.logoFileId) }), { startBy })
    return true
  } catch (error) {
    if (error instanceof MailNotStarted) {
      await giveBackUntried(ctx.db, NOTIFICATION_MAIL_QUEUE, eq(notificationEvents.id, event.id))
      return false
    }
    const failed = event.emailAttempts >= MAX_ATTEMPTS
    ctx.log.warn('notification e-mail not sent', { id: event.id, attempt: event.emailAttempts, error: describeError(error) })
    // Backs off 30 s, 1 min, 2 min, ... by pushing the lease (also "not before") out.
    await ctx.db.update(notificationEvents)
      .set(failed ? { emailStatus: 'failed', emailLeaseUntil: null } : { emailLeaseUntil: sql`now() + ${`${30 * 2 ** (event.emailAttempts - 1)} seconds`}::interval` })
      .where(eq(notificationEvents.id, event.id))
    return false
  }
}

/** Sends a batch's immediate e-mails (one sender-domain read per workspace) and marks those sent in one statement. */
async function sendImmediate(ctx: BackgroundContext, rows: Claimed[], startBy: number) {
  if (!rows.length) return
  const senders = await sendersFor(ctx.db, ctx.secrets, rows.map((row) => ({ id: row.event.workspaceId, name: row.workspaceName })))
  const went = await Promise.all(rows.map((row) => sendOne(ctx, row, senders.get(row.event.workspaceId) ?? null, startBy)))
  const sent = rows.filter((_, at) => went[at]).map((row) => row.event.id)
  // A crash before this line sends the batch again once its lease lapses (at-least-once).
  if (sent.length) await ctx.db.update(notificationEvents).set({ emailStatus: 'sent', sentAt: sql`now()`, emailLeaseUntil: null }).where(inArray(notificationEvents.id, sent))
}

/** Notification e-mail as a queue of the background mailer: new digest rows scheduled, then up to 20 due e-mails a batch (digest rows to digest.ts). */
export const notificationMail: MailQueue = {
  name: 'notifications',
  tables: ['notification_events'],
  async send(ctx) {
    const scheduled = await scheduleDigests(ctx)
    const startBy = sendDeadline(NOTIFICATION_MAIL_QUEUE.leaseSeconds, ctx.config.smtpSendTimeoutSeconds)
    const batch = await claim(ctx, 20)
    await Promise.all([
      sendImmediate(ctx, batch.filter((row) => !row.event.digest), startBy),
      handleDigestRows(ctx, batch.filter((row) => row.event.digest), startBy),
    ])
    return scheduled + batch.length
  },
  msUntilDue: (ctx) => msUntilPending(ctx.db, NOTIFICATION_MAIL_QUEUE),
}
