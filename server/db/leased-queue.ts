// The e-mail senders' leased queues (notifications, changelog, subscriber updates), on drizzle: their reads
// build the mail. They run in the background worker's mailer, loaded with its first pending mail
// (server/background/lazy-loop.ts), so the worker's idle graph holds no drizzle.
import { sql, type SQL } from 'drizzle-orm'
import { rowsOf, toDrizzle, type Db, type Tx } from './client.ts'
import { QUEUE_PLAN_SETTINGS } from './work.ts'

/** server/db/work.ts `queueTransaction` for drizzle callers: the same settings, a drizzle transaction. */
export function drizzleQueueTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(toDrizzle(QUEUE_PLAN_SETTINGS))
    return work(tx)
  })
}

/** A simple leased queue (the e-mail senders'): column names, constants, never input. */
export interface LeasedQueue {
  table: string
  status: string
  leaseUntil: string
  attempts: string
  /** Columns the lease returns (the row's key). */
  returning: string[]
  /** How long a lease lasts: a crash means a resend after it, never a loss. */
  leaseSeconds: number
}

/** What a batch keeps of its lease for marking what it sent. */
const SETTLE_SECONDS = 5

/**
 * The last moment a send of a batch claimed now may begin (lib/mail.ts `startBy`), taken before the claim: each
 * send ends within SMTP_SEND_TIMEOUT_SECONDS, so one begun by then ends, and is marked, inside the batch's lease.
 * Past it another process may claim the same rows and send them again.
 */
export const sendDeadline = (leaseSeconds: number, sendTimeoutSeconds: number) => Date.now() + (leaseSeconds - SETTLE_SECONDS - sendTimeoutSeconds) * 1000

/**
 * Leases up to `limit` of the pending rows of `queue` due longest ago (`duePending`), counts the attempt, and reads what sending them
 * needs, in one `queueTransaction`; [] when nothing was due. The rows are locked (skipping those another
 * sender holds) and updated by their row address, which no plan turns into a scan.
 */
export function claimOldestPending<Row, Job>(db: Db, queue: LeasedQueue, limit: number, read: (tx: Tx, claimed: Row[]) => Promise<Job[]>): Promise<Job[]> {
  const [table, leaseUntil, attempts] = [queue.table, queue.leaseUntil, queue.attempts].map((name) => sql.raw(name))
  return drizzleQueueTransaction(db, async (tx) => {
    const claimed = rowsOf<Row>(await tx.execute(sql`
      update ${table} set ${leaseUntil} = now() + interval '${sql.raw(String(queue.leaseSeconds))} seconds', ${attempts} = ${attempts} + 1
      where ctid = any(array(${duePending(queue, limit)} for update skip locked))
      returning ${sql.raw(queue.returning.join(', '))}`))
    return claimed.length ? read(tx, claimed) : []
  })
}

/**
 * Gives claimed rows of `queue` (those `where` names) back untried: their send never began (lib/mail.ts
 * `MailNotStarted`), so they are due again at once and the attempt `claimOldestPending` counted is taken back.
 */
export async function giveBackUntried(db: Db, queue: LeasedQueue, where: SQL) {
  const [table, leaseUntil, attempts] = [queue.table, queue.leaseUntil, queue.attempts].map((name) => sql.raw(name))
  await db.execute(sql`update ${table} set ${leaseUntil} = null, ${attempts} = ${attempts} - 1 where ${where}`)
}

/**
 * When a pending row may be tried: its lease's end (a claim in progress, a retry's "not before", a digest's
 * hour), else its creation. Each queue's index is on this expression (migration 0063).
 */
const dueAt = (queue: LeasedQueue) => sql.raw(`coalesce(${queue.leaseUntil}, created_at)`)

/**
 * The row addresses of the `limit` pending rows of `queue` due longest ago that no lease holds, in claim order:
 * the index's range up to now, so rows waiting for a later time (tomorrow's digest) are never read.
 */
export function duePending(queue: LeasedQueue, limit: number) {
  const [table, status] = [queue.table, queue.status].map((name) => sql.raw(name))
  return sql`select ctid from ${table} where ${status} = 'pending' and ${dueAt(queue)} <= now() order by ${dueAt(queue)} limit ${limit}`
}

/**
 * Milliseconds until a pending row of `queue` may be tried (its lease, also its "not before", ends), 0 when
 * one may be now, or null when none waits.
 */
export async function msUntilPending(db: Db, queue: LeasedQueue): Promise<number | null> {
  const [row] = rowsOf<{ ms: number | null }>(await db.execute(sql`
    select (extract(epoch from min(${dueAt(queue)}) - now()) * 1000)::float8 as ms
    from ${sql.raw(queue.table)} where ${sql.raw(queue.status)} = 'pending'`))
  // NULL when nothing waits; a negative wait is due now.
  return row?.ms == null ? null : Math.max(0, Number(row.ms))
}

