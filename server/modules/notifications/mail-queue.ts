// The member notification e-mails' leased queue (server/db/leased-queue.ts), apart so the sender (mailer.ts) and
// the digests (digest.ts), which the sender imports, both name it.
import type { LeasedQueue } from '../../db/leased-queue.ts'

export const NOTIFICATION_MAIL_QUEUE: LeasedQueue = { table: 'notification_events', status: 'email_status', leaseUntil: 'email_lease_until', attempts: 'email_attempts', returning: ['id'], leaseSeconds: 60 }
