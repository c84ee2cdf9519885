import { PGlite } from '@electric-sql/pglite'
import { sql } from 'drizzle-orm'
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import postgres from 'postgres'
import * as schema from './schema/index.ts'

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>
/** The argument a `db.transaction` callback receives; services accept `Db | Tx` where either works. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]

export interface Database {
  db: Db
  driver: 'pglite' | 'postgres'
  /** Runs pending migrations; on Postgres under an advisory lock so concurrent starts are safe. */
  migrate(): Promise<void>
  /** True when a trivial query answers. */
  ping(): Promise<boolean>
  /** PGlite only: the data directory as a tarball, to start other instances from. */
  dumpDataDir?(): Promise<Blob>
  close(): Promise<void>
}

const migrationsFolder = `${import.meta.dir}/migrations`
const MIGRATION_LOCK = 7_245_011

export interface DatabaseOptions {
  /** Called with every SQL statement sent; tests use it to prove lists cost a constant number of queries. */
  onQuery?: (sql: string) => void
  /** PGlite only: start from a dumped data directory (tests reuse one migrated template). */
  loadDataDir?: Blob
}

/** `undefined` → PGlite persisted in dataDir; `memory://` → throwaway PGlite; `file://path` → PGlite at path; else postgres.js. */
export function openDatabase(databaseUrl: string | undefined, dataDir: string, options: DatabaseOptions = {}): Database {
  const logger = options.onQuery ? { logQuery: (query: string) => options.onQuery!(query) } : undefined
  if (databaseUrl === undefined || databaseUrl.startsWith('memory:') || databaseUrl.startsWith('file:')) {
    const location = databaseUrl === undefined ? `${dataDir}/pglite` : databaseUrl.startsWith('file:') ? new URL(databaseUrl).pathname : undefined
    const client = new PGlite(location, options.loadDataDir ? { loadDataDir: options.loadDataDir } : {})
    const db = drizzlePglite(client, { schema, logger }) as unknown as Db
    return {
      db,
      driver: 'pglite',
      migrate: () => migratePglite(db as never, { migrationsFolder }),
      ping: () => ping(db),
      dumpDataDir: () => client.dumpDataDir('none'),
      close: () => client.close(),
    }
  }
  const client = postgres(databaseUrl, { max: 10, onnotice: () => {}, connection: { application_name: 'chorus' } })
  const db = drizzlePostgres(client, { schema, logger }) as unknown as Db
  return {
    db,
    driver: 'postgres',
    async migrate() {
      // The lock is a mutex among starting processes: whoever holds it migrates, the others wait and find nothing to do.
      const lock = postgres(databaseUrl, { max: 1, onnotice: () => {} })
      try {
        await lock`select pg_advisory_lock(${MIGRATION_LOCK})`
        await migratePostgres(db as never, { migrationsFolder })
      } finally {
        await lock.end({ timeout: 5 })
      }
    },
    ping: () => ping(db),
    close: () => client.end({ timeout: 5 }),
  }
}

async function ping(db: Db): Promise<boolean> {
  try {
    await db.execute(sql`select 1`)
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
