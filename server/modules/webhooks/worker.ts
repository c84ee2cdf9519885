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
let stopping = false

async function startClaiming(settings: WorkerSettings & { databaseUrl: string }) {
  const log = createLogger(settings.logLevel)
  // The owner lock lives as long as this one connection: no recycling (max_lifetime), and if it closes
  // for any other reason (a dropped connection) the claims would look abandoned, so the worker ends and
  // the runner starts a new one with a new owner.
  lock = postgres(settings.databaseUrl, {
    max: 1, max_lifetime: null, onnotice: () => {}, connection: { application_name: 'chorus-webhooks-lock' },
    onclose: () => { if (!stopping) post({ type: 'fatal', error: 'lost the webhook owner lock (database connection closed)' }) },
  })
  await lock`select pg_advisory_lock(${LOCK_SPACE}, ${settings.owner})`
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
    listenForWork: database.listenForWork,
    pollMs: settings.pollMs,
    maxSending: settings.maxSending,
    queues: [chatQueueFor(database.db, secrets, providers, settings.chat, { retryScale: settings.retryScale, sentBy: settings.sentBy, log })],
  })
}

async function stop() {
  stopping = true
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
