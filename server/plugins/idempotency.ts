import { and, eq, isNull, lt, sql } from 'drizzle-orm'
import type { Db } from '../db/client.ts'
import { idempotencyKeys } from '../db/schema/index.ts'
import { crashPoint, holdIdempotencyKey, letGoIdempotencyKey } from '../db/effects.ts'
import { ApiError, invalid } from '../errors.ts'
import { randomToken, sha256Hex } from '../lib/secrets.ts'

const RETENTION = sql`now() - interval '24 hours'`

/**
 * How long a claim holds its key without an answer: about the longest a request may take. A claim
 * older than this belongs to a request that died with its process (kill -9, crash, lost
 * connection), so a retry takes the key over and runs the request.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 60
const LEASE_EXPIRED = sql`now() - make_interval(secs => ${IDEMPOTENCY_LEASE_SECONDS})`

export type IdempotencyOutcome = { kind: 'proceed' } | { kind: 'replay'; status: number; body: unknown }

export const requestFingerprint = (method: string, path: string, body: unknown) => sha256Hex(`${method} ${path}\n${JSON.stringify(body ?? null)}`)

/**
 * Claims (scope, key) for this request. The same key and body within 24 h replays the stored
 * response; another body is 422 IDEMPOTENCY_MISMATCH; a twin still running is 409 CONFLICT, until
 * its lease (IDEMPOTENCY_LEASE_SECONDS) runs out and this request takes the key over. A key whose
 * effect committed without a stored response (the process died in between) is 409 for good: the
 * write happened once and never runs again.
 */
export async function claimIdempotencyKey(db: Db, scope: string, key: string, requestHash: string): Promise<IdempotencyOutcome> {
  const outcome = await claim(db, scope, key, requestHash)
  if (outcome.kind === 'proceed') crashPoint('idempotency:after-claim')
  return outcome
}

async function claim(db: Db, scope: string, key: string, requestHash: string): Promise<IdempotencyOutcome> {
  if (key.length === 0 || key.length > 255) throw invalid(['header', 'idempotency-key'], 'Idempotency-Key must be 1 to 255 characters')
  await db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key), lt(idempotencyKeys.createdAt, RETENTION)))
  // The request's transactions mark the key only while it holds it (server/db/effects.ts).
  const holder = randomToken()
  const [claimed] = await db.insert(idempotencyKeys).values({ scope, key, requestHash, holder }).onConflictDoNothing().returning({ key: idempotencyKeys.key })
  if (claimed) {
    holdIdempotencyKey({ scope, key, holder })
    return { kind: 'proceed' }
  }

  const [existing] = await db.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)))
  if (!existing) return claim(db, scope, key, requestHash)
  if (existing.requestHash !== requestHash) {
    throw invalid(['header', 'idempotency-key'], 'This Idempotency-Key was already used with a different request body', 'idempotency_mismatch', 'IDEMPOTENCY_MISMATCH')
  }
  if (existing.responseStatus === null) {
    if (existing.effectCommittedAt !== null) throw effectWithoutAnswer()
    // Conditional on the lease in SQL, so of two retries racing for an abandoned key only one wins; and
    // on no effect having committed, so a take-over never repeats a write that happened.
    const [taken] = await db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now()`, holder })
      .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key), isNull(idempotencyKeys.responseStatus), isNull(idempotencyKeys.effectCommittedAt), lt(idempotencyKeys.createdAt, LEASE_EXPIRED)))
      .returning({ key: idempotencyKeys.key })
    if (taken) {
      holdIdempotencyKey({ scope, key, holder })
      return { kind: 'proceed' }
    }
    throw new ApiError('CONFLICT', 'A request with this Idempotency-Key is still being processed')
  }
  return { kind: 'replay', status: existing.responseStatus, body: existing.responseBody }
}

const effectWithoutAnswer = () => new ApiError('CONFLICT', 'The request with this Idempotency-Key was carried out, but the server stopped before it stored the answer: it is not run again. Read the resource to see the result')

export async function completeIdempotencyKey(db: Db, scope: string, key: string, status: number, body: unknown) {
  letGoIdempotencyKey()
  crashPoint('idempotency:before-answer')
  await db
    .update(idempotencyKeys)
    .set({ responseStatus: status, responseBody: body as object, completedAt: sql`now()` })
    .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)))
  crashPoint('idempotency:after-answer')
}

/**
 * A failed request releases its key, so the client can retry it with the same key; unless an effect of
 * it committed before it failed, which a retry must not repeat (the retry is then 409).
 */
export async function releaseIdempotencyKey(db: Db, scope: string, key: string) {
  letGoIdempotencyKey()
  await db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key), isNull(idempotencyKeys.effectCommittedAt)))
}
