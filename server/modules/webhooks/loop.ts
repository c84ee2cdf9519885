// The delivery loop: fan out, claim what is due, send with bounded concurrency, record each outcome.
// On Postgres it runs inside the worker thread; on PGlite in the main thread (which owns the
// database), with `send` handing each job to the worker. Either way the state lives in the database.
import type { Db } from '../../db/client.ts'
import type { Logger } from '../../lib/log.ts'
import type { SealKey } from '../../lib/seal.ts'
import { claimDeliveries, dispatchEvents, recordAttempt, releaseClaim } from './queue.ts'
import type { AttemptResult, DeliveryJob } from './send.ts'

export interface LoopOptions {
  db: Db
  /** This loop's claimer number; the caller holds its advisory lock for the loop's lifetime. */
  owner: number
  send(job: DeliveryJob): Promise<AttemptResult>
  sealKey: SealKey
  retryScale: number
  /** `host/pid`, kept on each log row. */
  sentBy: string
  log: Logger
  pollMs?: number
  maxInFlight?: number
}

export interface DeliveryLoop {
  /** Stops claiming and waits for the attempts in flight to be recorded. */
  stop(): Promise<void>
}

export function startDeliveryLoop(options: LoopOptions): DeliveryLoop {
  const { db, owner, log } = options
  const pollMs = options.pollMs ?? 100
  const maxInFlight = options.maxInFlight ?? 64
  const inFlight = new Set<Promise<void>>()
  let stopped = false
  let wake: (() => void) | undefined

  const pause = (ms: number) => new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      wake = undefined
      resolve()
    }
    const timer = setTimeout(done, ms)
    wake = done
  })

  async function deliver(job: DeliveryJob) {
    let result: AttemptResult
    try {
      result = await options.send(job)
    } catch (error) {
      // The attempt did not complete (the worker went away): hand the claim back for the next try.
      log.warn('webhook attempt interrupted', { webhook_id: job.webhookId, event_id: job.eventId, error: String(error) })
      await releaseClaim(db, owner, job).catch(() => {})
      return
    }
    try {
      await recordAttempt(db, owner, job, result, { retryScale: options.retryScale, sentBy: options.sentBy })
    } catch (error) {
      // Unrecorded, the claim lapses and the delivery is sent again: at-least-once.
      log.error('webhook attempt not recorded', { webhook_id: job.webhookId, event_id: job.eventId, error: String(error) })
    }
  }

  async function tick(): Promise<boolean> {
    const dispatched = await dispatchEvents(db)
    const room = maxInFlight - inFlight.size
    const jobs = room > 0 && !stopped ? await claimDeliveries(db, owner, room, options.sealKey) : []
    for (const job of jobs) {
      const running: Promise<void> = deliver(job).finally(() => {
        inFlight.delete(running)
        wake?.()
      })
      inFlight.add(running)
    }
    return dispatched > 0 || jobs.length > 0
  }

  const running = (async () => {
    while (!stopped) {
      let busy = false
      try {
        busy = await tick()
      } catch (error) {
        if (stopped) break
        log.error('webhook delivery loop', { error: String(error) })
        await pause(1000)
      }
      if (!busy && !stopped) await pause(pollMs)
    }
    await Promise.allSettled(inFlight)
  })()

  return {
    async stop() {
      stopped = true
      wake?.()
      await running
    },
  }
}
