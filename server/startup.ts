import { asc, sql } from 'drizzle-orm'
import { mkdir } from 'node:fs/promises'
import postgres from 'postgres'
import { ConfigError, getConfig, type Config } from './config.ts'
import { openDatabase, rowsOf, type Database } from './db/client.ts'
import { runDataMigrations } from './db/data-migrations.ts'
import { isConnectionError } from './db/errors.ts'
import { workspaces } from './db/schema/index.ts'
import { freshDataTemplate, isFreshDataDirectory, migrationCount } from './db/template.ts'
import type { Logger } from './lib/log.ts'
import { DataDirLocked, lockDataDir } from './lib/data-dir-lock.ts'
import { randomToken } from './lib/secrets.ts'

// What every entry point (the server, `npm run seed`) does before its own work.

/** The configuration, or one line naming the bad variable and exit code 1. */
export function configOrExit(env: Record<string, string | undefined>): Config {
  try {
    return getConfig(env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`Invalid configuration: ${error.message}`)
    process.exit(1)
  }
}

/** SECRET_KEY from the environment, or one generated once and kept under DATA_DIR (a single-instance convenience). */
export async function resolveSecret(config: Config): Promise<string> {
  if (config.secretKey) return config.secretKey
  await mkdir(config.dataDir, { recursive: true })
  const file = Bun.file(`${config.dataDir}/secret.key`)
  if (await file.exists()) return (await file.text()).trim()
  const secret = randomToken(48)
  await Bun.write(file, secret)
  console.warn(JSON.stringify({ level: 'warn', msg: `SECRET_KEY is not set; generated one in ${config.dataDir}/secret.key. Several instances must share one SECRET_KEY.` }))
  return secret
}

/** Where the embedded database keeps its files, or undefined for PostgreSQL and in-memory PGlite. */
function embeddedDirectory(config: Config) {
  if (config.databaseUrl === undefined) return config.dataDir
  if (config.databaseUrl.startsWith('file:')) return new URL(config.databaseUrl).pathname
  return undefined
}

/** PGlite's own directory inside the embedded one (as openDatabase places it). */
const pgliteDirectory = (config: Config, embedded: string) => (config.databaseUrl === undefined ? `${embedded}/pglite` : embedded)

/**
 * The exit status of a failure no restart would cure (the port taken, PostgreSQL unreachable past
 * DATABASE_WAIT_SECONDS, the data directory held by another process): the supervisor gives up on it
 * instead of restarting, and exits non-zero itself (EX_CONFIG of sysexits.h).
 */
export const EXIT_CANNOT_START = 78

/** One line on stderr saying what is wrong and what to do, then exit EXIT_CANNOT_START. */
export function cannotStart(line: string): never {
  console.error(line)
  process.exit(EXIT_CANNOT_START)
}

/** host:port of a PostgreSQL URL, without its credentials. */
export const postgresAddress = (url: string) => {
  const parsed = new URL(url)
  return `${parsed.hostname || 'localhost'}:${parsed.port || 5432}`
}

const errorCode = (error: unknown) => {
  for (let link = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; link && depth < 5; link = link.cause as typeof link, depth++) {
    if (typeof link.code === 'string') return link.code
  }
  return (error as Error)?.message ?? String(error)
}

/**
 * Waits for the PostgreSQL at `url` to answer, at most `seconds` (it may still be starting, as in
 * compose); past that, or at once for an error waiting cannot cure (a wrong password, a missing
 * database), one line naming the address and exit EXIT_CANNOT_START.
 */
export async function waitForPostgres(url: string, seconds: number, log?: Logger) {
  const deadline = Date.now() + seconds * 1000
  let said = false
  for (;;) {
    const probe = postgres(url, { max: 1, connect_timeout: Math.max(1, Math.min(5, seconds)), onnotice: () => {} })
    try {
      await probe`select 1`
      return
    } catch (error) {
      if (!isConnectionError(error)) cannotStart(`PostgreSQL at ${postgresAddress(url)} refused the connection: ${(error as Error).message} (check DATABASE_URL)`)
      if (Date.now() >= deadline) cannotStart(`Cannot reach PostgreSQL at ${postgresAddress(url)} (${errorCode(error)}); gave up after ${seconds} s: start it, or fix DATABASE_URL (DATABASE_WAIT_SECONDS sets the wait)`)
      if (!said) log?.info(`waiting for PostgreSQL at ${postgresAddress(url)} (up to ${seconds} s)`, { error: errorCode(error) })
      said = true
      await Bun.sleep(Math.min(1000, Math.max(0, deadline - Date.now())))
    } finally {
      await probe.end({ timeout: 1 }).catch(() => {})
    }
  }
}

async function appliedMigrations(database: Database): Promise<number> {
  try {
    return Number(rowsOf<{ count: number | string }>(await database.db.execute(sql`select count(*) as count from drizzle.__drizzle_migrations`))[0]?.count ?? 0)
  } catch (error) {
    if (isConnectionError(error)) throw error
    return 0
  }
}

/**
 * The configured database with every migration applied, the start-up data migrations included (the
 * embedded one is created under DATA_DIR, from the install's template when there is one: server/db/template.ts).
 * The embedded database is locked for this process (`role` names it to a second one, which exits
 * with one line naming the holder): two processes on one PGlite directory corrupt it.
 * Says what it does through `log`: opening, "migrating N/M", done.
 */
export async function openMigratedDatabase(config: Config, role = 'server', log?: Logger): Promise<Database> {
  const embedded = embeddedDirectory(config)
  let template: Blob | undefined
  if (embedded !== undefined) {
    await mkdir(embedded, { recursive: true })
    try {
      lockDataDir(embedded, role)
    } catch (error) {
      if (!(error instanceof DataDirLocked)) throw error
      cannotStart(`The embedded database ${error.message}; it allows one process at a time: stop that process first (or use a PostgreSQL DATABASE_URL).`)
    }
    if (isFreshDataDirectory(pgliteDirectory(config, embedded))) {
      template = freshDataTemplate()
      log?.info(template ? `creating the embedded database in ${embedded} from the install's template` : `creating the embedded database in ${embedded} (the first start takes a while; \`npm run db:template\` makes the next fresh one quick)`)
    } else log?.info(`opening the embedded database in ${embedded}`)
  } else if (config.databaseUrl && /^postgres(ql)?:/.test(config.databaseUrl)) {
    await waitForPostgres(config.databaseUrl, config.databaseWaitSeconds, log)
  }
  const secretKey = await resolveSecret(config)
  const database = openDatabase(config.databaseUrl, config.dataDir, template ? { loadDataDir: template } : {})
  try {
    const total = migrationCount()
    const pending = total - (await appliedMigrations(database))
    if (pending > 0) log?.info(`migrating ${pending}/${total}…`, { pending, total })
    const started = performance.now()
    const dataMigrations = async (db: Database['db']) => {
      const report = await runDataMigrations(db, secretKey)
      if (report.unreadable) console.warn(JSON.stringify({ level: 'warn', msg: `${report.unreadable} sealed secret(s) do not open with this SECRET_KEY; left as they are` }))
    }
    // Nothing pending: the migrator (which reads and hashes every migration file, and on PostgreSQL opens a
    // connection for its lock) has nothing to do. The data migrations run on every start; their writes are
    // conditional on the value read, so they need no lock. (BENCHMARKS.md, "footprint".)
    if (pending > 0) await database.migrate(dataMigrations)
    else await dataMigrations(database.db)
    log?.info(pending > 0 ? `migrated ${pending}/${total}` : `database up to date (${total} migrations)`, { duration_ms: Math.round(performance.now() - started) })
  } catch (error) {
    // PostgreSQL went away between the wait and the migrations: as unreachable as before the wait.
    if (isConnectionError(error) && config.databaseUrl) cannotStart(`Lost PostgreSQL at ${postgresAddress(config.databaseUrl)} while migrating (${errorCode(error)}): start it, or fix DATABASE_URL`)
    throw error
  }
  return database
}

/**
 * The last start-up line: the sign-in page, the portal of the first workspace (when there is one) and
 * the API reference, as a sentence and as fields.
 */
export async function whereToGo(db: Database['db'], baseUrl: string): Promise<[string, Record<string, string | null>]> {
  const [first] = await db.select({ slug: workspaces.slug }).from(workspaces).orderBy(asc(workspaces.createdAt)).limit(1)
  const base = baseUrl.replace(/\/$/, '')
  const where = { sign_in: `${base}/signin`, portal: first ? `${base}/portal/${first.slug}` : null, docs: `${base}/docs` }
  const portal = where.portal ? `the ${first!.slug} portal at ${where.portal}` : 'no workspace yet (create one once signed in, or run `npm run seed` for a demo)'
  return [`chorus ready: sign in at ${where.sign_in}; ${portal}; API reference at ${where.docs}`, where]
}
