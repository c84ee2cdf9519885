// Main-thread side of delivery: starts the worker thread, restarts it when it dies, and on PGlite
// (one process owns the database) runs the delivery loop here, handing each HTTP attempt to the worker.
import { hostname } from 'node:os'
import { sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { chatQueueFor, chatSettingsOf } from '../integrations/delivery.ts'
import { startDeliveryLoop, type DeliveryLoop } from './loop.ts'
import type { ToMain, ToWorker, WorkerSettings } from './protocol.ts'
import { lockOwnerSql, LOCK_SPACE, newOwner, releaseOwner } from './queue.ts'
import type { AttemptResult, DeliveryJob } from './send.ts'

export interface RunnerOptions {
  /** Needed on Postgres, where the worker opens its own connections; defaults to DATABASE_URL. */
  databaseUrl?: string
  /** The longest idle sleep of the delivery loop; it is woken by committed work long before (server/db/work.ts). */
  pollMs?: number
  /** Attempts on the wire at once (loop.ts `maxSending`; default 256). */
  maxSending?: number
}

export interface WebhookRunner {
  /** The current worker thread (replaced after a crash). */
  readonly worker: Worker
  /** Resolves once a worker has started (and, on Postgres, holds its owner lock). */
  ready(): Promise<void>
  stop(): Promise<void>
}

const RESTART_MIN_MS = 200
const RESTART_MAX_MS = 30_000

export async function startWebhookRunner(ctx: AppContext, options: RunnerOptions = {}): Promise<WebhookRunner> {
  const claimInWorker = ctx.database.driver === 'postgres'
  const databaseUrl = options.databaseUrl ?? ctx.config.databaseUrl
  if (claimInWorker && !databaseUrl) throw new Error('The webhook worker needs the Postgres URL')
  const base = {
    sealingKey: ctx.secrets.sealingKey,
    allowPrivate: ctx.config.webhookAllowPrivate,
    retryScale: ctx.config.webhookRetryScale,
    dnsResolver: ctx.config.dnsResolver,
    logLevel: ctx.config.logLevel,
    sentBy: `${hostname()}/${process.pid}`,
    pollMs: options.pollMs,
    maxSending: options.maxSending,
    chat: chatSettingsOf(ctx.config),
  }

  let worker!: Worker
  let owner = 0
  let stopping = false
  let restartDelay = RESTART_MIN_MS
  let startedAt = 0
  let readyWaiters: { resolve(): void; reject(error: Error): void }[] = []
  let isReady = false
  const pending = new Map<number, { resolve(result: AttemptResult): void; reject(error: Error): void }>()
  let nextId = 0

  function spawn() {
    owner = newOwner()
    isReady = false
    startedAt = Date.now()
    const current = new Worker(new URL('./worker.ts', import.meta.url))
    worker = current
    current.onmessage = (event: MessageEvent<ToMain>) => {
      const message = event.data
      if (message.type === 'ready') {
        ctx.log.info('webhook worker ready', { claims: claimInWorker ? 'in the worker' : 'in the main thread', owner })
        isReady = true
        readyWaiters.splice(0).forEach((waiter) => waiter.resolve())
      } else if (message.type === 'result') {
        pending.get(message.id)?.resolve(message.result)
        pending.delete(message.id)
      } else if (message.type === 'fatal') {
        ctx.log.error('webhook worker failed', { error: message.error })
        current.terminate()
      }
    }
    current.addEventListener('error', (event) => {
      ctx.log.error('webhook worker crashed', { error: (event as ErrorEvent).message })
      current.terminate()
    })
    current.addEventListener('close', () => void onExit(current, owner))
    const settings: WorkerSettings = { ...base, mode: claimInWorker ? 'claim' : 'send', databaseUrl, owner }
    current.postMessage({ type: 'start', settings } satisfies ToWorker)
  }

  async function onExit(gone: Worker, goneOwner: number) {
    if (gone !== worker) return
    for (const [id, waiter] of pending) {
      waiter.reject(new Error('webhook worker exited'))
      pending.delete(id)
    }
    if (stopping) return
    // Its claims die with it; free them now rather than when its lock or lease lapses.
    if (claimInWorker) await releaseOwner(ctx.db, goneOwner).catch(() => {})
    restartDelay = Date.now() - startedAt > 60_000 ? RESTART_MIN_MS : Math.min(restartDelay * 2, RESTART_MAX_MS)
    ctx.log.warn('webhook worker exited; restarting', { in_ms: restartDelay })
    setTimeout(() => { if (!stopping) spawn() }, restartDelay)
  }

  spawn()

  let loop: DeliveryLoop | undefined
  let mainOwner = 0
  if (!claimInWorker) {
    mainOwner = newOwner()
    await ctx.db.execute(lockOwnerSql(mainOwner))
    loop = startDeliveryLoop({
      db: ctx.db,
      owner: mainOwner,
      send: (job: DeliveryJob) => new Promise<AttemptResult>((resolve, reject) => {
        const id = ++nextId
        // A worker that never answers must not hold the claim forever: past the HTTP timeout, give it back.
        const timer = setTimeout(() => {
          pending.delete(id)
          reject(new Error('the webhook worker did not answer'))
        }, 30_000)
        pending.set(id, { resolve: (result) => (clearTimeout(timer), resolve(result)), reject: (error) => (clearTimeout(timer), reject(error)) })
        worker.postMessage({ type: 'send', id, job } satisfies ToWorker)
      }),
      secrets: ctx.secrets,
      retryScale: base.retryScale,
      sentBy: base.sentBy,
      log: ctx.log,
      listenForWork: ctx.database.listenForWork,
      pollMs: base.pollMs,
      maxSending: base.maxSending,
      recordEach: true,
      queues: [chatQueueFor(ctx.db, ctx.secrets, ctx.outbound, base.chat, { retryScale: base.retryScale, sentBy: base.sentBy, log: ctx.log })],
    })
  }

  return {
    get worker() {
      return worker
    },
    ready: () => (isReady ? Promise.resolve() : new Promise<void>((resolve, reject) => readyWaiters.push({ resolve, reject }))),
    async stop() {
      stopping = true
      await loop?.stop()
      if (mainOwner) await ctx.db.execute(sql`select pg_advisory_unlock(${sql.raw(String(LOCK_SPACE))}, ${mainOwner})`).catch(() => {})
      const current = worker
      const stopped = new Promise<void>((resolve) => {
        current.addEventListener('message', (event) => { if ((event as MessageEvent<ToMain>).data.type === 'stopped') resolve() })
        current.addEventListener('close', () => resolve())
      })
      current.postMessage({ type: 'stop' } satisfies ToWorker)
      // Attempts in flight get a moment to be recorded; anything cut short is sent again later (at-least-once).
      await Promise.race([stopped, Bun.sleep(5000)])
      current.terminate()
      readyWaiters.splice(0).forEach((waiter) => waiter.reject(new Error('stopped')))
    },
  }
}
