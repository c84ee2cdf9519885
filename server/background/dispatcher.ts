// The event dispatcher loop (in the background worker): fans queued events out to the subscribers
// (server/events/dispatch.ts), woken by the NOTIFY each committed event sends (server/db/work.ts). Its
// fan-out inserts chat deliveries, whose NOTIFY wakes the delivery loop (delivery-loop.ts). Webhooks have a
// lane of their own (migration 0066), which that loop takes, woken by the same event notifications, and
// leases as it inserts; the dispatcher leaves the lane to it while it runs (`handedOff`) and takes it, with
// the deliveries queued unleased, while it is down (its owner lock lost) or in a thread without one.
import type { SqlRunner } from '../db/sql-text.ts'
import type { Logger } from '../lib/log.ts'
import { IDLE_BACKSTOP_MS, type ListenForWork } from '../db/work.ts'
import { dispatchEvents } from '../events/dispatch.ts'
import type { EventSubscriber } from '../events/subscriber.ts'
import { queueWebhookEvents } from '../modules/webhooks/queue.ts'
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
   * True while a delivery loop in the same thread takes the webhook lane itself (delivery-loop.ts: its
   * deliveries leased to the loop as they are inserted, woken by the same notifications): the dispatcher then
   * leaves the lane to it, and takes it whenever that loop is down.
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
      // The two queues are independent: a failing subscriber holds no webhook back, nor a failing lane a subscriber.
      const [fanOut, lane] = await Promise.allSettled([
        dispatchEvents(options.db, undefined, options.subscribers),
        options.handedOff?.() ? 0 : queueWebhookEvents(options.db),
      ])
      for (const result of [fanOut, lane]) {
        if (result.status === 'fulfilled') dispatched += result.value
        else if (running()) options.log.error('event dispatcher', { error: String(result.reason) })
      }
      if (!running()) break
      if (!dispatched) await waker.sleep(options.pollMs ?? IDLE_BACKSTOP_MS)
      if (running()) await Bun.sleep(options.gatherMs ?? GATHER_MS)
    }
  })
}
