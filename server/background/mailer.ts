// The background mailer: one loop sends every kind of queued e-mail. A kind is a `MailQueue` (its
// claim-and-send of one batch, and when its next mail falls due) listed in MAIL_QUEUES below; the loop
// sends while any queue has mail, then sleeps until a queue's table announces new rows (server/db/work.ts)
// or the soonest retry falls due. Adding a kind of e-mail = a MailQueue in its module plus a line below.
import { describeError } from '../db/errors.ts'
import { IDLE_BACKSTOP_MS, type WorkQueue } from '../db/work.ts'
import { changelogMail } from '../modules/changelog/mail.ts'
import { notificationMail } from '../modules/notifications/mailer.ts'
import { subscriberMail } from '../modules/post-subscriptions/mail.ts'
import type { BackgroundContext } from './context.ts'
import { wokenLoop, type WokenLoop } from './woken-loop.ts'

export interface MailQueue {
  name: string
  /** Tables whose new rows wake the mailer for this queue. */
  tables: readonly WorkQueue[]
  /** Claims (with a lease) and sends one batch of due mail; returns how many it claimed (0: none due). */
  send(ctx: BackgroundContext): Promise<number>
  /** Milliseconds until its next mail may be tried, or null when none waits. */
  msUntilDue(ctx: BackgroundContext): Promise<number | null>
}

/** Every kind of queued e-mail, sent in this order each round. */
export const MAIL_QUEUES: readonly MailQueue[] = [notificationMail, changelogMail, subscriberMail]

export type Mailer = WokenLoop

/**
 * Mail is not urgent: after each wake the mailer waits this long before it claims, so the mail of a burst
 * (a post with many subscribers, a busy minute of new posts) is claimed, read and sent in batches. Without
 * it a busy server claimed every e-mail on its own and then ran an empty claim of every queue behind it,
 * ~1.8 ms of PostgreSQL per new post (BENCHMARKS.md, "Mail and suggestions in batches").
 */
const MAIL_GATHER_MS = 100

/** Sends while there is mail to send, then sleeps until new mail commits or the soonest retry falls due (at most `pollMs`, default the backstop). */
export function startMailer(ctx: BackgroundContext, options: { pollMs?: number; queues?: readonly MailQueue[] } = {}): Mailer {
  const queues = options.queues ?? MAIL_QUEUES
  return wokenLoop(ctx.database.listenForWork, [...new Set(queues.flatMap((queue) => queue.tables))], async (waker, running) => {
    while (running()) {
      let sleepMs = options.pollMs ?? IDLE_BACKSTOP_MS
      try {
        let sent = 0
        for (const queue of queues) sent += await queue.send(ctx)
        if (sent) continue
        const due = (await Promise.all(queues.map((queue) => queue.msUntilDue(ctx)))).filter((ms): ms is number => ms !== null)
        // A floor keeps a row that is due but locked by another sender from spinning this loop.
        if (due.length) sleepMs = Math.max(50, Math.min(sleepMs, ...due))
      } catch (error) {
        if (!running()) break
        ctx.log.error('mailer', { error: describeError(error) })
      }
      if (running()) await waker.sleep(sleepMs)
    }
  }, { gatherMs: MAIL_GATHER_MS })
}
