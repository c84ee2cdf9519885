import type { Transporter } from 'nodemailer'
import type { Config } from '../config.ts'
import { ApiError, invalid } from '../errors.ts'
import { sql, type SqlRunner } from '../db/sql-text.ts'
import { newId } from './ids.ts'
import { logHash, type Logger } from './log.ts'

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
  /** Defaults to EMAIL_FROM; a workspace's verified sending domain sets its own. */
  from?: { name: string; address: string }
  /** Where replies go, e.g. the visitor who wrote through the contact form. */
  replyTo?: string
  /** Envelope sender (bounces), e.g. on a custom domain's return-path host. */
  returnPath?: string
  /** Signs the message (nodemailer's DKIM option), for mail from a custom sending domain. */
  dkim?: { domainName: string; keySelector: string; privateKey: string }
  /** The workspace the mail is about: an outbox copy is deleted with the workspace. */
  workspaceId?: string
  /** A stable `<id@domain>`, so replies can be threaded back (In-Reply-To / References). */
  messageId?: string
  /** Extra headers, e.g. `Auto-Submitted` on automatic mail (RFC 3834). */
  headers?: Record<string, string>
}

export interface SendOptions {
  /**
   * The last moment (ms since the epoch) the send may begin. A queue's batch passes its claim's lease less
   * SMTP_SEND_TIMEOUT_SECONDS (leased-queue.ts `sendDeadline`), so each send it begins ends inside the lease. A send
   * that waited for a connection of the pool until later fails with `MailNotStarted`, untried.
   */
  startBy?: number
}

export interface Mailer {
  send(message: MailMessage, options?: SendOptions): Promise<void>
}

/** A send that never began: it would have started after its `startBy`. Its e-mail goes back to its queue untried. */
export class MailNotStarted extends Error {
  constructor() {
    super('Not sent: it would have started too late to end inside its lease')
  }
}

/**
 * A send the mail server did not take. `responseCode` is the server's reply (5xx: the address refuses mail, a
 * bounce); `unavailable` says whether asking again later may work: the send ran out of SMTP_SEND_TIMEOUT_SECONDS, the
 * server could not be reached, or it answered 4xx ("try later").
 */
export class MailSendError extends Error {
  readonly responseCode: number | undefined
  readonly unavailable: boolean
  /** The server refused the recipient's address for good (a 5xx answer to RCPT TO: no such mailbox, not accepted here). */
  readonly recipientRefused: boolean
  /** The server's answer as it gave it, e.g. `550 5.1.1 No such user`, when it gave one. */
  readonly reply: string | undefined
  constructor(cause: unknown) {
    const { name, code, responseCode, message, command, response } = (cause ?? {}) as { name?: string; code?: string; responseCode?: number; message?: string; command?: string; response?: string }
    super(`E-mail not sent: ${message ?? String(cause)}`, { cause })
    this.responseCode = responseCode
    this.reply = typeof response === 'string' ? response.slice(0, 300) : undefined
    this.recipientRefused = code === 'EENVELOPE' && command === 'RCPT TO' && typeof responseCode === 'number' && responseCode >= 500
    this.unavailable = name === 'AbortError' || ['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS'].includes(code ?? '')
      || (typeof responseCode === 'number' && responseCode >= 400 && responseCode < 500)
  }
}

/**
 * The answer to a request whose e-mail did not go out (docs/api.md#errors), for the errors plugin and the pages'
 * forms: 503 with Retry-After when the server did not answer or said "try later" (4xx), 502 when it refused the
 * message for good (5xx; its reply text stays in the log). Undefined for any other error.
 */
export function mailFailureError(error: unknown): ApiError | undefined {
  if (!(error instanceof MailSendError)) return undefined
  if (error.unavailable) return new ApiError('SERVICE_UNAVAILABLE', 'The e-mail could not be sent: the mail server did not answer; retry shortly', {}, { 'retry-after': '30' })
  return new ApiError('UPSTREAM_ERROR', 'The e-mail could not be sent: the mail server refused it', { detail: `smtp ${error.responseCode ?? 'error'}` })
}

/** The 422 issue type of an address the mail server refused (`sendToGivenAddress`). */
export const EMAIL_REFUSED = 'value_error.email_refused'

/**
 * Sends a request's e-mail to an address the caller gave (a sign-in link, an invitation). When the mail server
 * refuses that address for good, the caller's input is at fault: a 422 on `loc`, not a 502 (errors plugin).
 * `undo` runs first when the e-mail does not go out, whatever the reason: what the request wrote for a message
 * nobody received (a link's token, a pending invitation) does not stay live.
 */
export async function sendToGivenAddress(mailer: Mailer, message: MailMessage, loc: (string | number)[], undo?: () => Promise<unknown>) {
  try {
    await mailer.send(message)
  } catch (error) {
    await undo?.()
    if (error instanceof MailSendError && error.recipientRefused) {
      throw invalid(loc, `The mail server for this address refused it${error.reply ? ` (${error.reply})` : ''}: check the address`, EMAIL_REFUSED)
    }
    throw error
  }
}

/**
 * How many sends may be on the wire at once: nodemailer's pool (`pool=true`, `maxConnections`, default 5) queues
 * the rest inside, where their time would count against the send timeout; without a pool each send has its own
 * connection.
 */
function sendSlots(smtpUrl: string) {
  const params = new URL(smtpUrl).searchParams
  return params.get('pool') === 'true' ? Math.max(1, Number(params.get('maxConnections')) || 5) : Infinity
}

/**
 * `db` runs the outbox insert (SQL text: the background worker's mail loads no drizzle).
 * SMTP when SMTP_URL is set; otherwise the message is kept in `email_outbox` and logged. nodemailer is
 * loaded on the first message sent: its module graph is ~40 modules and several MiB of every process's
 * memory, and most processes of a busy install never send mail.
 */
export function createMailer(config: Config, db: SqlRunner, log: Logger): Mailer {
  let transport: Transporter | undefined
  const slots = config.smtpUrl ? sendSlots(config.smtpUrl) : Infinity
  let sending = 0
  const waiting: (() => void)[] = []
  const takeSlot = async () => {
    if (sending < slots) sending++
    else await new Promise<void>((resolve) => waiting.push(resolve))
  }
  // A slot given up passes straight to the next waiter (the count stays).
  const giveSlot = () => {
    const next = waiting.shift()
    if (next) next()
    else sending--
  }
  return {
    async send(message, options = {}) {
      if (!config.smtpUrl) {
        await db.rows(sql`insert into email_outbox (id, "to", subject, text, html, workspace_id)
          values (${newId('email')}, ${message.to}, ${message.subject}, ${message.text}, ${message.html ?? null}, ${message.workspaceId ?? null})`)
        // The links only (a developer signs in with them); never the address, the subject or the text,
        // which name people (docs/security.md#end-user-identity).
        log.info('email stored in outbox (SMTP_URL is not set)', { to: logHash(message.to), workspace_id: message.workspaceId ?? null, links: linksIn(message.text) })
        return
      }
      transport ??= (await import('nodemailer')).createTransport(config.smtpUrl)
      await takeSlot()
      try {
        if (options.startBy !== undefined && Date.now() > options.startBy) throw new MailNotStarted()
        await transport.sendMail({
          from: message.from ?? config.emailFrom,
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          replyTo: message.replyTo,
          envelope: message.returnPath ? { from: message.returnPath, to: message.to } : undefined,
          dkim: message.dkim,
          messageId: message.messageId,
          headers: message.headers,
          // nodemailer's own limits let one send wait up to 2 minutes to connect and 10 minutes for each answer:
          // a stalled server held a mailer's batch (and a request's sign-in e-mail) that long, past the lease of
          // the batch's rows, so another process sent them too. The whole send now fails after this.
          signal: AbortSignal.timeout(config.smtpSendTimeoutSeconds * 1000),
        }).catch((error) => { throw new MailSendError(error) })
      } finally {
        giveSlot()
      }
      log.info('email sent', { to: logHash(message.to), workspace_id: message.workspaceId ?? null })
    },
  }
}

const linksIn = (text: string) => text.match(/https?:\/\/[^\s<>"]+/g) ?? []

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

/**
 * A workspace's e-mail with its logo on top (an HTML part next to the text one) when it has a logo;
 * unchanged otherwise. The logo is linked, not attached: its URL is public and immutable.
 */
export function withWorkspaceLogo(message: MailMessage, workspace: { name: string; logoUrl: string | null }): MailMessage {
  if (!workspace.logoUrl) return message
  const body = message.html ?? `<div style="white-space:pre-wrap">${escapeHtml(message.text)}</div>`
  return { ...message, html: `<p><img src="${escapeHtml(workspace.logoUrl)}" alt="${escapeHtml(workspace.name)}" height="40" style="height:40px;width:auto"></p>${body}` }
}
