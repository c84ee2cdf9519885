// The delivery loop: fan out, claim what is due, send with bounded concurrency, record each outcome.
// It runs in the background worker of every server process (delivery-runner.ts); the state lives in the
// database, so processes share the work.
// It never polls: it sleeps until committed work is announced (server/db/work.ts), an attempt in
// flight finishes, or the next retry falls due.
import type { Db } from '../db/client.ts'
import { describeError } from '../db/errors.ts'
import type { Logger } from '../lib/log.ts'
import type { Sealer } from '../lib/secrets.ts'
import { IDLE_BACKSTOP_MS, wakeOnWork, type ListenForWork } from '../db/work.ts'
import { dispatchEvents } from '../events/dispatch.ts'
import { claimDeliveries, msUntilWebhookDue, recordAttempts, releaseClaim, type Attempt } from '../modules/webhooks/queue.ts'
import type { AttemptResult, DeliveryJob } from '../modules/webhooks/send.ts'

/**
 * Another kind of delivery job run by the same loop (chat messages): claimed with the shared lease
 * (leases.ts `claimDue`), sent, and recorded one by one.
 */
export interface DeliveryQueue<Job = any, Result = any> {
  name: string
  claim(owner: number, limit: number): Promise<Job[]>
  send(job: Job): Promise<Result>
  record(owner: number, job: Job, result: Result): Promise<void>
  /** Gives a claim back untouched (the attempt never completed). */
  release(owner: number, job: Job): Promise<void>
  /** Milliseconds until its next job falls due, or null when none is pending. */
  msUntilDue?(): Promise<number | null>
}

export interface LoopOptions {
  db: Db
  /** This loop's claimer number; the caller holds its advisory lock for the loop's lifetime. */
  owner: number
  send(job: DeliveryJob): Promise<AttemptResult>
  /** Opens the endpoints' signing secrets. */
  secrets: Sealer
  retryScale: number
  /** `host/pid`, kept on each log row. */
  sentBy: string
  log: Logger
  /** Wakes the loop when work commits (`Database.listenForWork`); without it the loop polls every `pollMs`. */
  listenForWork?: ListenForWork
  /** The longest idle sleep (default: the backstop of server/db/work.ts). */
  pollMs?: number
  /**
   * Attempts on the wire at once (default 256, Bun's own limit on simultaneous fetches: a request queued
   * inside the HTTP client would spend its timeout waiting for a connection slot, not on the receiver).
   */
  maxSending?: number
  /**
   * Jobs held at once, on the wire or waiting for a slot (default twice `maxSending`). The next batch is
   * claimed while the last is still being sent, and each round's statements cover more jobs.
   */
  maxClaimed?: number
  /** Record each attempt as it finishes instead of in batches per round (the PGlite main thread). */
  recordEach?: boolean
  /** Further kinds of jobs, after the webhook deliveries. */
  queues?: DeliveryQueue[]
  /** Called after each claim that took jobs, with how many are now held (a test hook ends the worker here). */
  onClaimed?(claimed: number, held: number): void
}

export interface DeliveryLoop {
  /** Stops claiming, hands back the claims not yet sent, and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
}

/** Thrown by `send` for a claim whose attempt never started because the loop stopped first. */
const NOT_STARTED = new Error('the delivery loop stopped before this attempt started')

/** While busy, the loop takes this breath between rounds so finished attempts are recorded in batches. */
const BUSY_PAUSE_MS = 5

export function startDeliveryLoop(options: LoopOptions): DeliveryLoop {
  const { db, owner, log } = options
  const pollMs = options.pollMs ?? IDLE_BACKSTOP_MS
  const maxSending = options.maxSending ?? 256
  const maxClaimed = options.maxClaimed ?? 2 * maxSending
  // Woken by deliveries only: the event dispatcher fans events out and its inserts wake this loop. Waking
  // on every event too cost the request path ~15 % of create-post throughput (a round per burst of commits
  // beside the dispatcher's own), and most events have no webhook to deliver.
  const waking = wakeOnWork(options.listenForWork, ['webhook_deliveries', 'chat_deliveries'])
  const inFlight = new Set<Promise<void>>()
  let finished: Attempt[] = []
  let stopped = false
  let sending = 0
  /** Attempts waiting for a slot: each is handed one (true) by an attempt that finished, or sent away (false) at stop. */
  const waitingToSend: ((slot: boolean) => void)[] = []

  /** Runs an attempt once fewer than `maxSending` are on the wire; throws NOT_STARTED if the loop stops first. */
  async function send<Result>(attempt: () => Promise<Result>): Promise<Result> {
    const slot = !stopped && (sending < maxSending ? (sending++, true) : await new Promise<boolean>((resolve) => waitingToSend.push(resolve)))
    if (!slot) throw NOT_STARTED
    try {
      return await attempt()
    } finally {
      const next = waitingToSend.shift()
      if (next) next(true)
      else sending--
    }
  }

  async function deliver(job: DeliveryJob) {
    try {
      const attempt = { job, result: await send(() => options.send(job)) }
      if (options.recordEach) await record([attempt])
      else finished.push(attempt)
    } catch (error) {
      // Not started (the loop is stopping) or not completed (the worker went away): hand the claim back for the next try.
      if (error !== NOT_STARTED) log.warn('webhook attempt interrupted', { webhook_id: job.webhookId, event_id: job.eventId, error: describeError(error) })
      await releaseClaim(db, owner, job).catch(() => {})
    } finally {
      // Its outcome waits to be recorded, and it frees a slot.
      ;(await waking).wake()
    }
  }

  async function flush() {
    const batch = finished
    finished = []
    await record(batch)
  }

  async function record(batch: Attempt[]) {
    const settings = { retryScale: options.retryScale, sentBy: options.sentBy }
    try {
      await recordAttempts(db, owner, batch, settings)
    } catch {
      // One bad attempt must not sink the batch: record them one by one. What still fails is sent again once its claim lapses (at-least-once).
      for (const attempt of batch) {
        await recordAttempts(db, owner, [attempt], settings).catch((error) =>
          log.error('webhook attempt not recorded', { webhook_id: attempt.job.webhookId, event_id: attempt.job.eventId, error: describeError(error) }))
      }
    }
  }

  async function deliverOther(queue: DeliveryQueue, job: unknown) {
    try {
      await queue.record(owner, job, await send(() => queue.send(job)))
    } catch (error) {
      if (error !== NOT_STARTED) log.warn(`${queue.name} attempt interrupted`, { error: String(error) })
      await queue.release(owner, job).catch(() => {})
    } finally {
      ;(await waking).wake()
    }
  }

  function track(running: Promise<void>) {
    const tracked: Promise<void> = running.finally(() => inFlight.delete(tracked))
    inFlight.add(tracked)
  }

  /** One round: record what finished, dispatch events still queued (a backlog goes out in the same round), claim what is due. True when it did any of that. */
  async function round(): Promise<boolean> {
    const recorded = finished.length
    await flush()
    const dispatched = await dispatchEvents(db)
    const room = maxClaimed - inFlight.size
    const jobs = room > 0 && !stopped ? await claimDeliveries(db, owner, room, options.secrets) : []
    if (jobs.length) options.onClaimed?.(jobs.length, inFlight.size + jobs.length)
    for (const job of jobs) track(deliver(job))
    let others = 0
    for (const queue of options.queues ?? []) {
      const space = maxClaimed - inFlight.size
      const claimed = space > 0 && !stopped ? await queue.claim(owner, space) : []
      for (const job of claimed) track(deliverOther(queue, job))
      others += claimed.length
    }
    return recorded > 0 || dispatched > 0 || jobs.length > 0 || others > 0
  }

  /** How long an idle loop may sleep: until the soonest retry (or lapsing lease) of any queue, at most `pollMs`. */
  async function idleMs(): Promise<number> {
    const due = await Promise.all([msUntilWebhookDue(db), ...(options.queues ?? []).map((queue) => queue.msUntilDue?.() ?? null)])
    return Math.max(BUSY_PAUSE_MS, Math.min(pollMs, ...due.filter((ms): ms is number => ms !== null)))
  }

  const running = (async () => {
    const waker = await waking
    while (!stopped) {
      let busy = false
      try {
        busy = await round()
        if (!stopped && !busy) {
          await waker.sleep(inFlight.size >= maxClaimed ? pollMs : await idleMs())
          // Commits come in bursts: a breath after the wake-up lets one round take the whole burst.
          await Bun.sleep(BUSY_PAUSE_MS)
        }
      } catch (error) {
        if (stopped) break
        log.error('webhook delivery loop', { error: describeError(error) })
        await Bun.sleep(1000)
      }
      if (!stopped && busy) await Bun.sleep(BUSY_PAUSE_MS)
    }
    await Promise.allSettled(inFlight)
    await flush()
    await waker.close()
  })()

  return {
    async stop() {
      stopped = true
      // Claims still waiting for a slot go back now rather than be sent during shutdown.
      for (const waiting of waitingToSend.splice(0)) waiting(false)
      ;(await waking).wake()
      await running
    },
  }
}
