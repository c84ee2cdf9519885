import { createTransport, type Transporter } from 'nodemailer'
import type { Config } from '../config.ts'
import type { Db } from '../db/client.ts'
import { emailOutbox } from '../db/schema/index.ts'
import { newId } from './ids.ts'
import type { Logger } from './log.ts'

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
  /** Defaults to EMAIL_FROM; a workspace's verified sending domain sets its own. */
  from?: { name: string; address: string }
  /** Envelope sender (bounces), e.g. on a custom domain's return-path host. */
  returnPath?: string
  /** Signs the message (nodemailer's DKIM option), for mail from a custom sending domain. */
  dkim?: { domainName: string; keySelector: string; privateKey: string }
}

export interface Mailer {
  send(message: MailMessage): Promise<void>
}

/** SMTP when SMTP_URL is set; otherwise the message is kept in `email_outbox` and logged. */
export function createMailer(config: Config, db: Db, log: Logger): Mailer {
  let transport: Transporter | undefined
  return {
    async send(message) {
      if (!config.smtpUrl) {
        await db.insert(emailOutbox).values({ id: newId('email'), to: message.to, subject: message.subject, text: message.text, html: message.html ?? null })
        log.info('email stored in outbox (SMTP_URL is not set)', { to: message.to, subject: message.subject, text: message.text })
        return
      }
      transport ??= createTransport(config.smtpUrl)
      await transport.sendMail({
        from: message.from ?? config.emailFrom,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        envelope: message.returnPath ? { from: message.returnPath, to: message.to } : undefined,
        dkim: message.dkim,
      })
      log.info('email sent', { to: message.to, subject: message.subject })
    },
  }
}
