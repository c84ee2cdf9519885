// The addresses and ids that tie outgoing notification mail to the intake route: replies go to the
// workspace's intake address and name the notification's Message-ID in In-Reply-To / References.

/** `{token}@{INBOUND_EMAIL_DOMAIN}`: where a workspace receives feedback by e-mail. */
export const intakeAddress = (token: string, domain: string) => `${token}@${domain}`

/** Notification ids carry 82 random bits, so the Message-ID of a notification is only known to its recipient. */
export const notificationMessageId = (notificationId: string, domain: string) => `<${notificationId}@${domain}>`

/** The notification id named by one of our Message-IDs, else null. */
export function notificationIdOf(messageId: string, domain: string): string | null {
  const match = /^<?(ntf_[0-9a-z]{25})@([^>]+)>?$/.exec(messageId.trim())
  return match && match[2]!.toLowerCase() === domain ? match[1]! : null
}

/** RFC 3834: automatic mail says so, and asks Exchange not to answer it with auto-replies. */
export const AUTOMATIC_MAIL_HEADERS = { 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All' }
