// The background worker's entry: a Bun Worker (one per server process, started by supervisor.ts) that
// runs every background loop (the event dispatcher, webhook and chat delivery, the mailer), so the main
// thread serves HTTP only. It imports only what those loops need (the database driver, the queue
// statements, signing, the outbound guard, mail): never Elysia, routes, TypeBox models, MCP or the portal's
// pages (test/api/background-imports.test.ts). On PostgreSQL it opens a small pool of its own; on PGlite
// its statements run in the main thread (pglite-bridge.ts).
//
// Messages: main → worker  { type: 'start', config, driver, counters }  { type: 'stop' }  { type: 'exit-on-claim' } (test hook)
//           worker → main  { type: 'ready' }  { type: 'owner', owner }  { type: 'stopped' }  and the bridge's requests
import type { Config } from '../config.ts'
import { outboundFor } from '../lib/outbound.ts'
import { createChangeFeed, type ChangeFeed } from '../db/changes.ts'
import { openDatabase } from '../db/client.ts'
import { createLogger } from '../lib/log.ts'
import { createMailer } from '../lib/mail.ts'
import { createSecrets } from '../lib/secrets.ts'
import { createStorage } from '../lib/storage.ts'
import type { BackgroundContext } from './context.ts'
import { startWebhookRunner } from './delivery-runner.ts'
import { startEventDispatcher } from './dispatcher.ts'
import { startImportLoop } from './import-loop.ts'
import { startMailer } from './mailer.ts'
import { startSuggester } from './suggester.ts'
import { bridgedDatabase, type BridgeAnswer } from './pglite-bridge.ts'

declare const self: Worker

export type WorkerCommand =
  | { type: 'start'; config: Config & { secretKey: string }; driver: 'pglite' | 'postgres'; counters: Int32Array }
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

/** Listens on `chorus_cache` for the main thread's caches, trying again each second until it listens (they stay off meanwhile). */
async function listenForCaches(database: ReturnType<typeof openDatabase>, feed: ChangeFeed) {
  while (!stopping) {
    try {
      return void (await database.listenForChanges(feed.changed, feed.setLive))
    } catch {
      await Bun.sleep(1000)
    }
  }
}

async function start(config: Config & { secretKey: string }, driver: 'pglite' | 'postgres', counters: Int32Array) {
  const log = createLogger(config.logLevel)
  let database: BackgroundContext['database'] & { db: BackgroundContext['db']; close?(): Promise<void> }
  if (driver === 'pglite') {
    bridge = bridgedDatabase((request) => self.postMessage(request))
    database = bridge.database
  } else {
    const opened = openDatabase(config.databaseUrl, config.dataDir, { poolSize: POOL_SIZE })
    database = opened
    // The main thread's caches hear changes on this thread's LISTEN connection, the one the loops' wake-ups use.
    void listenForCaches(opened, createChangeFeed(counters))
  }
  const ctx: BackgroundContext = {
    config, db: database.db, database, log,
    mail: createMailer(config, database.db, log),
    secrets: await createSecrets(config.secretKey),
    outbound: outboundFor(config),
    storage: createStorage(config),
  }
  let deliveries: Awaited<ReturnType<typeof startWebhookRunner>> | undefined
  // While the delivery loop runs it fans events out and claims their deliveries in one transaction; the
  // dispatcher covers while it is down.
  const dispatcher = startEventDispatcher({ db: ctx.db, log, listenForWork: database.listenForWork, handedOff: () => deliveries?.delivering() ?? false })
  const mailer = startMailer(ctx)
  const suggester = startSuggester(ctx)
  let owner = 0
  deliveries = await startWebhookRunner(ctx, {
    onOwner: (current) => {
      owner = current
      report({ type: 'owner', owner })
    },
    // The test hook: the worker dies right after a claim, before any of it is sent (its leases are all that is left).
    onClaimed: (_claimed, held) => { if (exitOnClaim && held > 0) process.exit(70) },
  })
  let imports: ReturnType<typeof startImportLoop> | undefined
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
  imports = startImportLoop(ctx, () => owner)
  report({ type: 'ready' })
}

self.onmessage = (event: MessageEvent<WorkerCommand | BridgeAnswer>) => {
  const message = event.data
  if ('db' in message) return void bridge?.handle(message)
  if (message.type === 'start') void start(message.config, message.driver, message.counters)
  else if (message.type === 'exit-on-claim') exitOnClaim = true
  else if (message.type === 'stop') void (stop?.() ?? Promise.resolve()).finally(() => report({ type: 'stopped' }))
}
