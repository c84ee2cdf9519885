import type { Transporter } from 'nodemailer'
import type { Config } from '../config.ts'
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
  constructor(cause: unknown) {
    const { name, code, responseCode, message } = (cause ?? {}) as { name?: string; code?: string; responseCode?: number; message?: string }
    super(`E-mail not sent: ${message ?? String(cause)}`, { cause })
    this.responseCode = responseCode
    this.unavailable = name === 'AbortError' || ['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS'].includes(code ?? '')
      || (typeof responseCode === 'number' && responseCode >= 400 && responseCode < 500)
  }
}

/** Whether a request's e-mail failed for want of a mail server that answers: worth retrying shortly (503). */
export const isMailServerUnavailable = (error: unknown) => error instanceof MailSendError && error.unavailable

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
