// The webhook worker thread. `claim` mode (Postgres): it opens its own connections, holds its owner
// lock and runs the whole delivery loop, so several processes share the work through the database.
// `send` mode (PGlite, owned by the main thread): it only makes the HTTP attempts it is handed.
import postgres from 'postgres'
import { openDatabase, type Database } from '../../db/client.ts'
import { describeError } from '../../db/errors.ts'
import { createDns } from '../../lib/dns.ts'
import { createLogger } from '../../lib/log.ts'
import { createOutbound } from '../../lib/outbound.ts'
import { sealerFromKey } from '../../lib/secrets.ts'
import { chatQueueFor } from '../integrations/delivery.ts'
import { startDeliveryLoop, type DeliveryLoop } from './loop.ts'
import { LOCK_SPACE } from './queue.ts'
import { sendWebhook, type SendSettings } from './send.ts'
import type { ToMain, ToWorker, WorkerSettings } from './protocol.ts'

declare const self: Worker

const post = (message: ToMain) => self.postMessage(message)

let sendSettings: SendSettings | undefined
let loop: DeliveryLoop | undefined
let database: Database | undefined
let lock: postgres.Sql | undefined
let watch: ReturnType<typeof setInterval> | undefined

async function startClaiming(settings: WorkerSettings & { databaseUrl: string }) {
  const log = createLogger(settings.logLevel)
  lock = postgres(settings.databaseUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'chorus-webhooks-lock' } })
  await lock`select pg_advisory_lock(${LOCK_SPACE}, ${settings.owner})`
  // postgres.js reconnects silently; a new session would not hold the lock, so claims would look abandoned.
  watch = setInterval(async () => {
    const held = await lock!`select 1 from pg_locks where locktype = 'advisory' and classid = ${LOCK_SPACE} and objid = ${settings.owner} and objsubid = 2 and pid = pg_backend_pid()`.catch(() => [])
    if (!held.length) post({ type: 'fatal', error: 'lost the webhook owner lock (database connection dropped)' })
  }, 5000)
  database = openDatabase(settings.databaseUrl, '')
  const secrets = await sealerFromKey(settings.sealingKey)
  // Provider calls go to operator-configured base URLs, which OPERATOR_URLS_ALLOW_PRIVATE may place on a private network.
  const providers = createOutbound({ dns: createDns(settings.dnsResolver), allowPrivate: settings.allowPrivate, operatorAllowPrivate: settings.chat.operatorAllowPrivate })
  loop = startDeliveryLoop({
    db: database.db,
    owner: settings.owner,
    send: (job) => sendWebhook(job, sendSettings!),
    secrets,
    retryScale: settings.retryScale,
    sentBy: settings.sentBy,
    log,
    pollMs: settings.pollMs,
    queues: [chatQueueFor(database.db, secrets, providers, settings.chat, { retryScale: settings.retryScale, sentBy: settings.sentBy, log })],
  })
}

async function stop() {
  clearInterval(watch)
  await loop?.stop()
  await database?.close()
  await lock?.end({ timeout: 1 })
  post({ type: 'stopped' })
}

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const message = event.data
  try {
    if (message.type === 'start') {
      sendSettings = { outbound: createOutbound({ dns: createDns(message.settings.dnsResolver), allowPrivate: message.settings.allowPrivate }) }
      if (message.settings.mode === 'claim') await startClaiming(message.settings as WorkerSettings & { databaseUrl: string })
      post({ type: 'ready' })
    } else if (message.type === 'send') {
      post({ type: 'result', id: message.id, result: await sendWebhook(message.job, sendSettings!) })
    } else if (message.type === 'stop') {
      await stop()
    }
  } catch (error) {
    post({ type: 'fatal', error: describeError(error) })
  }
}
