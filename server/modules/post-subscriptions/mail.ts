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
import { drizzleQueueTransaction as queueTransaction, sendDeadline } from '../../db/leased-queue.ts'
import { recordEvents } from '../../events/outbox.ts'
import { groupBy, settleWithLimit } from '../../lib/concurrency.ts'
import { MailNotStarted, withWorkspaceLogo, type MailMessage } from '../../lib/mail.ts'
import { fileUrl } from '../files/url.ts'
import { AUTOMATIC_MAIL_HEADERS } from '../inbound-email/addresses.ts'
import { portalPostUrl } from '../portal/links.ts'
import { sendersFor, type Sender } from '../sending-domain/service.ts'
import { mailLocale } from './i18n.ts'
import { renderNews, summarise, type PendingUpdate } from './render.ts'

const MAX_ATTEMPTS = 5
const LEASE_SECONDS = 60
const SEND_CONCURRENCY = 16

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

type Fact = Record<string, unknown>
/** What became of one end user's claimed updates; `retry` pushes their lease out (the back-off). */
type Outcome = { rows: Claimed[]; status: 'sent' | 'skipped' | 'failed' | 'retry' | 'untried'; fact?: Fact; bounced?: boolean }
/** One e-mail to send: a recipient's copy of a shared render. */
type Letter = { rows: Claimed[]; message: MailMessage; fact: Fact }

// Stands in for the recipient's unsubscribe token while one render serves every recipient of the same
// news in the same language; [a-z] only, so HTML escaping and URLs leave it as it is.
const TOKEN_SLOT = 'chorusrecipienttokenslot'

const keysOf = (outcomes: Outcome[]) => {
  const rows = outcomes.flatMap((outcome) => outcome.rows)
  return sql`(event_id, end_user_id) in (select * from unnest(${`{${rows.map((row) => row.update.eventId).join(',')}}`}::text[], ${`{${rows.map((row) => row.update.endUserId).join(',')}}`}::text[]))`
}

/** Marks a whole batch in one transaction: a statement per status (and per back-off step), the bounced addresses, the `end_user.notified` events. */
async function settle(ctx: BackgroundContext, outcomes: Outcome[]) {
  await ctx.db.transaction(async (tx) => {
    for (const status of ['sent', 'skipped', 'failed'] as const) {
      const done = outcomes.filter((outcome) => outcome.status === status)
      if (done.length) await tx.execute(sql`update subscriber_updates set status = ${status}, lease_until = null${status === 'sent' ? sql`, sent_at = now()` : sql``} where ${keysOf(done)}`)
    }
    // Backs off 30 s, 1 min, 2 min, ... by pushing the lease (also "not before") out.
    const retries = groupBy(outcomes.filter((outcome) => outcome.status === 'retry'), (outcome) => 30 * 2 ** (attemptsOf(outcome.rows) - 1))
    for (const [seconds, group] of retries) await tx.execute(sql`update subscriber_updates set lease_until = now() + make_interval(secs => ${seconds}) where ${keysOf(group)}`)
    // Never tried: due again at once, its claim's attempt given back.
    const untried = outcomes.filter((outcome) => outcome.status === 'untried')
    if (untried.length) await tx.execute(sql`update subscriber_updates set lease_until = null, attempts = attempts - 1 where ${keysOf(untried)}`)
    const bounced = outcomes.filter((outcome) => outcome.bounced).map((outcome) => outcome.rows[0]!.endUser.id)
    if (bounced.length) await tx.execute(sql`update end_users set email_bounced_at = now() where id = any(${`{${bounced.join(',')}}`}::text[])`)
    const facts = groupBy(outcomes.filter((outcome) => outcome.fact), (outcome) => outcome.rows[0]!.workspace.id)
    for (const [workspaceId, group] of facts) await recordEvents(tx, workspaceId, group.map((outcome) => ({ type: 'end_user.notified' as const, data: outcome.fact! })))
  })
}

const attemptsOf = (rows: Claimed[]) => Math.max(...rows.map((row) => row.update.attempts))

/**
 * Works out one end user's e-mail (or that there is none: everything cancelled out, or they may not be
 * e-mailed and only the event tells it). The render is shared through `renders` by everyone of the batch
 * hearing the same news in the same language from the same workspace; only the token differs.
 */
function plan(ctx: BackgroundContext, rows: Claimed[], renders: Map<string, MailMessage>, senders: Map<string, Sender>): Outcome | Letter {
  const { endUser, workspace } = rows[0]!
  const audible = endUser.offAt ? [] : rows.filter((row) => !row.postUnsubscribedAt)
  const news = summarise(audible.map((row) => row.update as PendingUpdate))
  if (!news.length) return { rows, status: 'skipped' }
  const settings = workspace.settings as Record<string, unknown>
  const locale = mailLocale(endUser.locale)
  // Identified end users belong to the workspace's own product, which may tell them itself (`end_user.notified`).
  const mayEmail = endUser.email !== null && endUser.verifiedAt !== null && endUser.bouncedAt === null && (endUser.externalId === null || settings.email_identified_users !== false)
  const fact = (emailed: boolean) => ({ end_user: { id: endUser.id, external_id: endUser.externalId, email: endUser.email, locale }, emailed, posts: news })
  if (!mayEmail) return { rows, status: 'sent', fact: fact(false) }
  const key = `${workspace.id}|${locale}|${audible.map((row) => row.update.eventId).sort().join(',')}`
  let shared = renders.get(key)
  if (!shared) {
    const base = ctx.config.baseUrl
    const mail = renderNews(news, endUser.locale, { name: workspace.name, color: typeof settings.brand_color === 'string' ? settings.brand_color : null }, {
      post: (postId) => portalPostUrl(base, workspace.slug, postId),
      stopPost: (postId) => stopUrl(base, workspace.slug, TOKEN_SLOT, postId),
      stopAll: stopUrl(base, workspace.slug, TOKEN_SLOT),
    })
    // One-click unsubscribe (RFC 8058) from what this e-mail is about: its post, or everything when it covers several.
    const oneClick = news.length === 1 ? stopUrl(base, workspace.slug, TOKEN_SLOT, news[0]!.merged_into?.id ?? news[0]!.post.id) : stopUrl(base, workspace.slug, TOKEN_SLOT)
    shared = withWorkspaceLogo({
      to: '', ...mail, ...(senders.get(workspace.id) ?? {}), workspaceId: workspace.id,
      headers: { ...AUTOMATIC_MAIL_HEADERS, 'List-Unsubscribe': `<${oneClick}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click', 'Content-Language': locale },
    }, { name: workspace.name, logoUrl: fileUrl(base, workspace.logoFileId) })
    renders.set(key, shared)
  }
  const token = endUser.mailToken!
  const fill = (text: string) => text.replaceAll(TOKEN_SLOT, token)
  const message = { ...shared, to: endUser.email!, text: fill(shared.text), html: shared.html && fill(shared.html), headers: { ...shared.headers, 'List-Unsubscribe': fill(shared.headers!['List-Unsubscribe']!) } }
  return { rows, message, fact: fact(true) }
}

/**
 * Sends the due batches of up to `limit` end users as one batch: one claim, one sender-domain read per
 * workspace, one render per news and language, SEND_CONCURRENCY e-mails in flight (over the transport's
 * pooled connections when SMTP_URL has `pool=true`), one transaction marking them all. Returns how many
 * end users were handled. A crash before that transaction resends this batch after the lease: at most
 * `limit` end users hear twice, none never. A letter whose send could not end inside the lease goes back untried.
 */
export async function sendSubscriberMail(ctx: BackgroundContext, limit = 200) {
  // 16 at a time, a slow server could keep the last letters waiting past the lease (another process would send them too).
  const startBy = sendDeadline(LEASE_SECONDS, ctx.config.smtpSendTimeoutSeconds)
  const rows = await claim(ctx, limit)
  if (!rows.length) return 0
  const byEndUser = groupBy(rows, (row) => row.update.endUserId)
  const senders = await sendersFor(ctx.db, ctx.secrets, rows.map((row) => row.workspace))
  const renders = new Map<string, MailMessage>()
  const planned = [...byEndUser.values()].map((group) => plan(ctx, group, renders, senders))
  const letters = planned.filter((item): item is Letter => 'message' in item)
  const results = await settleWithLimit(letters, SEND_CONCURRENCY, (letter) => ctx.mail.send(letter.message, { startBy }))
  const outcomes = planned.filter((item): item is Outcome => !('message' in item))
  letters.forEach((letter, at) => {
    const result = results[at]!
    if (result.status === 'fulfilled') return void outcomes.push({ rows: letter.rows, status: 'sent', fact: letter.fact })
    if (result.reason instanceof MailNotStarted) return void outcomes.push({ rows: letter.rows, status: 'untried' })
    ctx.log.warn('post update e-mail not sent', { endUser: letter.rows[0]!.endUser.id, attempt: attemptsOf(letter.rows), error: describeError(result.reason) })
    if (isBounce(result.reason)) outcomes.push({ rows: letter.rows, status: 'failed', bounced: true, fact: { ...letter.fact, emailed: false } })
    else outcomes.push({ rows: letter.rows, status: attemptsOf(letter.rows) >= MAX_ATTEMPTS ? 'failed' : 'retry' })
  })
  await settle(ctx, outcomes)
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
