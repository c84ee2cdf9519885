// The main thread's side of the background worker (worker.ts): starts it, serves its statements on
// PGlite (pglite-bridge.ts), and restarts it with the shared backoff (server/lib/restart.ts) when it throws
// or exits; meanwhile /health reports `background: restarting`. A dead worker's claims are freed at once
// (leases.ts `freeDeadOwner`), so nothing it held is lost, and nothing it had not sent is sent twice.
import type { AppContext, BackgroundState } from '../context.ts'
import { describeError } from '../db/errors.ts'
import { nextRestartDelay } from '../lib/restart.ts'
import { freeDeadOwner } from './leases.ts'
import { serveDatabase } from './pglite-bridge.ts'
import type { WorkerCommand, WorkerReport } from './worker.ts'

export interface Background {
  /** Resolves once a worker's loops run (its delivery loop holds its owner lock). */
  ready(): Promise<void>
  readonly state: BackgroundState
  /** Lets the worker finish what it is sending (within STOP_LIMIT_MS), then ends it. */
  stop(): Promise<void>
  /** Test hook: the worker exits right after its next claim, before sending any of it. */
  exitOnNextClaim(): void
}

/** A stop gives the worker this long to record its attempts in flight and close its pool (the delivery loop's own limit is 5 s); shutdown's whole limit is 15 s. */
const STOP_LIMIT_MS = 8000

const WORKER_URL = new URL('./worker.ts', import.meta.url).href

export function startBackground(ctx: AppContext): Background {
  const { log } = ctx
  let worker: Worker | undefined
  let bridge: ReturnType<typeof serveDatabase> | undefined
  let owner: number | undefined
  let stopping = false
  let startedAt = 0
  let restartDelay: number | undefined
  let readyWaiters: (() => void)[] = []
  let whenStopped: (() => void) | undefined
  const setState = (state: BackgroundState) => void (ctx.background.state = state)

  function spawn() {
    startedAt = Date.now()
    // JavaScriptCore's small heap for the worker: 0.7 MiB less idle RSS, and no drain, latency or isolation
    // figure measurably slower beside it (BENCHMARKS.md, "Notes: the eighteenth session").
    const current = new Worker(WORKER_URL, { smol: true })
    worker = current
    const pglite = ctx.database.pglite
    const served = (bridge = pglite ? serveDatabase(pglite, (answer) => current.postMessage(answer)) : undefined)
    current.onmessage = (event: MessageEvent<WorkerReport | { db: string }>) => {
      const message = event.data
      if ('db' in message) return void served?.handle(message as never)
      if (message.type === 'owner') owner = message.owner
      else if (message.type === 'ready') {
        setState('ok')
        readyWaiters.splice(0).forEach((resolve) => resolve())
      } else if (message.type === 'stopped') whenStopped?.()
    }
    current.addEventListener('error', (event) => log.error('background worker threw', { error: (event as ErrorEvent).message }))
    current.addEventListener('close', (event) => void closed(current, (event as CloseEvent).code, served))
    const start: WorkerCommand = { type: 'start', config: ctx.config, driver: ctx.database.driver }
    current.postMessage(start)
  }

  async function closed(current: Worker, code: number, served: ReturnType<typeof serveDatabase> | undefined) {
    if (current !== worker) return
    served?.workerGone()
    if (stopping) return void whenStopped?.()
    setState('restarting')
    log.error('background worker exited', { code })
    const dead = owner
    owner = undefined
    try {
      if (dead !== undefined) await freeDeadOwner(ctx.database.sql, ctx.database.driver, dead)
    } catch (error) {
      // Its leases still lapse once its lock is gone or after their time: a resend, never a loss.
      log.warn('could not free the background worker\'s claims', { error: describeError(error) })
    }
    await served?.close()
    restartDelay = nextRestartDelay(restartDelay, Date.now() - startedAt)
    log.warn('background worker restarting', { in_ms: restartDelay })
    await Bun.sleep(restartDelay)
    if (!stopping) spawn()
  }

  setState('starting')
  spawn()

  return {
    ready: () => (ctx.background.state === 'ok' ? Promise.resolve() : new Promise<void>((resolve) => readyWaiters.push(resolve))),
    get state() { return ctx.background.state },
    exitOnNextClaim: () => worker?.postMessage({ type: 'exit-on-claim' } satisfies WorkerCommand),
    async stop() {
      if (stopping) return
      stopping = true
      const current = worker
      if (!current) return
      const stopped = new Promise<void>((resolve) => (whenStopped = resolve))
      current.postMessage({ type: 'stop' } satisfies WorkerCommand)
      await Promise.race([stopped, Bun.sleep(STOP_LIMIT_MS)])
      current.terminate()
      await bridge?.close()
      readyWaiters = []
      setState('off')
    },
  }
}
