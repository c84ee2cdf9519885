// The worker's rarely busy loops (the mailer, the suggester, the import runner) are loaded, with drizzle
// and the schema their work reads through, only once their tables have work: a committed row's
// notification, or a row already waiting when the worker starts (one SQL-text probe). An idle server's
// worker holds none of it (BENCHMARKS.md, "Background worker: memory"); once a loop has started it stays.
import { sql, type SqlFragment, type SqlRunner } from '../db/sql-text.ts'
import { IDLE_BACKSTOP_MS, wakeOnWork, type ListenForWork, type WorkQueue } from '../db/work.ts'
import type { WokenLoop } from './woken-loop.ts'

export interface LazyLoopOptions {
  listen: ListenForWork
  runner: SqlRunner
  tables: readonly WorkQueue[]
  /** A statement that returns a row when the loop may have work waiting (its queue's pending rows). */
  pending: SqlFragment
  /** Loads and starts the loop (which then claims whatever is there). */
  start(): Promise<WokenLoop>
  onError(error: unknown): void
}

/** Waits, holding nothing but a listener, until the loop has work; then starts it. */
export function lazyLoop(options: LazyLoopOptions): WokenLoop {
  let stopped = false
  let started: WokenLoop | undefined
  // A row committed on one of its tables starts it; `*` (a listener that just (re)connected, postgres.js
  // says so on every connect) only means "look again", which the probe does.
  let notified = false
  const waking = wakeOnWork(options.listen, options.tables, (table) => { if (table !== '*') notified = true })
  const done = (async () => {
    const waker = await waking
    while (!stopped) {
      try {
        if (notified || (await options.runner.rows(options.pending)).length) break
      } catch (error) {
        options.onError(error)
      }
      await waker.sleep(IDLE_BACKSTOP_MS)
    }
    await waker.close()
    if (!stopped) started = await options.start()
  })()
  return {
    async stop() {
      stopped = true
      ;(await waking).wake()
      await done.catch(() => {})
      await started?.stop()
    },
  }
}

/**
 * The probes: a row each loop's claim could take (its queue's pending rows, leased or not). A notification
 * e-mail counts once due: a daily digest waits, scheduled, for its hour (so an idle worker whose only mail is
 * tomorrow's digest loads no mailer; the probe, run at every backstop, starts it within 30 s of the hour), and
 * one written unscheduled (by an older process) is due to be scheduled.
 */
export const PENDING_MAIL = sql`select 1 from notification_events where email_status = 'pending' and coalesce(email_lease_until, created_at) <= now()
  union all select 1 from notification_events where email_status = 'pending' and digest and digest_at is null
  union all select 1 from changelog_emails where status = 'pending'
  union all select 1 from subscriber_updates where status = 'pending' limit 1`
export const PENDING_DUPLICATE_CHECKS = sql`select 1 from duplicate_checks limit 1`
export const PENDING_IMPORTS = sql`select 1 from imports where state = 'pending' limit 1`
