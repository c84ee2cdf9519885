import { wakeOnWork, type ListenForWork, type Waker, type WorkQueue } from '../db/work.ts'

export interface WokenLoop {
  /** Ends the loop: wakes it from its sleep and waits for the round in progress. */
  stop(): Promise<void>
}

/**
 * Runs `body` with a waker that committed work on `tables` wakes (server/db/work.ts), until stopped; `body`
 * loops while `running()` is true. The dispatcher and the mailer are such loops.
 */
export function wokenLoop(listen: ListenForWork | undefined, tables: readonly WorkQueue[], body: (waker: Waker, running: () => boolean) => Promise<void>): WokenLoop {
  let stopped = false
  const waking = wakeOnWork(listen, tables)
  const done = (async () => {
    const waker = await waking
    await body(waker, () => !stopped)
    await waker.close()
  })()
  return {
    async stop() {
      stopped = true
      ;(await waking).wake()
      await done
    },
  }
}
