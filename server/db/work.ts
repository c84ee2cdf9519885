// Wake-ups for the background loops (event dispatch, webhook and chat delivery, e-mail): a trigger on
// each table that receives work NOTIFYs `chorus_work_<table>` at commit (migrations 0016 and 0018), and
// each loop listens on its tables' channels and sleeps until a notification, its own next due time, or a
// long backstop. An idle server therefore runs no queries; a new event reaches its loop within one
// round trip instead of a polling interval. PGlite delivers the same notifications in-process.
// The loops' claims on those tables run in `queueTransaction`, planned for a queue's sudden growth.
import { sql, type SqlRunner } from './sql-text.ts'

/**
 * Runs `work` in a transaction planned for queue tables: the event dispatcher's take and fan-out, and each
 * delivery claim (the lease and the reads that build its jobs). A queue grows from a few rows to tens of
 * thousands within seconds, before autoanalyze sees it, and PostgreSQL plans made for the small table
 * read the whole queue at every step once it is large:
 * - a prepared statement switches to a generic plan after five runs and keeps it until the table is
 *   analyzed. Cached while the queue was small, the dispatcher's take sorted every queued row, found the
 *   taken rows by a sequential scan, and matched all of `events` against the 500 ids (PostgreSQL busy
 *   on 1.3 cores for several seconds of a 30,000-event drain, which ran at half its usual rate);
 * - the lease bitmap-scanned and sorted every pending row (80-100 ms at 25,000 pending) instead of walking
 *   the due index in order and stopping at the limit.
 * So inside `work` each statement is planned for its own parameters and today's table sizes
 * (`plan_cache_mode = force_custom_plan`), and bitmap scans and sorts are priced out. `set_config(..., true)`
 * ends with the transaction: no other statement sees these settings.
 */
export function queueTransaction<T>(runner: SqlRunner, work: (tx: SqlRunner) => Promise<T>): Promise<T> {
  return runner.transaction(async (tx) => {
    // Not awaited first: the settings go out ahead of the work's first statement on the transaction's one
    // connection (pipelined), so they cost no round trip of their own; a failure fails the transaction.
    const [, result] = await Promise.all([tx.rows(QUEUE_PLAN_SETTINGS), work(tx)])
    return result
  })
}

/**
 * A queue transaction's commit does not wait for its WAL to reach the disk. What it records is queue
 * progress (an event fanned out, a lease taken, an attempt logged), and losing the last fraction of a
 * second of it in a crash of PostgreSQL itself (not of a Chorus process) only redoes that work: the
 * events are dispatched again, the jobs claimed again, and a delivery or e-mail sent in that window may
 * be sent twice, which at-least-once delivery allows (receivers dedupe by the `webhook-id` header). The
 * writes that matter (the event, the post) commit with the request, durably; the next durable commit
 * flushes these too. Saves the WAL flush (~0.5 ms here) on every delivery round (BENCHMARKS.md).
 */
export const ASYNC_COMMIT = sql`select set_config('synchronous_commit', 'off', true)`

/** The settings `queueTransaction` opens with, ASYNC_COMMIT's among them (the mailers' drizzle transactions run the same text: leased-queue.ts). */
export const QUEUE_PLAN_SETTINGS = sql`select set_config('plan_cache_mode', 'force_custom_plan', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true), set_config('synchronous_commit', 'off', true)`

/**
 * Ends `queueTransaction`'s planning for today's sizes for the rest of the transaction: statements that read
 * no queue (a fan-out's lookups and inserts) keep their cached plans. Planned again at every run they cost
 * ~0.4 ms of PostgreSQL time on each event's round, more than running them (BENCHMARKS.md, "Notes: the
 * eighteenth session").
 */
export const CACHED_PLANS = sql`select set_config('plan_cache_mode', 'auto', true)`

/** The channel a table's trigger notifies when a transaction that added rows to it commits. */
export const workChannel = (table: WorkQueue) => `chorus_work_${table}`

/**
 * Announces work on `table` at commit for a change its trigger does not see: the trigger hears rows
 * inserted (migration 0056), not an upsert that brought an existing row forward.
 */
export async function announceWork(runner: SqlRunner, table: WorkQueue): Promise<void> {
  await runner.rows(sql`select pg_notify(${workChannel(table)}, '')`)
}

/** Tables whose inserts wake loops (each has a `chorus_notify_work` trigger): the one list, which the PGlite bridge listens on too. */
export const WORK_QUEUES = ['events', 'webhook_deliveries', 'chat_deliveries', 'notification_events', 'changelog_emails', 'subscriber_updates', 'duplicate_checks', 'imports'] as const
export type WorkQueue = (typeof WORK_QUEUES)[number]
/** What a notification names: a table, or `*`, "anything may be due" (sent after a listener reconnects). */
export type WorkTable = WorkQueue | '*'

/** Subscribes to committed work on `tables`; resolves to the unsubscribe function. */
export type ListenForWork = (tables: readonly WorkQueue[], onWork: (table: WorkTable) => void) => Promise<() => Promise<void>>

/** The longest an idle loop sleeps without a notification: the backstop for a lease that lapses quietly. */
export const IDLE_BACKSTOP_MS = 30_000

export interface Waker {
  /** Ends the current sleep, or makes the next one return at once. */
  wake(): void
  /** Sleeps up to `ms`, less when woken. */
  sleep(ms: number): Promise<void>
}

export function createWaker(): Waker {
  let pending = false
  let resolveSleep: (() => void) | undefined
  return {
    wake() {
      if (resolveSleep) resolveSleep()
      else pending = true
    },
    sleep(ms) {
      if (pending) {
        pending = false
        return Promise.resolve()
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms)
        function done() {
          clearTimeout(timer)
          resolveSleep = undefined
          pending = false
          resolve()
        }
        resolveSleep = done
      })
    },
  }
}

/**
 * A waker that notifications for `tables` wake. Without `listen` (a caller that has none) it only
 * sleeps, so the loop polls at the interval it asks for. It resolves once the first attempt to listen
 * has answered; one that failed (the listening connection dropped at that moment) is tried again in the
 * background, and the loop is woken once it listens, so nothing committed meanwhile waits for the backstop.
 */
export async function wakeOnWork(listen: ListenForWork | undefined, tables: readonly WorkQueue[], onWork?: (table: WorkTable) => void): Promise<Waker & { close(): Promise<void> }> {
  const waker = createWaker()
  if (!listen) return { ...waker, close: async () => {} }
  let closed = false
  let unlisten: (() => Promise<void>) | undefined
  const subscribe = async () => {
    try {
      const stop = await listen(tables, (table) => {
        onWork?.(table)
        waker.wake()
      })
      if (closed) await stop()
      else unlisten = stop
      return true
    } catch {
      return false
    }
  }
  if (!(await subscribe())) {
    void (async () => {
      for (let delay = 100; !closed; delay = Math.min(delay * 2, 5000)) {
        await Bun.sleep(delay)
        if (closed || (await subscribe())) return onWork?.('*'), waker.wake()
      }
    })()
  }
  return {
    ...waker,
    async close() {
      closed = true
      await unlisten?.().catch(() => {})
    },
  }
}
