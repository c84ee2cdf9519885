// The event dispatcher loop (in the background worker): fans queued events out to the subscribers
// (server/events/dispatch.ts), woken by the NOTIFY each committed event sends (server/db/work.ts). Its
// fan-out inserts webhook and chat deliveries, whose NOTIFY wakes the delivery loop (delivery-loop.ts).
// In the worker that loop, woken by the same event notifications, fans out and claims in one transaction,
// and the dispatcher stands by (`handedOff`) while it runs. Notifications never wait on that loop: while
// it is down (its owner lock lost), the dispatcher fans out.
import type { SqlRunner } from '../db/sql-text.ts'
import type { Logger } from '../lib/log.ts'
import { IDLE_BACKSTOP_MS, type ListenForWork } from '../db/work.ts'
import { dispatchEvents } from '../events/dispatch.ts'
import type { EventSubscriber } from '../events/subscriber.ts'
import { wokenLoop, type WokenLoop } from './woken-loop.ts'

export type EventDispatcher = WokenLoop

export interface DispatcherOptions {
  db: SqlRunner
  log: Logger
  /** Wakes the loop when events commit (`Database.listenForWork`); without it the loop polls every `pollMs`. */
  listenForWork?: ListenForWork
  /** The longest idle sleep (default: the backstop of server/db/work.ts). */
  pollMs?: number
  /** Who hears each event (default: events/subscribers.ts `SUBSCRIBERS`; a server passes `subscribersFor(config)`). */
  subscribers?: readonly EventSubscriber[]
  /** How long after a wake-up or a busy round it waits before the next round (default GATHER_MS). */
  gatherMs?: number
  /**
   * True while a delivery loop in the same thread fans events out itself (delivery-loop.ts: fan-out and
   * claim in one transaction, woken by the same notifications): the dispatcher then only stands by, so a
   * burst of commits costs one round, and takes over whenever that loop is down.
   */
  handedOff?(): boolean
}

/** Commits come in bursts: a short wait lets one transaction fan out the whole burst instead of one per commit. */
const GATHER_MS = 5

/** Dispatches in a loop until stopped: at once while there is work, else when an event commits. */
export function startEventDispatcher(options: DispatcherOptions): EventDispatcher {
  return wokenLoop(options.listenForWork, ['events'], async (waker, running) => {
    while (running()) {
      let dispatched = 0
      if (!options.handedOff?.()) {
        try {
          dispatched = await dispatchEvents(options.db, undefined, options.subscribers)
        } catch (error) {
          if (!running()) break
          options.log.error('event dispatcher', { error: String(error) })
        }
      }
      if (!dispatched && running()) await waker.sleep(options.pollMs ?? IDLE_BACKSTOP_MS)
      if (running() && !options.handedOff?.()) await Bun.sleep(options.gatherMs ?? GATHER_MS)
    }
  })
}
