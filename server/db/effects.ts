import { AsyncLocalStorage } from 'node:async_hooks'
import { sql } from 'drizzle-orm'
import { ApiError } from '../errors.ts'
import { rowsOf, type Db, type Tx } from './client.ts'

// An Idempotency-Key must never produce two effects, whatever the moment a process dies. The key is
// claimed before the handler runs and its response stored after; a crash between the effect's commit
// and that store used to leave a claim without an answer, and the retry ran the write again. So every
// transaction a keyed request commits also marks its key, in that transaction: the effect and the mark
// commit together or not at all (docs/security.md#end-user-identity).

interface HeldKey { scope: string; key: string; holder: string }
interface RequestEffects { held: HeldKey | null }

const current = new AsyncLocalStorage<RequestEffects>()

/** Called synchronously at the start of each request, so what the request runs later sees its own store. */
export function beginRequestEffects() {
  current.enterWith({ held: null })
}

/** The request now holds this key: its transactions mark it. */
export function holdIdempotencyKey(held: HeldKey) {
  const store = current.getStore()
  if (store) store.held = held
}

/**
 * Whether the request holds an Idempotency-Key its effect must mark: a write that would otherwise be one
 * statement without a transaction (the create) takes one then, so the mark commits with it.
 */
export const holdsIdempotencyKey = () => Boolean(current.getStore()?.held)

/** The key was answered or released: later transactions of the request (none, normally) leave it alone. */
export function letGoIdempotencyKey() {
  const store = current.getStore()
  if (store) store.held = null
}

/**
 * Marks the held key inside `tx`, only while this request still holds it: a request that outlived its
 * lease and lost the key to a retry fails here and its transaction rolls back, so of the two only one
 * effect commits.
 */
async function markEffect(tx: Tx) {
  const held = current.getStore()?.held
  if (!held) return
  crashPoint('idempotency:in-transaction')
  const marked = rowsOf(await tx.execute(sql`update idempotency_keys set effect_committed_at = coalesce(effect_committed_at, now())
    where scope = ${held.scope} and key = ${held.key} and holder = ${held.holder} and response_status is null returning key`))
  if (!marked.length) throw new ApiError('CONFLICT', 'This request took longer than its Idempotency-Key lease and a retry took the key over: nothing was changed')
}

/** Wraps `db.transaction` (the outermost one; nested ones are savepoints) so it marks the held key before committing. */
export function markEffectsOnCommit(db: Db): Db {
  const transaction = db.transaction.bind(db)
  db.transaction = ((run: (tx: Tx) => Promise<unknown>, config?: unknown) =>
    transaction(async (tx) => {
      const result = await run(tx)
      await markEffect(tx)
      return result
    }, config as never)) as Db['transaction']
  return db
}

const crashAt = process.env.CHORUS_TEST_CRASH_AT
const crashAfter = Number(process.env.CHORUS_TEST_CRASH_AFTER ?? 1)
let reached = 0

/**
 * Test hook: with CHORUS_TEST_CRASH_AT=<name> the process kills itself (SIGKILL, no clean-up) on reaching
 * that named point for the CHORUS_TEST_CRASH_AFTER-th time (default the first), so a test can restart it
 * and check what the crash left. Read once, never set in production.
 */
export function crashPoint(name: string) {
  if (crashAt === name && ++reached >= crashAfter) process.kill(process.pid, 'SIGKILL')
}
