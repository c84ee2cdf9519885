// The webhook baseline that runs Chorus's own statements with the least JavaScript around them: the framework
// overhead baseline, beside bench/raw-webhooks.ts (the least work a delivery needs: the design overhead).
// One loop on the server's pool (server/db/postgres-pool.ts, the same prepared statements), woken by the same
// notifications: the dispatcher's fan-out to the other subscribers (events/dispatch.ts) beside the webhook lane
// (webhooks/queue.ts `takeWebhookEvents`), each lane's jobs POSTed with plain fetch and the Standard Webhooks
// signature, then recorded with `recordAttempts`, all in one thread. What Chorus adds on top is its delivery
// loop (bounded concurrency, background recording, claims of retries and lapsed leases, the other queues), the
// outbound guard (DNS pinning, size and time limits) and the worker thread. bench/webhooks.ts runs all three.
// Env: DATABASE_URL, SECRET_KEY (opens the endpoints' sealed signing secrets).
import { getConfig } from '../server/config.ts'
import { openPostgresPool } from '../server/db/postgres-pool.ts'
import { dispatchEvents } from '../server/events/dispatch.ts'
import { subscribersFor } from '../server/events/subscribers.ts'
import { createSecrets } from '../server/lib/secrets.ts'
import { recordAttempts, takeWebhookEvents, type Attempt } from '../server/modules/webhooks/queue.ts'
import { signatureHeader } from '../server/modules/webhooks/signing.ts'

const config = getConfig(process.env)
const pool = openPostgresPool(process.env.DATABASE_URL!, { poolSize: 4, applicationName: 'chorus-same-queries' })
const secrets = await createSecrets(process.env.SECRET_KEY!)
const subscribers = subscribersFor(config)
/** An owner number no Chorus process takes (theirs come from an advisory lock's small integers). */
const OWNER = 900_001
const ROOM = 512
const settings = { retryScale: 1, sentBy: 'same-queries' }

let pending = true
let wake: (() => void) | undefined
await pool.listenForWork(['events'], () => {
  pending = true
  wake?.()
})

async function post(job: Awaited<ReturnType<typeof takeWebhookEvents>>['jobs'][number]): Promise<Attempt> {
  const started = performance.now()
  const timestamp = Math.floor(Date.now() / 1000)
  const response = await fetch(job.url, {
    method: 'POST',
    body: job.body,
    headers: { 'content-type': 'application/json', 'webhook-id': job.eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(job.secrets, job.eventId, timestamp, job.body) },
  })
  const body = await response.text()
  const success = response.status >= 200 && response.status < 300
  return { job, result: { success, status: response.status, body, error: success ? null : `HTTP ${response.status}`, durationMs: Math.round(performance.now() - started), retryAfterMs: null } }
}

console.log('same-queries webhooks ready')
for (;;) {
  if (!pending) await new Promise<void>((resolve) => (wake = resolve))
  pending = false
  for (;;) {
    const [fannedOut, lane] = await Promise.all([dispatchEvents(pool.sql, undefined, subscribers), takeWebhookEvents(pool.sql, OWNER, ROOM, secrets)])
    if (lane.jobs.length) await recordAttempts(pool.sql, OWNER, await Promise.all(lane.jobs.map(post)), settings)
    if (!fannedOut && !lane.taken) break
  }
}
