import { wakeOnWork, type ListenForWork, type Waker, type WorkQueue } from '../db/work.ts'

export interface WokenLoop {
  /** Ends the loop: wakes it from its sleep and waits for the round in progress. */
  stop(): Promise<void>
}

/**
 * Runs `body` with a waker that committed work on `tables` wakes (server/db/work.ts), until stopped; `body`
 * loops while `running()` is true. The dispatcher and the mailer are such loops.
 *
 * `gatherMs`: for work that is not urgent (mail, duplicate suggestions), each sleep ends that much later than
 * its wake, so the work a burst commits meanwhile is claimed in one batch instead of one claim per row.
 */
export function wokenLoop(listen: ListenForWork | undefined, tables: readonly WorkQueue[], body: (waker: Waker, running: () => boolean) => Promise<void>, options: { gatherMs?: number } = {}): WokenLoop {
  let stopped = false
  const waking = wakeOnWork(listen, tables)
  const done = (async () => {
    const woken = await waking
    const gatherMs = options.gatherMs ?? 0
    const waker: Waker = gatherMs ? {
      wake: () => woken.wake(),
      sleep: async (ms) => {
        await woken.sleep(ms)
        if (!stopped) await Bun.sleep(gatherMs)
      },
    } : woken
    await body(waker, () => !stopped)
    await woken.close()
  })()
  return {
    async stop() {
      stopped = true
      ;(await waking).wake()
      await done
    },
  }
}
