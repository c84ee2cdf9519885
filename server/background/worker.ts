// The background worker's entry: a Bun Worker (one per server process, started by supervisor.ts) that
// runs every background loop (the event dispatcher, webhook and chat delivery, the mailer), so the main
// thread serves HTTP only. It imports only what those loops need (the database driver, the queue
// statements, signing, the outbound guard, mail): never Elysia, routes, TypeBox models, MCP or the portal's
// pages (test/api/background-imports.test.ts). On PostgreSQL it opens a small pool of its own; on PGlite
// its statements run in the main thread (pglite-bridge.ts). Its loops run SQL text (server/db/sql-text.ts):
// at idle it holds neither drizzle nor the schema. Drizzle is built on first use of `ctx.db`, by the rare
// loops' work (mail, duplicate checks, imports, chat sends), which load with their first job (lazy-loop.ts).
//
// Messages: main → worker  { type: 'start', config, driver }  { type: 'stop' }  { type: 'exit-on-claim' } (test hook)
//           worker → main  { type: 'ready' }  { type: 'owner', owner }  { type: 'stopped' }  and the bridge's requests
import type { Config } from '../config.ts'
import { subscribersFor } from '../events/subscribers.ts'
import { outboundFor } from '../lib/outbound.ts'
import type { Db } from '../db/client.ts'
import { unhandledRejectionHandler } from '../db/errors.ts'
import { openPostgresPool } from '../db/postgres-pool.ts'
import { createLogger } from '../lib/log.ts'
import { createMailer } from '../lib/mail.ts'
import { createSecrets } from '../lib/secrets.ts'
import { createStorage } from '../lib/storage.ts'
import type { BackgroundContext } from './context.ts'
import { startWebhookRunner } from './delivery-runner.ts'
import { startEventDispatcher } from './dispatcher.ts'
import { lazyLoop, PENDING_DUPLICATE_CHECKS, PENDING_IMPORTS, PENDING_MAIL } from './lazy-loop.ts'
import { bridgedDatabase, type BridgeAnswer } from './pglite-bridge.ts'

declare const self: Worker

export type WorkerCommand =
  | { type: 'start'; config: Config & { secretKey: string }; driver: 'pglite' | 'postgres' }
  | { type: 'stop' }
  | { type: 'exit-on-claim' }
export type WorkerReport = { type: 'ready' } | { type: 'owner'; owner: number } | { type: 'stopped' }

/** Connections of the worker's own pool on PostgreSQL: one claim, one record and one dispatch run at a time, and the mailer. */
const POOL_SIZE = 4

const report = (message: WorkerReport) => self.postMessage(message)
let bridge: ReturnType<typeof bridgedDatabase> | undefined
let exitOnClaim = false
let stop: (() => Promise<void>) | undefined
let stopping = false

async function start(config: Config & { secretKey: string }, driver: 'pglite' | 'postgres') {
  const log = createLogger(config.logLevel)
  // As on the main thread (server/index.ts): a connection lost while it starts up is no reason to end the worker.
  process.on('unhandledRejection', unhandledRejectionHandler(log, () => process.exit(1)))
  let database: BackgroundContext['database'] & { db: Db; close?(): Promise<void> }
  if (driver === 'pglite') {
    bridge = bridgedDatabase((request) => self.postMessage(request))
    database = bridge.database
  } else {
    const pool = openPostgresPool(config.databaseUrl!, { poolSize: POOL_SIZE })
    let db: Db | undefined
    database = {
      driver: 'postgres', sql: pool.sql, listenForWork: pool.listenForWork, close: () => pool.client.end({ timeout: 5 }),
      // drizzle over the same pool, loaded when a rare loop's work first needs it. Imported, not required:
      // `require` would load drizzle's CommonJS build beside the ES modules the feature modules import.
      async loadDb() {
        if (db) return
        const [{ drizzle }, { markEffectsOnCommit }] = await Promise.all([import('drizzle-orm/postgres-js'), import('../db/effects.ts')])
        db ??= markEffectsOnCommit(drizzle(pool.client) as unknown as Db)
      },
      get db() {
        if (!db) throw new Error('drizzle is not loaded in the background worker (loadDb)')
        return db
      },
    }
  }
  const ctx: BackgroundContext = {
    config, database, log,
    get db() { return database.db },
    mail: createMailer(config, database.sql, log),
    secrets: await createSecrets(config.secretKey),
    outbound: outboundFor(config),
    storage: createStorage(config),
  }
  let deliveries: Awaited<ReturnType<typeof startWebhookRunner>> | undefined
  // While the delivery loop runs it takes the webhook lane and claims the lane's deliveries in one transaction;
  // the dispatcher covers the lane while it is down, and fans every event out to the other subscribers.
  const dispatcher = startEventDispatcher({ db: database.sql, log, listenForWork: database.listenForWork, subscribers: subscribersFor(config), handedOff: () => deliveries?.delivering() ?? false })
  const rare = { listen: database.listenForWork, runner: database.sql, onError: (error: unknown) => log.error('background probe', { error: String(error) }) }
  const mailer = lazyLoop({ ...rare, tables: ['notification_events', 'changelog_emails', 'subscriber_updates'], pending: PENDING_MAIL,
    start: async () => (await database.loadDb?.(), (await import('./mailer.ts')).startMailer(ctx)) })
  const suggester = lazyLoop({ ...rare, tables: ['duplicate_checks'], pending: PENDING_DUPLICATE_CHECKS,
    start: async () => (await database.loadDb?.(), (await import('./suggester.ts')).startSuggester(ctx)) })
  let owner = 0
  deliveries = await startWebhookRunner(ctx, {
    onOwner: (current) => {
      owner = current
      report({ type: 'owner', owner })
    },
    // The test hook: the worker dies right after a claim, before any of it is sent (its leases are all that is left).
    onClaimed: (_claimed, held) => { if (exitOnClaim && held > 0) process.exit(70) },
  })
  let imports: ReturnType<typeof lazyLoop> | undefined
  stop = async () => {
    stopping = true
    await imports?.stop()
    await deliveries.stop()
    await Promise.all([dispatcher.stop(), mailer.stop(), suggester.stop()])
    await database.close?.()
  }
  try {
    await deliveries.ready()
  } catch (error) {
    // A stop before the runner was ready ends the wait: nothing failed.
    if (stopping) return
    throw error
  }
  // Imports are claimed under the delivery loop's owner number, whose lock is live exactly while this worker is.
  imports = lazyLoop({ ...rare, tables: ['imports'], pending: PENDING_IMPORTS,
    start: async () => (await database.loadDb?.(), (await import('./import-loop.ts')).startImportLoop(ctx, () => owner)) })
  report({ type: 'ready' })
}

self.onmessage = (event: MessageEvent<WorkerCommand | BridgeAnswer>) => {
  const message = event.data
  if ('db' in message) return void bridge?.handle(message)
  if (message.type === 'start') void start(message.config, message.driver)
  else if (message.type === 'exit-on-claim') exitOnClaim = true
  else if (message.type === 'stop') void (stop?.() ?? Promise.resolve()).finally(() => report({ type: 'stopped' }))
}
