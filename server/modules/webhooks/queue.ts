// The durable side of webhook delivery: the webhook lane that turns queued events into deliveries, their
// claim (both on the shared lease, server/background/leases.ts) and the outcome of each attempt. Plain
// functions over the database, run by the background worker's delivery loop (server/background/).
import { LEASE_SECONDS, leaseDue, msUntilDue, releaseJob, WEBHOOK_JOBS } from '../../background/leases.ts'
import { sql, type SqlRunner } from '../../db/sql-text.ts'
import { ASYNC_COMMIT } from '../../db/work.ts'
import { newId } from '../../lib/ids.ts'
import { sealContext, type Sealer } from '../../lib/secrets.ts'
import type { AttemptResult, DeliveryJob } from './send.ts'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
/** After attempt n fails, the next comes RETRY_DELAYS_MS[n - 1] later (docs/api.md#webhooks); then it has failed. */
export const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]
const MAX_RETRY_AFTER_MS = 24 * HOUR

/** Milliseconds until the next webhook delivery falls due, or null (leases.ts `msUntilDue`). */
export const msUntilWebhookDue = (db: SqlRunner) => msUntilDue(db, WEBHOOK_JOBS)

/**
 * Opened signing secrets by sealer and sealed value. A busy endpoint's secret is opened once, not once per claim
 * (an AES-GCM open costs ~24 µs of CPU, and a drain claims every few milliseconds). A rotation writes a
 * new sealed value (fresh IV), so a changed secret is never served from here; entries leave oldest first.
 */
const openedSecrets = new WeakMap<Sealer, Map<string, Promise<string>>>()
const OPENED_SECRETS_KEPT = 1000

function openSecret(secrets: Sealer, sealed: string, context: string): Promise<string> {
  let cache = openedSecrets.get(secrets)
  if (!cache) openedSecrets.set(secrets, (cache = new Map()))
  const key = `${context}\n${sealed}`
  let opened = cache.get(key)
  if (!opened) {
    if (cache.size >= OPENED_SECRETS_KEPT) cache.delete(cache.keys().next().value!)
    cache.set(key, (opened = secrets.unseal(sealed, context)))
    opened.catch(() => cache.delete(key))
  }
  return opened
}

/** A leased delivery with its endpoint (and whether a rotated-out secret still signs) and its event. */
type ClaimedJob = {
  webhook_id: string; event_id: string; attempts: number; manual: boolean
  url: string; secret: string; previous_secret: string | null; previous_live: boolean
  type: string; workspace_id: string; data: unknown; created_at: string
}
/**
 * What sending the leased deliveries needs, read in the lease's own statement (leases.ts `leaseDue`). An
 * endpoint deleted since took its deliveries with it (cascade): the join leaves nothing to send.
 */
const withEndpointAndEvent = sql`select l.webhook_id, l.event_id, l.attempts, l.manual,
    w.url, w.secret, w.previous_secret, coalesce(w.previous_secret_expires_at > now(), false) as previous_live,
    -- The timestamp as JavaScript's toISOString() writes it: the body's bytes are what is signed.
    e.type, e.workspace_id, e.data, to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
  from leased l join webhooks w on w.id = l.webhook_id join events e on e.id = l.event_id`

/**
 * Leases up to `limit` due webhook deliveries to `owner`, with what sending each one needs, inside the caller's
 * queue transaction (the delivery loop fans out and claims in one): the jobs may be sent once it commits.
 */
export async function claimDeliveriesIn(tx: SqlRunner, owner: number, limit: number, secrets: Sealer): Promise<DeliveryJob[]> {
  return jobsOf(await leaseDue<ClaimedJob>(tx, WEBHOOK_JOBS, owner, limit, withEndpointAndEvent), secrets)
}

/** Events one call of the webhook lane takes (as many as the dispatcher's batch). */
export const LANE_BATCH = 500

/**
 * The webhook lane (migration 0066): takes up to `limit` events off `webhook_dispatch` and inserts a delivery per
 * enabled endpoint of the event's workspace subscribed to its kind, oldest event first, the first `room` of them
 * leased to `owner`. One statement, in a transaction of its own: one round trip from an event's notification to
 * its request. Answers how many events it took and the leased deliveries as jobs, as `claimDeliveriesIn` would
 * have once they were in; the rest wait for a claim. An event whose endpoints were all turned off since it was
 * queued gets none.
 */
export async function takeWebhookEvents(db: SqlRunner, owner: number, room: number, secrets: Sealer, limit = LANE_BATCH): Promise<{ taken: number; jobs: DeliveryJob[] }> {
  const rows = await laneStatement(db, owner, room, limit)
  return { taken: rows[0]?.taken ?? 0, jobs: await jobsOf(rows.filter((row) => row.webhook_id !== null), secrets) }
}

/**
 * The webhook lane without a delivery loop to send (the dispatcher's, while no loop runs in its thread): the
 * deliveries are inserted unleased, and their insert wakes whichever process's loop claims them. Returns the
 * events taken.
 */
export async function queueWebhookEvents(db: SqlRunner, limit = LANE_BATCH): Promise<number> {
  return (await laneStatement(db, 0, 0, limit))[0]?.taken ?? 0
}

/** The lane (migration 0066's `chorus_webhook_lane`): the events taken, beside each leased delivery with what sending it needs (or nulls when none was leased). */
function laneStatement(db: SqlRunner, owner: number, room: number, limit: number) {
  return db.rows<ClaimedJob & { taken: number }>(sql`select * from chorus_webhook_lane(${owner}::int, ${room}::int, ${limit}::int, ${LEASE_SECONDS}::int)`)
}

function jobsOf(claimed: ClaimedJob[], secrets: Sealer): Promise<DeliveryJob[]> {
  // The current secret must open; a rotated-out one that cannot (rotated away from a damaged secret) is left out.
  const signingSecrets = async (row: ClaimedJob) => {
    const open = (sealed: string) => openSecret(secrets, sealed, sealContext.webhookSecret(row.webhook_id))
    const [current, previous] = await Promise.all([open(row.secret), row.previous_secret && row.previous_live ? open(row.previous_secret).catch(() => null) : null])
    return previous === null ? [current] : [current, previous]
  }
  return Promise.all(claimed.map(async (row) => ({
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.type,
    attempt: row.attempts + 1,
    manual: row.manual,
    url: row.url,
    // A secret that cannot be opened fails this delivery's attempts (send.ts), not the transaction that fans out
    // and claims: thrown here, it rolled back every event of the batch, every workspace's, again and again.
    secrets: await signingSecrets(row).catch(() => []),
    body: JSON.stringify({ id: row.event_id, type: row.type, timestamp: row.created_at, workspace_id: row.workspace_id, data: row.data }),
  })))
}

export interface Outcome {
  /** `done`: delivered, and its row is deleted. */
  status: 'pending' | 'done' | 'failed'
  nextAttemptAt: Date | null
  /** The receiver answered 410 Gone: the endpoint is turned off. */
  disable: boolean
}

/** What follows an attempt: done on 2xx, the next retry with jitter, or failed when the schedule is spent. */
export function outcomeOf(job: Pick<DeliveryJob, 'attempt' | 'manual'>, result: AttemptResult, retryScale: number, now = Date.now()): Outcome {
  if (result.success) return { status: 'done', nextAttemptAt: null, disable: false }
  if (result.status === 410) return { status: 'failed', nextAttemptAt: null, disable: true }
  const delay = RETRY_DELAYS_MS[job.attempt - 1]
  if (job.manual || delay === undefined) return { status: 'failed', nextAttemptAt: null, disable: false }
  const jittered = delay * retryScale * (0.9 + Math.random() * 0.2)
  const wait = Math.max(jittered, Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS))
  return { status: 'pending', nextAttemptAt: new Date(now + wait), disable: false }
}

export interface Attempt { job: DeliveryJob; result: AttemptResult }

/**
 * Logs a batch of attempts and moves each delivery on, in one transaction (one statement inserts the logs, deletes
 * the delivered rows and updates the rest), so recording keeps up with thousands of deliveries a second. A claim
 * lost meanwhile is left to its new owner.
 */
export async function recordAttempts(db: SqlRunner, owner: number, attempts: Attempt[], settings: { retryScale: number; sentBy: string }) {
  if (!attempts.length) return
  const outcomes = attempts.map(({ job, result }) => ({ job, result, outcome: outcomeOf(job, result, settings.retryScale) }))
  await db.transaction(async (tx) => {
    // An endpoint deleted while its attempt was in flight takes its logs with it; one such attempt must
    // not sink the batch. FOR SHARE holds the others until the logs are in.
    // ASYNC_COMMIT goes out ahead of the read on the transaction's connection (pipelined): no round trip of its own.
    const [, live] = await Promise.all([tx.rows(ASYNC_COMMIT),
      tx.rows<{ id: string }>(sql`select id from webhooks where id = any(${[...new Set(outcomes.map(({ job }) => job.webhookId))]}::text[]) for share`)])
    const kept = new Set(live.map((row) => row.id))
    const rows = outcomes.filter(({ job }) => kept.has(job.webhookId))
    if (!rows.length) return
    // The batch goes as one JSON parameter that PostgreSQL unpacks (json_to_recordset) for both the log insert and
    // the delivery update: one native JSON.stringify, where one array parameter per column cost the driver an escape per value.
    const batch = JSON.stringify(rows.map(({ job, result, outcome }) => ({
      id: newId('deliveryLog'), webhook_id: job.webhookId, event_id: job.eventId, event_type: job.eventType, attempt: job.attempt,
      success: result.success, response_status: result.status, response_body: result.body, error: result.error, duration_ms: result.durationMs,
      status: outcome.status, next_attempt_at: outcome.nextAttemptAt?.toISOString() ?? null,
    })))
    await tx.rows(sql`
      with v as (
        select * from json_to_recordset(${batch}::json) as v(id text, webhook_id text, event_id text, event_type text, attempt int, success boolean,
          response_status int, response_body text, error text, duration_ms int, status text, next_attempt_at timestamptz)
      ), logged as (
        insert into webhook_delivery_logs (id, webhook_id, event_id, event_type, attempt, success, response_status, response_body, error, duration_ms, sent_by)
        select id, webhook_id, event_id, event_type, attempt, success, response_status, response_body, error, duration_ms, ${settings.sentBy}::text from v
      ), delivered as (
        delete from webhook_deliveries d using v
        where v.status = 'done' and d.webhook_id = v.webhook_id and d.event_id = v.event_id and d.lease_owner = ${owner}
      )
      update webhook_deliveries d set status = v.status, attempts = v.attempt, next_attempt_at = coalesce(v.next_attempt_at, now()),
        manual = false, lease_owner = null, lease_until = null, updated_at = now()
      from v where v.status <> 'done' and d.webhook_id = v.webhook_id and d.event_id = v.event_id and d.lease_owner = ${owner}`)
    for (const { job } of rows.filter((row) => row.outcome.disable)) await disableEndpoint(tx, job.webhookId, 'The receiver answered 410 Gone')
  })
}

/** Turns an endpoint off and cancels what it still had pending (re-enabling starts from new events). */
export async function disableEndpoint(db: SqlRunner, webhookId: string, reason: string | null) {
  await db.rows(sql`update webhooks set enabled = false, disabled_reason = ${reason}, updated_at = now() where id = ${webhookId}`)
  await db.rows(sql`update webhook_deliveries set status = 'canceled', lease_owner = null, lease_until = null, updated_at = now()
    where webhook_id = ${webhookId} and status = 'pending'`)
}

/** Gives a claim back untouched (the attempt never happened: the loop stopped first). */
export const releaseClaim = (db: SqlRunner, owner: number, job: Pick<DeliveryJob, 'webhookId' | 'eventId'>) =>
  releaseJob(db, WEBHOOK_JOBS, owner, [job.webhookId, job.eventId])
