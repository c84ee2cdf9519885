// Runs the delivery loop (delivery-loop.ts) under a claimer number (`owner`) whose session advisory lock
// marks its leases live; in a server process it runs in the background worker (worker.ts). On PostgreSQL
// the lock sits on a connection of its own (the loop's statements share the worker's pool); if that
// connection drops, other processes may take the leases over, so the loop stops and starts again under a
// new owner. On PGlite the lock is the database's one connection's (reached through the main thread).
import { hostname } from 'node:os'
import postgres from 'postgres'
import { outboundFor } from '../lib/outbound.ts'
import { describeError } from '../db/errors.ts'
import { nextRestartDelay } from '../lib/restart.ts'
import { sendWebhook } from '../modules/webhooks/send.ts'
import type { BackgroundContext } from './context.ts'
import { chatQueue } from './chat-queue.ts'
import { startDeliveryLoop, type DeliveryLoop, type LoopOptions } from './delivery-loop.ts'
import { lockOwnerSql, LOCK_SPACE, newOwner, releaseOwner, unlockOwnerSql } from './leases.ts'

export interface RunnerOptions {
  /** Needed on Postgres, where the owner lock has a connection of its own; defaults to DATABASE_URL. */
  databaseUrl?: string
  /** The longest idle sleep of the delivery loop; it is woken by committed work long before (server/db/work.ts). */
  pollMs?: number
  /** Attempts on the wire at once (delivery-loop.ts `maxSending`; default 256). */
  maxSending?: number
  /** Told each owner the loop runs under, so the worker's supervisor can free its claims if the worker dies. */
  onOwner?(owner: number): void
  onClaimed?: LoopOptions['onClaimed']
}

export interface WebhookRunner {
  /** Resolves once the loop runs (on Postgres: holds its owner lock). */
  ready(): Promise<void>
  /** True while the loop runs under a held owner lock (it then fans events out itself). */
  delivering(): boolean
  stop(): Promise<void>
}

const STOP_WAIT_MS = 5000

/** Stops a loop, giving its attempts in flight a moment to be recorded; past that they are sent again later (at-least-once). */
const stopLoop = (loop: DeliveryLoop | undefined) => Promise.race([loop?.stop().catch(() => {}), Bun.sleep(STOP_WAIT_MS)])
/** Closes an owner-lock connection, which releases its lock; an error only means it is closed already. */
const closeLock = (lock: postgres.Sql | undefined) => lock?.end({ timeout: 1 }).catch(() => {})

export async function startWebhookRunner(ctx: BackgroundContext, options: RunnerOptions = {}): Promise<WebhookRunner> {
  const onPostgres = ctx.database.driver === 'postgres'
  const databaseUrl = options.databaseUrl ?? ctx.config.databaseUrl
  if (onPostgres && !databaseUrl) throw new Error('Webhook delivery needs the Postgres URL')
  const retryScale = ctx.config.webhookRetryScale
  const sentBy = `${hostname()}/${process.pid}`
  // Deliveries resolve names through a resolver of their own: an address cached while a request checked
  // an endpoint's URL is not reused for the attempt (each is still checked before connecting).
  const outbound = outboundFor(ctx.config)
  const sendSettings = { outbound }

  let owner = 0
  let lock: postgres.Sql | undefined
  let loop: DeliveryLoop | undefined
  let stopping = false
  let restartDelay: number | undefined
  let startedAt = 0
  const readyWaiters: { resolve(): void; reject(error: Error): void }[] = []
  let isReady = false

  const startLoop = () => startDeliveryLoop({
    db: ctx.database.sql,
    owner,
    send: (job) => sendWebhook(job, sendSettings),
    secrets: ctx.secrets,
    retryScale,
    sentBy,
    log: ctx.log,
    // One listening connection per process, shared with the dispatcher and the mailer.
    listenForWork: ctx.database.listenForWork,
    pollMs: options.pollMs,
    maxSending: options.maxSending,
    onClaimed: options.onClaimed,
    // PGlite runs one statement at a time: recording as attempts finish keeps rounds short.
    recordEach: !onPostgres,
    queues: [chatQueue(ctx, outbound, { baseUrl: ctx.config.baseUrl, retryScale, sentBy, log: ctx.log })],
  })

  /** Takes a new owner's lock and starts the loop under it; a failure (the database away) is tried again later. */
  async function start() {
    owner = newOwner()
    startedAt = Date.now()
    let held = false
    try {
      if (onPostgres) {
        // The lock lives as long as this one connection: no recycling (max_lifetime); when it closes for any
        // other reason the claims look abandoned to other processes, so this owner must stop claiming.
        const current = postgres(databaseUrl!, {
          max: 1, max_lifetime: null, onnotice: () => {}, connection: { application_name: 'chorus-webhooks-lock' },
          // Only a lock that was held is lost; a connection that dropped while taking it fails `start` instead.
          onclose: () => { if (held && !stopping && current === lock) void lostLock() },
        })
        lock = current
        await current`select pg_advisory_lock(${LOCK_SPACE}, ${owner})`
      } else {
        await ctx.database.sql.rows(lockOwnerSql(owner))
      }
    } catch (error) {
      await closeLock(lock)
      lock = undefined
      if (stopping) return
      ctx.log.error('webhook delivery could not start', { error: describeError(error) })
      return restartLater()
    }
    held = true
    // Stopped while taking the lock: `stop` may have run already and found no lock to release.
    if (stopping) return void (await closeLock(lock))
    loop = startLoop()
    options.onOwner?.(owner)
    ctx.log.info('webhook delivery ready', { owner })
    isReady = true
    readyWaiters.splice(0).forEach((waiter) => waiter.resolve())
  }

  async function lostLock() {
    ctx.log.error('lost the webhook owner lock (database connection closed)', { owner })
    isReady = false
    const gone = { owner, lock, loop }
    lock = undefined
    loop = undefined
    await stopLoop(gone.loop)
    await closeLock(gone.lock)
    // Its claims are free for anyone now; hand them back rather than wait for their leases to lapse.
    await releaseOwner(ctx.database.sql, gone.owner).catch(() => {})
    await restartLater()
  }

  async function restartLater() {
    restartDelay = nextRestartDelay(restartDelay, Date.now() - startedAt)
    ctx.log.warn('webhook delivery restarting', { in_ms: restartDelay })
    await Bun.sleep(restartDelay)
    if (!stopping) await start()
  }

  void start()

  return {
    ready: () => (isReady ? Promise.resolve() : new Promise<void>((resolve, reject) => readyWaiters.push({ resolve, reject }))),
    delivering: () => isReady && !stopping && loop !== undefined,
    async stop() {
      stopping = true
      await stopLoop(loop)
      if (onPostgres) {
        await closeLock(lock)
      } else if (owner) {
        await ctx.database.sql.rows(unlockOwnerSql(owner)).catch(() => {})
      }
      readyWaiters.splice(0).forEach((waiter) => waiter.reject(new Error('stopped')))
    },
  }
}
