import type { PGlite as PGliteClass } from '@electric-sql/pglite'
import { is, Placeholder, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import postgres from 'postgres'
import { openPostgresPool } from './postgres-pool.ts'
import { SqlFragment, SqlRaw, type SqlRunner } from './sql-text.ts'
import { markEffectsOnCommit } from './effects.ts'
import { CACHE_CHANNEL } from './changes.ts'
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
  /** `db` as a runner of SQL-text statements (sql-text.ts): the queue statements the worker shares. */
  sql: SqlRunner
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
      sql: runnerOf(db),
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
  const pool = openPostgresPool(databaseUrl, { poolSize: options.poolSize })
  const client = pool.client
  const db = markEffectsOnCommit(drizzlePostgres(client, { logger }) as unknown as Db)
  return {
    db,
    sql: runnerOf(db),
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
    listenForWork: pool.listenForWork,
    listenForChanges: pool.listenForChanges,
    close: () => client.end({ timeout: 5 }),
  }
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

/** A SQL-text statement (sql-text.ts) as drizzle's `sql`, to run on a drizzle database or transaction. */
export function toDrizzle(statement: SqlFragment): SQL {
  const values = statement.values.map((value) =>
    value instanceof SqlFragment ? toDrizzle(value) : value instanceof SqlRaw ? sql.raw(value.text) : sql.param(value))
  return sql(statement.strings as unknown as TemplateStringsArray, ...values)
}

/**
 * The main thread's runner of SQL-text statements: drizzle's own connection (the pool or `db`'s open
 * transaction), so the API runs the worker's statements with the same logging, effects and row types.
 */
export function runnerOf(db: Db | Tx): SqlRunner {
  return {
    rows: async <Row>(statement: SqlFragment) => rowsOf<Row>(await db.execute(toDrizzle(statement))),
    transaction: (work) => db.transaction((tx) => work(runnerOf(tx))),
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

