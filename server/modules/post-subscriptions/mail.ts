// The sender of post updates to subscribers, run from the notification mailer's loop (as changelog mail
// is): it leases every pending update of end users whose batch is due (quiet for NOTIFY_BATCH_SECONDS,
// or NOTIFY_BATCH_MAX_SECONDS after its first update), sends each end user one e-mail, and records one
// `end_user.notified` event per e-mail in the transaction that marks the updates sent. A crash between
// the two means a resend after the lease, never a loss; an unsubscribe is read again at send time.
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { BackgroundContext } from '../../background/context.ts'
import type { MailQueue } from '../../background/mailer.ts'
import { rowsOf } from '../../db/client.ts'
import { describeError } from '../../db/errors.ts'
import { endUsers, postSubscriptions, subscriberUpdates, workspaces } from '../../db/schema/index.ts'
import { queueTransaction } from '../../db/work.ts'
import { recordEvent } from '../../events/outbox.ts'
import { withWorkspaceLogo } from '../../lib/mail.ts'
import { fileUrl } from '../files/url.ts'
import { AUTOMATIC_MAIL_HEADERS } from '../inbound-email/addresses.ts'
import { portalPostUrl } from '../portal/links.ts'
import { senderFor } from '../sending-domain/service.ts'
import { mailLocale } from './i18n.ts'
import { renderNews, summarise, type PendingUpdate } from './render.ts'

const MAX_ATTEMPTS = 5
const LEASE_SECONDS = 60

/** The pending updates of end users whose batch is due, `limit` end users at most. */
const dueEndUsers = (ctx: BackgroundContext, limit: number) => sql`
  select end_user_id from subscriber_updates where status = 'pending' and (lease_until is null or lease_until < now())
  group by end_user_id
  having max(created_at) <= now() - make_interval(secs => ${ctx.config.notifyBatchSeconds})
      or min(created_at) <= now() - make_interval(secs => ${ctx.config.notifyBatchMaxSeconds})
  limit ${limit}`

function claim(ctx: BackgroundContext, limit: number) {
  return queueTransaction(ctx.db, async (tx) => {
    const claimed = rowsOf<{ event_id: string; end_user_id: string }>(await tx.execute(sql`
      update subscriber_updates set lease_until = now() + make_interval(secs => ${LEASE_SECONDS}), attempts = attempts + 1
      where ctid = any(array(
        select ctid from subscriber_updates
        where status = 'pending' and (lease_until is null or lease_until < now()) and end_user_id = any(array(${dueEndUsers(ctx, limit)}))
        for update skip locked))
      returning event_id, end_user_id`))
    if (!claimed.length) return []
    // Each recipient's unsubscribe secret, made once, for the whole claim in one statement (random UUIDs are from a CSPRNG).
    await tx.execute(sql`update end_users set mail_token = replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '')
      where mail_token is null and id = any(${`{${[...new Set(claimed.map((row) => row.end_user_id))].join(',')}}`}::text[])`)
    return tx.select({
      update: subscriberUpdates,
      endUser: { id: endUsers.id, email: endUsers.email, externalId: endUsers.externalId, verifiedAt: endUsers.verifiedAt, locale: endUsers.locale, bouncedAt: endUsers.emailBouncedAt, offAt: endUsers.notificationsOffAt, mailToken: endUsers.mailToken },
      postUnsubscribedAt: postSubscriptions.unsubscribedAt,
      workspace: { id: workspaces.id, name: workspaces.name, slug: workspaces.slug, logoFileId: workspaces.logoFileId, settings: workspaces.settings },
    })
      .from(subscriberUpdates)
      .innerJoin(endUsers, eq(endUsers.id, subscriberUpdates.endUserId))
      .innerJoin(workspaces, eq(workspaces.id, subscriberUpdates.workspaceId))
      .leftJoin(postSubscriptions, and(eq(postSubscriptions.postId, subscriberUpdates.postId), eq(postSubscriptions.endUserId, subscriberUpdates.endUserId)))
      .where(and(eq(subscriberUpdates.status, 'pending'), inArray(sql`(${subscriberUpdates.eventId}, ${subscriberUpdates.endUserId})`, claimed.map((row) => sql`(${row.event_id}, ${row.end_user_id})`))))
  })
}

type Claimed = Awaited<ReturnType<typeof claim>>[number]

/** The unsubscribe links: `post` for one post, none for everything of the workspace. The token is the end user's secret. */
export const stopUrl = (baseUrl: string, slug: string, token: string, postId?: string) =>
  `${baseUrl}/api/v1/public/${slug}/notifications/unsubscribe?token=${token}${postId ? `&post=${postId}` : ''}`

/** SMTP 5xx: the address does not take mail (a permanent failure); anything else is tried again. */
const isBounce = (error: unknown) => {
  const code = (error as { responseCode?: number } | null)?.responseCode
  return typeof code === 'number' && code >= 500 && code < 600
}

async function finish(ctx: BackgroundContext, rows: Claimed[], status: 'sent' | 'skipped' | 'failed', notified?: Record<string, unknown>) {
  const keys = rows.map((row) => sql`(${row.update.eventId}, ${row.update.endUserId})`)
  await ctx.db.transaction(async (tx) => {
    await tx.update(subscriberUpdates).set({ status, leaseUntil: null, ...(status === 'sent' && { sentAt: sql`now()` }) })
      .where(inArray(sql`(${subscriberUpdates.eventId}, ${subscriberUpdates.endUserId})`, keys))
    if (notified) await recordEvent(tx, rows[0]!.workspace.id, 'end_user.notified', notified)
  })
}

/** One end user's due updates: one e-mail (when allowed), one event, or nothing when it all cancelled out. */
async function sendTo(ctx: BackgroundContext, rows: Claimed[]) {
  const { endUser, workspace } = rows[0]!
  const audible = endUser.offAt ? [] : rows.filter((row) => !row.postUnsubscribedAt)
  const news = summarise(audible.map((row) => row.update as PendingUpdate))
  if (!news.length) return finish(ctx, rows, 'skipped')
  const settings = workspace.settings as Record<string, unknown>
  // Identified end users belong to the workspace's own product, which may tell them itself (`end_user.notified`).
  const mayEmail = endUser.email !== null && endUser.verifiedAt !== null && endUser.bouncedAt === null && (endUser.externalId === null || settings.email_identified_users !== false)
  const fact = (emailed: boolean) => ({ end_user: { id: endUser.id, external_id: endUser.externalId, email: endUser.email, locale: mailLocale(endUser.locale) }, emailed, posts: news })
  if (!mayEmail) return finish(ctx, rows, 'sent', fact(false))
  try {
    const token = endUser.mailToken!
    const base = ctx.config.baseUrl
    const mail = renderNews(news, endUser.locale, { name: workspace.name, color: typeof settings.brand_color === 'string' ? settings.brand_color : null }, {
      post: (postId) => portalPostUrl(base, workspace.slug, postId),
      stopPost: (postId) => stopUrl(base, workspace.slug, token, postId),
      stopAll: stopUrl(base, workspace.slug, token),
    })
    // One-click unsubscribe (RFC 8058) from what this e-mail is about: its post, or everything when it covers several.
    const oneClick = news.length === 1 ? stopUrl(base, workspace.slug, token, news[0]!.merged_into?.id ?? news[0]!.post.id) : stopUrl(base, workspace.slug, token)
    const sender = await senderFor(ctx.db, ctx.secrets, workspace.id, workspace.name)
    await ctx.mail.send(withWorkspaceLogo({
      to: endUser.email!,
      ...mail,
      ...(sender ?? {}),
      workspaceId: workspace.id,
      headers: { ...AUTOMATIC_MAIL_HEADERS, 'List-Unsubscribe': `<${oneClick}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click', 'Content-Language': mailLocale(endUser.locale) },
    }, { name: workspace.name, logoUrl: fileUrl(base, workspace.logoFileId) }))
    await finish(ctx, rows, 'sent', fact(true))
  } catch (error) {
    ctx.log.warn('post update e-mail not sent', { endUser: endUser.id, attempt: rows[0]!.update.attempts, error: describeError(error) })
    if (isBounce(error)) {
      await ctx.db.update(endUsers).set({ emailBouncedAt: sql`now()` }).where(eq(endUsers.id, endUser.id))
      return finish(ctx, rows, 'failed', fact(false))
    }
    const attempts = Math.max(...rows.map((row) => row.update.attempts))
    if (attempts >= MAX_ATTEMPTS) return finish(ctx, rows, 'failed')
    // Backs off 30 s, 1 min, 2 min, ... by pushing the lease (also "not before") out.
    await ctx.db.update(subscriberUpdates).set({ leaseUntil: sql`now() + make_interval(secs => ${30 * 2 ** (attempts - 1)})` })
      .where(inArray(sql`(${subscriberUpdates.eventId}, ${subscriberUpdates.endUserId})`, rows.map((row) => sql`(${row.update.eventId}, ${row.update.endUserId})`)))
  }
}

/** Sends the due batches of up to `limit` end users; returns how many end users were handled. */
export async function sendSubscriberMail(ctx: BackgroundContext, limit = 50) {
  const rows = await claim(ctx, limit)
  const byEndUser = new Map<string, Claimed[]>()
  for (const row of rows) byEndUser.set(row.update.endUserId, [...(byEndUser.get(row.update.endUserId) ?? []), row])
  await Promise.all([...byEndUser.values()].map((group) => sendTo(ctx, group)))
  return byEndUser.size
}

/** Milliseconds until the next batch falls due (or a failed one may be retried), or null when none waits. */
export async function msUntilSubscriberMailDue(ctx: BackgroundContext): Promise<number | null> {
  const [row] = rowsOf<{ ms: number | null }>(await ctx.db.execute(sql`
    select (extract(epoch from min(due) - now()) * 1000)::float8 as ms from (
      select least(max(created_at) + make_interval(secs => ${ctx.config.notifyBatchSeconds}), min(created_at) + make_interval(secs => ${ctx.config.notifyBatchMaxSeconds})) as due
      from subscriber_updates where status = 'pending' and (lease_until is null or lease_until < now()) group by end_user_id
      union all
      select min(lease_until) from subscriber_updates where status = 'pending' and lease_until >= now()) batches`))
  return row?.ms == null ? null : Math.max(0, Number(row.ms))
}

/** Post updates to subscribers as a queue of the background mailer: each end user's batch once it is due. */
export const subscriberMail: MailQueue = {
  name: 'post-updates',
  tables: ['subscriber_updates'],
  send: (ctx) => sendSubscriberMail(ctx),
  msUntilDue: msUntilSubscriberMailDue,
}
