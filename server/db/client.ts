import type { PGlite as PGliteClass } from '@electric-sql/pglite'
import { is, Placeholder, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import postgres from 'postgres'
import { markEffectsOnCommit } from './effects.ts'
import { CACHE_CHANNEL } from './changes.ts'
import { isConnectionError } from './errors.ts'
import { workChannel, type ListenForWork } from './work.ts'

// Without drizzle's relational query API (`db.query.*`, unused): each transaction would build one
// query builder per table of the schema before running its first statement.
export type Db = PgDatabase<PgQueryResultHKT>
/** The argument a `db.transaction` callback receives; services accept `Db | Tx` where either works. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
/** Statements started together run in order only on a transaction's one connection; the pool may spread them. */
export const isTransaction = (db: Db | Tx): db is Tx => 'rollback' in db

export interface Database {
  db: Db
  driver: 'pglite' | 'postgres'
  /**
   * Runs pending migrations, then `dataMigrations` (idempotent start-up work over the rows, such as
   * re-sealing secrets); on Postgres under an advisory lock so concurrent starts are safe.
   */
  migrate(dataMigrations?: (db: Db) => Promise<void>): Promise<void>
  /** True when a read of a real table answers. */
  ping(): Promise<boolean>
  /** Calls back when a transaction that added background work commits (server/db/work.ts). */
  listenForWork: ListenForWork
  /**
   * Hears `chorus_cache` (server/db/changes.ts): `onChange` with each payload, `onLive` true once listening
   * and again after every reconnect, false the moment the listening connection is lost.
   */
  listenForChanges(onChange: (table: string) => void, onLive: (live: boolean) => void): Promise<() => Promise<void>>
  /** PGlite only: the data directory as a tarball, to start other instances from. */
  dumpDataDir?(): Promise<Blob>
  /** PGlite only: the engine itself, which the background worker's statements reach through the main thread (server/background/pglite-bridge.ts). */
  pglite?: PGliteClass
  close(): Promise<void>
}

const migrationsFolder = `${import.meta.dir}/migrations`
const MIGRATION_LOCK = 7_245_011

export interface DatabaseOptions {
  /** Called with every SQL statement sent; tests use it to prove lists cost a constant number of queries. */
  onQuery?: (sql: string) => void
  /** PGlite only: start from a dumped data directory (tests reuse one migrated template). */
  loadDataDir?: Blob
  /** PostgreSQL only: connections in the pool (default 10; the background worker's pool is smaller). */
  poolSize?: number
}

/** `undefined` → PGlite persisted in dataDir; `memory://` → throwaway PGlite; `file://path` → PGlite at path; else postgres.js. */
export function openDatabase(databaseUrl: string | undefined, dataDir: string, options: DatabaseOptions = {}): Database {
  const logger = options.onQuery ? { logQuery: (query: string) => options.onQuery!(query) } : undefined
  if (databaseUrl === undefined || databaseUrl.startsWith('memory:') || databaseUrl.startsWith('file:')) {
    // Loaded only here: a PostgreSQL process never pays PGlite's ~10 MB.
    const { PGlite } = require('@electric-sql/pglite') as { PGlite: typeof PGliteClass }
    const { drizzle: drizzlePglite } = require('drizzle-orm/pglite') as typeof import('drizzle-orm/pglite')
    const { migrate: migratePglite } = require('drizzle-orm/pglite/migrator') as typeof import('drizzle-orm/pglite/migrator')
    const location = databaseUrl === undefined ? `${dataDir}/pglite` : databaseUrl.startsWith('file:') ? new URL(databaseUrl).pathname : undefined
    // The contrib extensions migration 0030 creates (pg_trgm, unaccent): PGlite loads an extension's code only when given it here.
    const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as typeof import('@electric-sql/pglite/contrib/pg_trgm')
    const { unaccent } = require('@electric-sql/pglite/contrib/unaccent') as typeof import('@electric-sql/pglite/contrib/unaccent')
    const client = new PGlite({ dataDir: location, extensions: { pg_trgm, unaccent }, ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}) })
    const db = markEffectsOnCommit(drizzlePglite(client, { logger }) as unknown as Db)
    return {
      db,
      driver: 'pglite',
      async migrate(dataMigrations) {
        await migratePglite(db as never, { migrationsFolder })
        await dataMigrations?.(db)
      },
      ping: () => ping(db),
      async listenForWork(tables, onWork) {
        const unlistens = await Promise.all(tables.map((table) => client.listen(workChannel(table), () => onWork(table))))
        return async () => { await Promise.all(unlistens.map((unlisten) => unlisten())) }
      },
      async listenForChanges(onChange, onLive) {
        // One process owns the engine, and it calls listeners before the writing statement returns: never lost.
        const unlisten = await client.listen(CACHE_CHANNEL, onChange)
        onLive(true)
        return async () => {
          onLive(false)
          await unlisten()
        }
      },
      dumpDataDir: () => client.dumpDataDir('none'),
      pglite: client,
      close: () => client.close(),
    }
  }
  // connect_timeout: a backend terminated while its connection starts up leaves postgres.js waiting out the
  // whole connect timeout (30 s by default), and the request, loop round or shutdown that wanted it waits too.
  // jit off: every statement here is a short OLTP one, and PostgreSQL compiles a plan whose estimate passes
  // jit_above_cost with LLVM first: an e-mail claim that had to sort (which queueTransaction prices out, so
  // estimated at 10^10) spent 230-370 ms compiling before updating one row.
  const pool = postgres(databaseUrl, { max: options.poolSize ?? 10, connect_timeout: 10, onnotice: () => {}, connection: { application_name: 'chorus', jit: 'off' } })
  const client = guardTransactions(wrapUnsafe(pool, (unsafe) => postgresJsWorkarounds(preparedStatements(unsafe))))
  const db = markEffectsOnCommit(drizzlePostgres(client, { logger }) as unknown as Db)
  return {
    db,
    driver: 'postgres',
    async migrate(dataMigrations) {
      // The lock is a mutex among starting processes: whoever holds it migrates, the others wait and find nothing to do.
      const lock = postgres(databaseUrl, { max: 1, onnotice: () => {} })
      try {
        await lock`select pg_advisory_lock(${MIGRATION_LOCK})`
        // Loaded here, not at the top: the background worker opens this client too and never migrates.
        const { migrate: migratePostgres } = await import('drizzle-orm/postgres-js/migrator')
        await migratePostgres(db as never, { migrationsFolder })
        await dataMigrations?.(db)
      } finally {
        await lock.end({ timeout: 5 })
      }
    },
    ping: () => ping(db),
    async listenForWork(tables, onWork) {
      // postgres.js listens on one dedicated connection, re-established after a drop; whatever was
      // committed while it was down is announced by the `*` sent on every (re)connect.
      const listening = await Promise.all(tables.map((table) => client.listen(workChannel(table), () => onWork(table), () => onWork('*'))))
      return async () => { await Promise.all(listening.map(({ unlisten }) => unlisten())) }
    },
    async listenForChanges(onChange, onLive) {
      let live = false
      const setLive = (next: boolean) => onLive((live = next))
      const subscribe = () => client.listen(CACHE_CHANNEL, onChange, () => setLive(true))
      const { unlisten } = await subscribe()
      const listener = listenerOf(client)
      listener.onClose(() => setLive(false))
      // postgres.js re-listens once after a close; if that attempt fails (the database still down), the
      // channel stays registered with the failed attempt and is never tried again. Until it listens, it is
      // tried again every 2 s.
      const retry = setInterval(() => {
        if (live) return
        listener.forget(CACHE_CHANNEL)
        subscribe().catch(() => {})
      }, 2000)
      retry.unref()
      return async () => {
        clearInterval(retry)
        setLive(false)
        await unlisten()
      }
    },
    close: () => client.end({ timeout: 5 }),
  }
}

/**
 * What postgres.js (3.4.9, src/index.js) keeps of its listening connection on the `listen` function: the
 * `Sql` pool it listens on (`listen.sql`, whose pool reads `options.onclose` at each close) and the channels
 * with their pending LISTEN (`listen.channels`). It re-listens after a close and then calls `onlisten`
 * again, but says nothing when the connection closes: notifications sent meanwhile are lost.
 */
function listenerOf(client: postgres.Sql) {
  const internals = client.listen as unknown as { sql?: { options: { onclose?: (id: number) => void } }; channels?: Record<string, unknown> }
  if (!internals.sql) throw new Error('postgres.js keeps no listening connection where expected (listen.sql)')
  const options = internals.sql.options
  return {
    onClose(lost: () => void) {
      const previous = options.onclose
      options.onclose = (id) => {
        lost()
        previous?.(id)
      }
    },
    forget: (channel: string) => void delete internals.channels?.[channel],
  }
}

type Unsafe = postgres.Sql['unsafe']

/**
 * Replaces `unsafe` (where drizzle sends every statement) on the pool and on each transaction it begins;
 * the transforms below are composed into one `wrap`, so a statement and a transaction pay for one layer.
 */
function wrapUnsafe(client: postgres.Sql, wrap: (unsafe: Unsafe) => Unsafe): postgres.Sql {
  const apply = (sql: postgres.Sql) => {
    Object.defineProperty(sql, 'unsafe', { value: wrap(sql.unsafe.bind(sql) as Unsafe) })
    return sql
  }
  const begin = client.begin.bind(client) as (...args: unknown[]) => Promise<unknown>
  Object.defineProperty(client, 'begin', {
    value: (...args: unknown[]) => {
      const fn = args.pop() as (sql: postgres.Sql) => unknown
      return begin(...args, (sql: postgres.Sql) => fn(apply(sql)))
    },
  })
  return apply(client)
}

/**
 * Makes every query drizzle builds a named prepared statement, as postgres.js does for its own tagged
 * queries: PostgreSQL then parses and plans each statement once per connection instead of on every
 * request (for a list's seven-table join, planning took longer than running). Drizzle asks for
 * `prepare: false` on every builder query without a `.prepare(name)`; those are single statements, so
 * they can always be prepared. Raw `db.execute` calls (migrations, multi-statement SQL) pass no
 * option and stay unprepared. postgres.js forgets a connection's statements when it is recycled
 * (max_lifetime, 30–60 min), which bounds the cache.
 */
const preparedStatements = (unsafe: Unsafe): Unsafe =>
  ((query: string, params?: never, options?: { prepare?: boolean }) =>
    unsafe(query, params, options?.prepare === false ? { ...options, prepare: true } : options)) as Unsafe

/**
 * Two pieces of state postgres.js 3.4.9 keeps per connection outlive the statement they belong to
 * (porsager/postgres#1119, #1181, #1223; unfixed upstream), and this undoes their effect on the next one:
 *
 * - The row count of a result is reset only when a statement completes. After one that failed part-way
 *   (cancelled, timed out, a division by zero on row 4, its backend terminated) the next result on that
 *   connection stores its rows after as many holes: `[row] = result` read `undefined`, and an API-key
 *   lookup that found its key answered 401. The rows are all there, only shifted, so a result that starts
 *   with a hole is moved down in place (its `count`, `command` and `columns` kept); a whole result costs
 *   one `in` check.
 * - The error of a statement whose backend was terminated is kept after the connection closes, and the
 *   reconnected connection fails its first statement with it before sending it. A statement that was never
 *   sent (`state` is set when postgres.js writes it) is sent again, once.
 * See docs/postgres-js-rollback-crash.md.
 */
function postgresJsWorkarounds(unsafe: Unsafe): Unsafe {
  const send = (args: Parameters<Unsafe>, retries: number): postgres.PendingQuery<postgres.Row[]> => {
    const query = unsafe(...args) as postgres.PendingQuery<postgres.Row[]> & QueryInternals
    const then = query.then
    // `values()` and `raw()` return the same query object, so this is the one awaited.
    Object.defineProperty(query, 'then', {
      value: (resolved?: (value: unknown) => unknown, rejected?: (reason: unknown) => unknown) => then.call(query,
        (result: unknown) => (resolved ? resolved(closeUp(result)) : closeUp(result)),
        (error: unknown) => {
          // Only an error from the server: a connection that cannot be made (refused, timed out) is not tried twice.
          if (query.state === null && error instanceof postgres.PostgresError && retries > 0) {
            const again = send(args, retries - 1) as typeof query
            if (query.isRaw === 'values') again.values()
            else if (query.isRaw === true) again.raw()
            return again.then(resolved, rejected)
          }
          if (rejected) return rejected(error)
          throw error
        }),
    })
    return query
  }
  return ((...args: Parameters<Unsafe>) => send(args, 1)) as Unsafe
}

/** What the workarounds read of a postgres.js query: `state` (null until written to a connection) and its row format. */
interface QueryInternals { state: unknown; isRaw?: boolean | 'values' }

function closeUp(result: unknown) {
  if (!Array.isArray(result) || result.length === 0 || 0 in result) return result
  let holes = 0
  while (holes < result.length && !(holes in result)) holes++
  result.copyWithin(0, holes)
  result.length -= holes
  return result
}

/**
 * postgres.js 3.4 answers a failed transaction callback with ROLLBACK on the same connection. When
 * the callback failed because that connection closed (server restart, failover, terminated backend),
 * the ROLLBACK is written to a socket that is already gone, in a setImmediate callback, and the
 * resulting `TypeError: null is not an object (evaluating 'socket.write')` is uncaught: the process
 * exits. The server rolls an interrupted transaction back by itself, so a callback that failed with
 * a lost connection is left unsettled (the library drops it when the connection closes, and
 * `begin` itself rejects with the connection error). See docs/postgres-js-rollback-crash.md.
 */
export function guardTransactions(client: postgres.Sql): postgres.Sql {
  const begin = client.begin.bind(client) as (...args: unknown[]) => Promise<unknown>
  const guarded = (...args: unknown[]) => {
    const fn = args.pop() as (sql: unknown) => unknown
    return begin(...args, (sql: unknown) =>
      Promise.resolve()
        .then(() => fn(sql))
        .catch((error) => {
          if (isConnectionError(error)) return new Promise(() => {})
          throw error
        }))
  }
  Object.defineProperty(client, 'begin', { value: guarded })
  return client
}

/** A real read of a table (not `select 1`): a damaged data directory answers the latter and fails this. */
async function ping(db: Db): Promise<boolean> {
  try {
    await db.execute(sql`select id from workspaces order by id limit 1`)
    return true
  } catch {
    return false
  }
}

/** Rows of a raw `db.execute` result, whichever driver produced it. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[]
}

/** True for a unique-constraint violation, whether the driver error comes bare or wrapped by drizzle. */
export function isUniqueViolation(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } })?.cause ?? error
  return (cause as { code?: string })?.code === '23505'
}

/**
 * `column = any($1::text[])`: one array parameter however many values, so the statement's text (and
 * the prepared plan behind it) is the same for a list of 1 or of 500, where `inArray` makes one
 * statement per length. For the batch paths (dispatch, claims, attempt records, the subscribers'
 * fan-out). `values` may be a `sql.placeholder` of a compiled statement, filled with an array.
 */
export function anyOf(column: AnyColumn | SQL, values: readonly string[] | Placeholder): SQL {
  return sql`${column} = any(${is(values, Placeholder) ? values : sql.param([...(values as readonly string[])])}::text[])`
}

