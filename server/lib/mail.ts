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
        await db.insert(emailOutbox).values({ id: newId('email'), ...message, html: message.html ?? null })
        log.info('email stored in outbox (SMTP_URL is not set)', { to: message.to, subject: message.subject, text: message.text })
        return
      }
      transport ??= createTransport(config.smtpUrl)
      await transport.sendMail({ from: config.emailFrom, ...message })
      log.info('email sent', { to: message.to, subject: message.subject })
    },
  }
}
