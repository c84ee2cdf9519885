// Sends pending e-mail notifications through the mail module (ctx.mail), from the main thread, which
// is where the mailer lives; woken by the NOTIFY of each new notification or changelog e-mail. Claims are leases (`email_lease_until`), so several processes can send
// side by side and a crash means a resend, never a loss.
import { eq, inArray, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { rowsOf } from '../../db/client.ts'
import { notificationEvents, users, workspaces } from '../../db/schema/index.ts'
import { AUTOMATIC_MAIL_HEADERS, intakeAddress, notificationMessageId } from '../inbound-email/addresses.ts'
import { withWorkspaceLogo } from '../../lib/mail.ts'
import { fileUrl } from '../files/model.ts'
import { senderFor } from '../sending-domain/service.ts'
import { describeError } from '../../db/errors.ts'
import { sendChangelogMail } from '../changelog/mail.ts'
import { msUntilSubscriberMailDue, sendSubscriberMail } from '../post-subscriptions/mail.ts'
import { IDLE_BACKSTOP_MS, claimOldestPending, wakeOnWork, type LeasedQueue } from '../../db/work.ts'

const MAX_ATTEMPTS = 5
export const NOTIFICATION_MAIL_QUEUE: LeasedQueue = { table: 'notification_events', status: 'email_status', leaseUntil: 'email_lease_until', attempts: 'email_attempts', returning: ['id'], leaseSeconds: 60 }

/** Leases up to `limit` due e-mails and reads what sending them needs (server/db/work.ts `claimOldestPending`). */
function claim(ctx: AppContext, limit: number) {
  return claimOldestPending(ctx.db, NOTIFICATION_MAIL_QUEUE, limit, (tx, claimed: { id: string }[]) => tx
    .select({ event: notificationEvents, email: users.email, workspaceName: workspaces.name, intakeToken: workspaces.emailIntakeToken, logoFileId: workspaces.logoFileId })
    .from(notificationEvents)
    .innerJoin(users, eq(users.id, notificationEvents.userId))
    .innerJoin(workspaces, eq(workspaces.id, notificationEvents.workspaceId))
    .where(inArray(notificationEvents.id, claimed.map((row) => row.id))))
}

async function sendOne(ctx: AppContext, row: Awaited<ReturnType<typeof claim>>[number]) {
  const { event } = row
  try {
    const sender = await senderFor(ctx.db, ctx.secrets, event.workspaceId, row.workspaceName)
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
    }, { name: row.workspaceName, logoUrl: fileUrl(ctx.config.baseUrl, row.logoFileId) }))
    await ctx.db.update(notificationEvents).set({ emailStatus: 'sent', sentAt: sql`now()`, emailLeaseUntil: null }).where(eq(notificationEvents.id, event.id))
  } catch (error) {
    const failed = event.emailAttempts >= MAX_ATTEMPTS
    ctx.log.warn('notification e-mail not sent', { id: event.id, attempt: event.emailAttempts, error: describeError(error) })
    // Backs off 30 s, 1 min, 2 min, ... by pushing the lease (also "not before") out.
    await ctx.db.update(notificationEvents)
      .set(failed ? { emailStatus: 'failed', emailLeaseUntil: null } : { emailLeaseUntil: sql`now() + ${`${30 * 2 ** (event.emailAttempts - 1)} seconds`}::interval` })
      .where(eq(notificationEvents.id, event.id))
  }
}

/** Milliseconds until a pending e-mail (notification or changelog) may be tried again, or null when none waits. */
async function msUntilMailDue(ctx: AppContext): Promise<number | null> {
  const [row] = rowsOf<{ ms: number | null }>(await ctx.db.execute(sql`
    select (extract(epoch from least(
      (select min(coalesce(email_lease_until, created_at)) from notification_events where email_status = 'pending'),
      (select min(coalesce(lease_until, created_at)) from changelog_emails where status = 'pending')) - now()) * 1000)::float8 as ms`))
  // NULL when nothing waits (GREATEST would turn that into 0, so the clamp is done here).
  return row?.ms == null ? null : Math.max(0, Number(row.ms))
}

const earliest = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b))

/**
 * Sends while there is mail to send, then sleeps until new mail commits (server/db/work.ts) or the
 * soonest retry falls due; `pollMs` caps that sleep (default: the backstop).
 */
export function startNotificationMailer(ctx: AppContext, options: { pollMs?: number } = {}) {
  let stopped = false
  const waking = wakeOnWork(ctx.database.listenForWork, ['notification_events', 'changelog_emails', 'subscriber_updates'])
  const running = (async () => {
    const waker = await waking
    while (!stopped) {
      let sleepMs = options.pollMs ?? IDLE_BACKSTOP_MS
      try {
        const batch = await claim(ctx, 20)
        await Promise.all(batch.map((row) => sendOne(ctx, row)))
        // Changelog mail rides the same loop: its retries and any mail a crash left pending go from here.
        const changelog = await sendChangelogMail(ctx)
        // So do post updates to subscribers, each batch once it is due (post-subscriptions/mail.ts).
        const updates = await sendSubscriberMail(ctx)
        if (batch.length || changelog || updates) continue
        const due = earliest(await msUntilMailDue(ctx), await msUntilSubscriberMailDue(ctx))
        // A floor keeps a row that is due but locked by another sender from spinning this loop.
        if (due !== null) sleepMs = Math.max(50, Math.min(sleepMs, due))
      } catch (error) {
        if (stopped) break
        ctx.log.error('notification mailer', { error: describeError(error) })
      }
      if (!stopped) await waker.sleep(sleepMs)
    }
    await waker.close()
  })()
  return {
    async stop() {
      stopped = true
      ;(await waking).wake()
      await running
    },
  }
}
