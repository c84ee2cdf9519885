// The one lease/claim implementation of the delivery jobs (webhook and chat deliveries): a claimer
// (a delivery loop, one per background worker) holds a session advisory lock on its owner number for
// its lifetime, and a job's lease names that owner. A lease is live while its owner's lock is held and
// its time has not run out, so a dead worker's claims are taken over at once and a silent one's after
// LEASE_SECONDS. Feature modules build their claims on `leaseDue` / `claimDue` and never write leases themselves;
// the one other writer is the webhook lane's function (migration 0066), which leases what it inserts for LEASE_SECONDS.
import { msFrom, sql, type SqlFragment, type SqlRunner } from '../db/sql-text.ts'
import { announceWork, queueTransaction, type WorkQueue } from '../db/work.ts'

/** First key of the two-key advisory locks that mark a live claimer (the second is its owner number). */
export const LOCK_SPACE = 7_245_012
/** A backstop: claims of a live owner that never reports back lapse after this. */
export const LEASE_SECONDS = 60

/** A random positive int4 naming one claimer (a delivery loop) for its lifetime. */
export const newOwner = () => 1 + Math.floor(Math.random() * 0x7ffffffe)

export const lockOwnerSql = (owner: number) => sql`select pg_advisory_lock(${sql.raw(String(LOCK_SPACE))}, ${owner})`
export const unlockOwnerSql = (owner: number) => sql`select pg_advisory_unlock(${sql.raw(String(LOCK_SPACE))}, ${owner})`

/** A table of delivery jobs: (target, event) keyed rows with the pending → done | failed | canceled state and a lease. */
export interface JobTable {
  table: WorkQueue
  /** The key columns; the first names the target (endpoint, channel mapping). */
  keys: [string, string]
  /** Further columns the claim returns. */
  returning: string[]
}

export const WEBHOOK_JOBS: JobTable = { table: 'webhook_deliveries', keys: ['webhook_id', 'event_id'], returning: ['attempts', 'manual'] }
export const CHAT_JOBS: JobTable = { table: 'chat_deliveries', keys: ['mapping_id', 'event_id'], returning: ['attempts'] }
/** Every leased job table: an owner known to be gone has its claims freed in all of them. */
const JOB_TABLES = [WEBHOOK_JOBS, CHAT_JOBS]

/**
 * Leases up to `limit` due jobs of `jobs` to `owner`, in the caller's queue transaction (the delivery loop fans
 * out and claims in one; `claimDue` opens one of its own). A lease held by an owner whose advisory lock is
 * gone (its worker or connection died) is free at once; one whose holder is alive but silent, after
 * LEASE_SECONDS. SKIP LOCKED lets any number of processes claim side by side without waiting on each
 * other. Table and column names are constants, never input. With `select`, the statement answers that
 * query over the leased rows (`leased`) instead of the rows themselves: what sending them needs, read in
 * the same round trip (a data-modifying CTE must be at the top level, so the query is appended here).
 */
export async function leaseDue<Row>(tx: SqlRunner, jobs: JobTable, owner: number, limit: number, select?: SqlFragment): Promise<Row[]> {
  const [target, event] = jobs.keys.map((name) => sql.raw(name))
  const table = sql.raw(jobs.table)
  const returning = sql.raw([...jobs.keys, ...jobs.returning].map((name) => `d.${name}`).join(', '))
  return tx.rows<Row>(sql`
    with live as materialized (
      select objid::bigint as owner from pg_locks
      where locktype = 'advisory' and granted and objsubid = 2 and classid = ${sql.raw(String(LOCK_SPACE))}
        and database = (select oid from pg_database where datname = current_database())
    ), due as (
      select d.${target}, d.${event} from ${table} d
      where d.status = 'pending' and d.next_attempt_at <= now()
        -- A claimer never takes its own unexpired leases back as abandoned: if its owner lock has just gone
        -- (the lock connection dropped), the attempts it finished are still being recorded beside this claim
        -- (delivery-loop.ts round), and its runner hands back the rest once the loop has stopped.
        and (d.lease_owner is null or d.lease_until < now() or (d.lease_owner not in (select owner from live) and d.lease_owner <> ${owner}))
      order by d.next_attempt_at
      limit ${limit}
      for update of d skip locked
    ), leased as (
      update ${table} d set lease_owner = ${owner}, lease_until = now() + interval '${sql.raw(String(LEASE_SECONDS))} seconds'
      from due where d.${target} = due.${target} and d.${event} = due.${event}
      returning ${returning}
    )
    ${select ?? sql`select * from leased`}`)
}

/** `leaseDue` in a queue transaction of its own (server/db/work.ts: planned for the queue's size today). */
export function claimDue<Row>(db: SqlRunner, jobs: JobTable, owner: number, limit: number, select?: SqlFragment): Promise<Row[]> {
  return queueTransaction(db, (tx) => leaseDue<Row>(tx, jobs, owner, limit, select))
}

/**
 * Milliseconds until the next job of `jobs` falls due (0 when one is due now), or null when none is
 * pending. A leased job counts from its lease's end: its holder is working on it, or it lapses then.
 */
export function msUntilDue(db: SqlRunner, jobs: JobTable): Promise<number | null> {
  // NULL when nothing is pending (GREATEST would turn that into 0, so msFrom clamps).
  return msFrom(db, sql`
    select (extract(epoch from min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at))) - now()) * 1000)::float8 as ms
    from ${sql.raw(jobs.table)} where status = 'pending'`)
}

/** Gives one claim back untouched (its attempt never completed). */
export async function releaseJob(db: SqlRunner, jobs: JobTable, owner: number, key: [string, string]) {
  const [target, event] = jobs.keys.map((name) => sql.raw(name))
  await db.rows(sql`update ${sql.raw(jobs.table)} set lease_owner = null, lease_until = null
    where ${target} = ${key[0]} and ${event} = ${key[1]} and lease_owner = ${owner}`)
}

/**
 * Frees an owner's claims in `jobs` other than the ones it holds (`held`: target and event keys), and announces
 * them. A claim statement that failed may have committed before its answer was lost; whatever it leased is then
 * nobody's work until its lease lapses (LEASE_SECONDS), since a claimer never takes its own unexpired leases back.
 */
export async function releaseOwnerExcept(db: SqlRunner, jobs: JobTable, owner: number, held: Iterable<[string, string]>) {
  const [target, event] = jobs.keys.map((name) => sql.raw(name))
  const targets: string[] = []
  const events: string[] = []
  for (const [heldTarget, heldEvent] of held) targets.push(heldTarget), events.push(heldEvent)
  const freed = await db.rows(sql`update ${sql.raw(jobs.table)} set lease_owner = null, lease_until = null
    where lease_owner = ${owner} and (${target}, ${event}) not in (select * from unnest(${targets}::text[], ${events}::text[]))
    returning 1`)
  if (freed.length) await announceWork(db, jobs.table)
  return freed.length
}

/**
 * Frees every claim of an owner known to be gone (its lock's connection dropped, its worker exited), in every job
 * table, and announces what it freed: an update wakes no loop by itself (the work triggers hear inserts), and
 * every process's loop may take them over at once.
 */
export async function releaseOwner(db: SqlRunner, owner: number) {
  for (const jobs of JOB_TABLES) await releaseOwnerExcept(db, jobs, owner, [])
}

/**
 * Frees the claims of a worker that died (supervisor.ts): its owner lock is let go (on PostgreSQL by
 * ending the session that holds it, should the thread's socket outlive it; on PGlite the lock is the
 * main thread's own connection's) and its leases are handed back, so they are sent again at once, once.
 */
export async function freeDeadOwner(db: SqlRunner, driver: 'pglite' | 'postgres', owner: number) {
  if (driver === 'postgres') {
    await db.rows(sql`select pg_terminate_backend(pid) from pg_locks
      where locktype = 'advisory' and classid = ${sql.raw(String(LOCK_SPACE))} and objid = ${owner} and objsubid = 2 and pid <> pg_backend_pid()`)
  } else {
    await db.rows(unlockOwnerSql(owner))
  }
  await releaseOwner(db, owner)
}
