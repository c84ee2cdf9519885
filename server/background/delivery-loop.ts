// The delivery loop: take the webhook lane's events, claim what is due, send with bounded concurrency, record
// each outcome.
// It runs in the background worker of every server process (delivery-runner.ts); the state lives in the
// database, so processes share the work.
// It never polls: it sleeps until committed work is announced (server/db/work.ts), an attempt in
// flight finishes, or the next retry falls due.
import type { SqlRunner } from '../db/sql-text.ts'
import { describeError } from '../db/errors.ts'
import type { Logger } from '../lib/log.ts'
import type { Sealer } from '../lib/secrets.ts'
import { announceWork, IDLE_BACKSTOP_MS, queueTransaction, wakeOnWork, type ListenForWork, type Waker, type WorkQueue } from '../db/work.ts'
import { claimDeliveriesIn, msUntilWebhookDue, recordAttempts, releaseClaim, LANE_BATCH, takeWebhookEvents, type Attempt } from '../modules/webhooks/queue.ts'
import { releaseOwnerExcept, WEBHOOK_JOBS } from './leases.ts'
import type { AttemptResult, DeliveryJob } from '../modules/webhooks/send.ts'

/**
 * Another kind of delivery job run by the same loop (chat messages): claimed with the shared lease
 * (leases.ts `claimDue`), sent, and recorded one by one.
 */
export interface DeliveryQueue<Job = any, Result = any> {
  name: string
  /** Its table, announced when claims are handed back (server/db/work.ts). */
  table: WorkQueue
  claim(owner: number, limit: number): Promise<Job[]>
  send(job: Job): Promise<Result>
  record(owner: number, job: Job, result: Result): Promise<void>
  /** Gives a claim back untouched (the attempt never completed). */
  release(owner: number, job: Job): Promise<void>
  /** Gives back every claim of `owner` but the jobs it holds (a claim whose answer was lost may have leased more). */
  releaseAllBut(owner: number, held: Iterable<Job>): Promise<number>
  /** Milliseconds until its next job falls due, or null when none is pending. */
  msUntilDue?(): Promise<number | null>
}

export interface LoopOptions {
  /** Runs the loop's statements (SQL text: the worker loads no drizzle). */
  db: SqlRunner
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

/**
 * While many attempts are in flight (a backlog), the loop takes this breath between rounds so finished
 * attempts are recorded, and free slots claimed, in batches. With few in flight it goes straight on: a
 * new event's deliveries are inserted, leased and sent in the round its notification starts.
 */
const BUSY_PAUSE_MS = 5
/** The longest a loop kept busy by new events goes without claiming queued deliveries (a dead process's leases). */
const CLAIM_AT_LEAST_EVERY_MS = 5000

export function startDeliveryLoop(options: LoopOptions): DeliveryLoop {
  const { db, owner, log } = options
  const pollMs = options.pollMs ?? IDLE_BACKSTOP_MS
  const maxSending = options.maxSending ?? 256
  const maxClaimed = options.maxClaimed ?? 2 * maxSending
  // Woken by committed events too: this loop takes the webhook lane's events and inserts their deliveries leased
  // to itself in one statement, so an event is sent one round after its commit, whatever the other subscribers
  // (the dispatcher's fan-out, beside it) still have to do. In the worker the dispatcher leaves the lane to this
  // loop while it runs (dispatcher.ts `handedOff`).
  // The other queues (chat) are claimed only when they may have work: at start, after a notification on
  // their table, after their own activity, or when their next job falls due. A claim is a transaction,
  // and most rounds (an event, a webhook) give them nothing.
  // Likewise the lane and the webhook claim run only when there may be something to take: an event or a
  // delivery was announced, a claim filled its room, a claim was handed back, or a due time came.
  let othersDue = true
  let webhooksDue = true
  /**
   * Whether queued deliveries may be due for the claim: one not leased as it was inserted (a lane's beyond its
   * room, another process's, a manual retry: each announced on webhook_deliveries), a retry or a lapsed lease
   * whose time came, a claim handed back. A round woken by new events only leases what the lane inserts as it
   * inserts it and skips the claim (~0.3 ms of PostgreSQL planning and reading on every event's round).
   */
  let deliveriesDue = true
  let lastClaimAt = 0
  /** When the next retry or lapsing lease falls due (performance.now()), and whether that must be asked again. */
  let nextDueAt = 0
  let dueStale = true
  const waking = wakeOnWork(options.listenForWork, ['events', 'webhook_deliveries', 'chat_deliveries'], (table) => {
    if (table === '*') dueStale = true
    if (table === '*' || table === 'webhook_deliveries') deliveriesDue = true
    if (table !== 'events' && table !== 'webhook_deliveries') othersDue = true
    if (table !== 'chat_deliveries') webhooksDue = true
  })
  const inFlight = new Set<Promise<void>>()
  /** The webhook deliveries this loop holds a lease on, from their claim until their attempt is recorded or handed back. */
  const held = new Set<DeliveryJob>()
  /**
   * A lane or claim statement failed without an answer: it may have committed leases to this loop that it never
   * heard of. The next round frees every lease of this loop's that it does not hold, before it takes anything.
   */
  let leasesInDoubt = false
  /** The same for the other queues: the jobs each holds, and the queues whose last claim failed. */
  const heldOthers = new Map<DeliveryQueue, Set<unknown>>((options.queues ?? []).map((queue) => [queue, new Set()]))
  const othersInDoubt = new Set<DeliveryQueue>()
  let finished: Attempt[] = []
  /** The job tables this loop handed claims back to, announced once it has stopped. */
  const handedBack = new Set<WorkQueue>()
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
      held.delete(job)
      webhooksDue = deliveriesDue = true
      handedBack.add('webhook_deliveries')
    } finally {
      // Its outcome waits to be recorded, and it frees a slot.
      ;(await waking).wake()
    }
  }

  /** The recording of finished attempts under way, if any: one at a time, and no round waits for it. */
  let recording: Promise<void> | undefined

  /**
   * Records what has finished since the last recording, unless one is still under way (the next takes what
   * finished meanwhile). A round does not wait for it: under load its transaction's four round trips took as
   * long as the lane, and a new event's lane waited behind them.
   */
  function flush(): Promise<void> {
    if (recording || !finished.length) return recording ?? Promise.resolve()
    const batch = finished
    finished = []
    const retries = batch.some(({ result }) => !result.success)
    recording = record(batch).finally(async () => {
      recording = undefined
      // The loop may have gone to sleep meanwhile: a retry now scheduled changes when it must wake, and attempts
      // that finished meanwhile wait to be recorded.
      if (retries || finished.length) (await waking).wake()
    })
    return recording
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
    // Recorded, or left to lapse: either way no longer this loop's to hold.
    for (const { job } of batch) held.delete(job)
    // A failed attempt is retried later: the next due time changes, once its retry is written.
    if (batch.some(({ result }) => !result.success)) dueStale = true
  }

  async function deliverOther(queue: DeliveryQueue, job: unknown) {
    try {
      await queue.record(owner, job, await send(() => queue.send(job)))
    } catch (error) {
      if (error !== NOT_STARTED) log.warn(`${queue.name} attempt interrupted`, { error: String(error) })
      await queue.release(owner, job).catch(() => {})
      handedBack.add(queue.table)
    } finally {
      heldOthers.get(queue)!.delete(job)
      othersDue = dueStale = true
      ;(await waking).wake()
    }
  }

  function track(running: Promise<void>) {
    const tracked: Promise<void> = running.finally(() => inFlight.delete(tracked))
    inFlight.add(tracked)
  }

  /**
   * Takes the webhook lane's queued events (one statement: one round trip between an event's notification and
   * its request), then claims the due webhook deliveries (when `claim`) in a queue transaction. The lane's
   * deliveries are inserted leased to this loop, as many as it has room for (the rest wait for a later claim),
   * so a new event's delivery is never updated in the transaction that inserted it; the claim has the room
   * they left. The jobs are sent once both have committed.
   */
  async function takeAndClaim(room: number, claim: boolean) {
    const lane = await takeWebhookEvents(db, owner, room, options.secrets).catch((error) => {
      leasesInDoubt = true
      throw error
    })
    const claimRoom = room - lane.jobs.length
    let due: DeliveryJob[] = []
    try {
      if (claim && claimRoom > 0) due = await queueTransaction(db, (tx) => claimDeliveriesIn(tx, owner, claimRoom, options.secrets))
    } catch (error) {
      // The lane's deliveries are leased to this loop and committed: they go out whatever became of the claim,
      // which the next round runs again.
      log.error('webhook claim', { error: describeError(error) })
      deliveriesDue = leasesInDoubt = true
    }
    return { taken: lane.taken, claimed: due.length, claimRoom, jobs: [...lane.jobs, ...due] }
  }

  /** One round's lane and claim (`takeAndClaim`), its jobs sent once it has committed. */
  async function laneAndClaim(room: number) {
    if (leasesInDoubt) {
      await freeUnheld('webhook', () => releaseOwnerExcept(db, WEBHOOK_JOBS, owner, Array.from(held, (job) => [job.webhookId, job.eventId])))
      leasesInDoubt = false
      webhooksDue = deliveriesDue = true
    }
    if (!webhooksDue) return 0
    webhooksDue = false
    const claimRoom = stopped ? 0 : Math.max(0, room)
    // A retry may have fallen due while the loop was too busy to sleep until it (or it is not known yet); and
    // a process killed outright leaves leases that only a claim notices, so one runs every few seconds
    // while events keep the loop awake.
    const now = performance.now()
    if (dueStale || now >= nextDueAt - 1 || now - lastClaimAt >= CLAIM_AT_LEAST_EVERY_MS) deliveriesDue = true
    const claim = deliveriesDue && claimRoom > 0
    if (claim) {
      deliveriesDue = false
      lastClaimAt = now
    }
    const { taken, claimed, claimRoom: leftForClaim, jobs } = await takeAndClaim(claimRoom, claim)
    // A claim that filled its room (or found none left by the lane) may have left due deliveries behind.
    if (claim && claimed >= leftForClaim) deliveriesDue = true
    if (jobs.length) options.onClaimed?.(jobs.length, inFlight.size + jobs.length)
    for (const job of jobs) {
      held.add(job)
      track(deliver(job))
    }
    // A full batch may have left more behind, and so may a claim that filled its room or had none (what this
    // round's lane inserted beyond the room is still unclaimed): the next round takes it. Clearing the flag after a
    // claim with no room left a burst's last events waiting for the idle backstop (30 s) once the attempts in
    // flight had finished: BENCHMARKS.md, "a burst stalled for the backstop".
    if (taken >= LANE_BATCH || jobs.length >= room) webhooksDue = true
    return taken + jobs.length
  }

  /** Frees what a claim whose answer was lost left leased to this loop (`release`: every lease of its owner it does not hold). */
  async function freeUnheld(name: string, release: () => Promise<number>) {
    const freed = await release()
    if (freed) log.warn(`${name} leases of a lost answer freed`, { owner, freed })
  }

  async function claimOthers(queue: DeliveryQueue, room: number) {
    const held = heldOthers.get(queue)!
    if (othersInDoubt.has(queue)) {
      await freeUnheld(queue.name, () => queue.releaseAllBut(owner, held))
      othersInDoubt.delete(queue)
    }
    const claimed = room > 0 && !stopped ? await queue.claim(owner, room).catch((error) => {
      othersInDoubt.add(queue)
      throw error
    }) : []
    for (const job of claimed) {
      held.add(job)
      track(deliverOther(queue, job))
    }
    if (claimed.length >= room) othersDue = true
    return claimed.length
  }

  /**
   * One round: starts recording what finished (in the background: `flush`), takes the lane's queued events and
   * claims what is due (a backlog goes out in the same round), then the other queues. Webhook jobs are on the
   * wire before the other queues are claimed. True when it took or claimed anything.
   */
  async function round(): Promise<boolean> {
    void flush()
    let claimed = await laneAndClaim(maxClaimed - inFlight.size)
    if (othersDue) {
      othersDue = false
      for (const queue of options.queues ?? []) claimed += await claimOthers(queue, maxClaimed - inFlight.size)
    }
    // Go straight on only with work known to be left; anything announced meanwhile has woken the waker.
    return claimed > 0 && (webhooksDue || othersDue || finished.length > 0)
  }

  /** How long an idle loop may sleep: until the soonest retry (or lapsing lease) of any queue, at most `pollMs`. */
  async function idleMs(): Promise<{ ms: number; othersInMs: number }> {
    const [webhooksIn, ...othersIn] = await Promise.all([msUntilWebhookDue(db), ...(options.queues ?? []).map((queue) => queue.msUntilDue?.() ?? null)])
    const known = (list: (number | null)[]) => list.filter((ms): ms is number => ms !== null)
    const othersInMs = Math.min(Infinity, ...known(othersIn))
    return { ms: Math.max(BUSY_PAUSE_MS, Math.min(pollMs, othersInMs, ...known([webhooksIn ?? null]))), othersInMs }
  }

  /** Sleeps until woken or the next job falls due; the other queues are claimed again once theirs has. */
  async function idle(waker: Waker) {
    // A slot freed by a finished attempt wakes the loop too: the room it makes is claimed.
    const full = inFlight.size >= maxClaimed
    if (full) webhooksDue = othersDue = deliveriesDue = true
    let othersAt = Infinity
    if (!full && (dueStale || performance.now() >= nextDueAt)) {
      // Cleared before asking: a recording that ends during the question marks it stale again.
      dueStale = false
      const { ms, othersInMs } = await idleMs()
      nextDueAt = performance.now() + ms
      othersAt = performance.now() + othersInMs
    }
    await waker.sleep(full ? pollMs : Math.max(BUSY_PAUSE_MS, nextDueAt - performance.now()))
    const now = performance.now()
    // Woken by the clock: whatever fell due is claimed.
    if (now >= nextDueAt - 1) webhooksDue = othersDue = deliveriesDue = true
    else if (now >= othersAt - 1) othersDue = true
  }

  const running = (async () => {
    const waker = await waking
    while (!stopped) {
      let busy = false
      try {
        busy = await round()
        if (!stopped && !busy) await idle(waker)
      } catch (error) {
        if (stopped) break
        log.error('webhook delivery loop', { error: describeError(error) })
        // What the failed round meant to take is still there.
        webhooksDue = othersDue = dueStale = deliveriesDue = true
        await Bun.sleep(1000)
      }
      if (!stopped && busy && inFlight.size >= maxSending / 4) await Bun.sleep(BUSY_PAUSE_MS)
    }
    await Promise.allSettled(inFlight)
    while (recording || finished.length) await flush()
    await waker.close()
    // Claims handed back are updates, which wake no loop: the other processes' loops are told, to take them now.
    for (const table of handedBack) await announceWork(db, table).catch(() => {})
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
