// Changelog mail: publishing writes one `changelog_emails` row per (entry, end user) in its own
// transaction (the primary key makes a second publish or a retried request a no-op), and the sender
// below delivers those rows after commit, from the background mailer (server/background/mailer.ts), with leases and backoff.
import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { BackgroundContext } from '../../background/context.ts'
import type { MailQueue } from '../../background/mailer.ts'
import type { Db, Tx } from '../../db/client.ts'
import { claimOldestPending, giveBackUntried, msUntilPending, sendDeadline, type LeasedQueue } from '../../db/leased-queue.ts'
import { changelogEmails, changelogEntries, changelogSubscriptions, endUsers, workspaces } from '../../db/schema/index.ts'
import { describeError } from '../../db/errors.ts'
import { notFound } from '../../errors.ts'
import { escapeHtml, MailNotStarted, withWorkspaceLogo } from '../../lib/mail.ts'
import { fileUrl } from '../files/url.ts'
import { AUTOMATIC_MAIL_HEADERS } from '../inbound-email/addresses.ts'
import { portalChangelogUrl } from '../portal/links.ts'
import { senderFor } from '../sending-domain/service.ts'

const MAX_ATTEMPTS = 5
export const CHANGELOG_MAIL_QUEUE: LeasedQueue = { table: 'changelog_emails', status: 'status', leaseUntil: 'lease_until', attempts: 'attempts', returning: ['entry_id', 'end_user_id'], leaseSeconds: 60 }

/**
 * Queues one mail per distinct end user who voted on any of `postIds`, has an e-mail address and is
 * verified (an unconfirmed anonymous address may not be its owner's), leaving out those who unsubscribed from this workspace's changelog. Each recipient gets a random
 * unsubscribe token the first time.
 */
export async function queueChangelogMail(tx: Tx, workspaceId: string, entryId: string, postIds: string[]) {
  if (!postIds.length) return
  const voters = sql`
    select distinct v.end_user_id from votes v join end_users eu on eu.id = v.end_user_id
    where v.workspace_id = ${workspaceId} and v.post_id in (${sql.join(postIds.map((id) => sql`${id}`), sql`, `)}) and eu.email is not null and eu.verified_at is not null`
  await tx.execute(sql`
    insert into changelog_subscriptions (end_user_id, workspace_id, token)
    select end_user_id, ${workspaceId}, replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '')
    from (${voters}) voters
    on conflict (end_user_id) do nothing`)
  await tx.execute(sql`
    insert into changelog_emails (entry_id, end_user_id, workspace_id)
    select ${entryId}, voters.end_user_id, ${workspaceId} from (${voters}) voters
    join changelog_subscriptions s on s.end_user_id = voters.end_user_id and s.unsubscribed_at is null
    on conflict do nothing`)
}

/** Leases up to `limit` due e-mails and reads what sending them needs (server/db/work.ts `claimOldestPending`). */
function claim(ctx: BackgroundContext, limit: number) {
  return claimOldestPending(ctx.db, CHANGELOG_MAIL_QUEUE, limit, (tx, claimed: { entry_id: string; end_user_id: string }[]) => tx
    .select({ mail: changelogEmails, entry: changelogEntries, email: endUsers.email, token: changelogSubscriptions.token, unsubscribedAt: changelogSubscriptions.unsubscribedAt, workspace: { name: workspaces.name, slug: workspaces.slug, logoFileId: workspaces.logoFileId } })
    .from(changelogEmails)
    .innerJoin(changelogEntries, eq(changelogEntries.id, changelogEmails.entryId))
    .innerJoin(endUsers, eq(endUsers.id, changelogEmails.endUserId))
    .innerJoin(changelogSubscriptions, eq(changelogSubscriptions.endUserId, changelogEmails.endUserId))
    .innerJoin(workspaces, eq(workspaces.id, changelogEmails.workspaceId))
    .where(and(eq(changelogEmails.status, 'pending'), inArray(sql`(${changelogEmails.entryId}, ${changelogEmails.endUserId})`, claimed.map((row) => sql`(${row.entry_id}, ${row.end_user_id})`)))))
}

export const unsubscribeUrl = (baseUrl: string, workspaceSlug: string, token: string) => `${baseUrl}/api/v1/public/${workspaceSlug}/changelog/unsubscribe?token=${token}`

async function sendOne(ctx: BackgroundContext, row: Awaited<ReturnType<typeof claim>>[number], startBy: number) {
  const key = and(eq(changelogEmails.entryId, row.mail.entryId), eq(changelogEmails.endUserId, row.mail.endUserId))
  if (row.unsubscribedAt || !row.email) {
    await ctx.db.update(changelogEmails).set({ status: 'skipped', leaseUntil: null }).where(key)
    return
  }
  try {
    const { entry, workspace } = row
    const page = portalChangelogUrl(ctx.config.baseUrl, workspace.slug, entry.id)
    const unsubscribe = unsubscribeUrl(ctx.config.baseUrl, workspace.slug, row.token)
    const sender = await senderFor(ctx.db, ctx.secrets, row.mail.workspaceId, workspace.name)
    await ctx.mail.send(withWorkspaceLogo({
      to: row.email,
      subject: `[${workspace.name}] ${entry.title}`,
      text: `${entry.title}\n\nSomething you voted for has shipped.\n\n${entry.body}\n\nRead it online: ${page}\n\nNo more changelog e-mail from ${workspace.name}: ${unsubscribe}\n`,
      html: `<h1>${escapeHtml(entry.title)}</h1><p>Something you voted for has shipped.</p>${entry.bodyHtml}<p><a href="${escapeHtml(page)}">Read it online</a></p><p style="font-size:12px;color:#6b7280"><a href="${escapeHtml(unsubscribe)}">Unsubscribe</a> from ${escapeHtml(workspace.name)}'s changelog e-mail.</p>`,
      ...(sender ?? {}),
      workspaceId: row.mail.workspaceId,
      // RFC 8058 one-click unsubscribe: mail clients POST `List-Unsubscribe=One-Click` to this URL.
      headers: { ...AUTOMATIC_MAIL_HEADERS, 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    }, { name: workspace.name, logoUrl: fileUrl(ctx.config.baseUrl, workspace.logoFileId) }), { startBy })
    await ctx.db.update(changelogEmails).set({ status: 'sent', sentAt: sql`now()`, leaseUntil: null }).where(key)
  } catch (error) {
    if (error instanceof MailNotStarted) return void await giveBackUntried(ctx.db, CHANGELOG_MAIL_QUEUE, key!)
    const failed = row.mail.attempts >= MAX_ATTEMPTS
    ctx.log.warn('changelog e-mail not sent', { entry: row.mail.entryId, attempt: row.mail.attempts, error: describeError(error) })
    await ctx.db.update(changelogEmails)
      .set(failed ? { status: 'failed', leaseUntil: null } : { leaseUntil: sql`now() + ${`${30 * 2 ** (row.mail.attempts - 1)} seconds`}::interval` })
      .where(key)
  }
}

/** Sends up to `limit` pending changelog mails; returns how many it claimed. */
export async function sendChangelogMail(ctx: BackgroundContext, limit = 20) {
  const startBy = sendDeadline(CHANGELOG_MAIL_QUEUE.leaseSeconds, ctx.config.smtpSendTimeoutSeconds)
  const batch = await claim(ctx, limit)
  await Promise.all(batch.map((row) => sendOne(ctx, row, startBy)))
  return batch.length
}

/** Changelog mail as a queue of the background mailer (server/background/mailer.ts). */
export const changelogMail: MailQueue = {
  name: 'changelog',
  tables: ['changelog_emails'],
  send: (ctx) => sendChangelogMail(ctx),
  msUntilDue: (ctx) => msUntilPending(ctx.db, CHANGELOG_MAIL_QUEUE),
}

/** The unsubscribe token's end user; a token of another workspace is as unknown as a wrong one. */
export async function findSubscription(db: Db, workspaceSlug: string, token: string) {
  const [row] = await db.select({ subscription: changelogSubscriptions, workspaceName: workspaces.name })
    .from(changelogSubscriptions).innerJoin(workspaces, eq(workspaces.id, changelogSubscriptions.workspaceId))
    .where(and(eq(changelogSubscriptions.token, token), eq(workspaces.slug, workspaceSlug)))
  if (!row) throw notFound('Subscription')
  return row
}

/** Idempotent: a second click keeps the first time. */
export async function unsubscribe(db: Db, workspaceSlug: string, token: string) {
  const row = await findSubscription(db, workspaceSlug, token)
  await db.update(changelogSubscriptions).set({ unsubscribedAt: sql`now()` }).where(and(eq(changelogSubscriptions.token, token), isNull(changelogSubscriptions.unsubscribedAt)))
  // Mail queued before the click is not sent either.
  await db.update(changelogEmails).set({ status: 'skipped' }).where(and(eq(changelogEmails.endUserId, row.subscription.endUserId), eq(changelogEmails.status, 'pending')))
  return row
}
