import { mkdir } from 'node:fs/promises'
import { ConfigError, getConfig, type Config } from './config.ts'
import { openDatabase, type Database } from './db/client.ts'
import { runDataMigrations } from './db/data-migrations.ts'
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

/**
 * The configured database with every migration applied, the start-up data migrations included (the
 * embedded one is created under DATA_DIR).
 * The embedded database is locked for this process (`role` names it to a second one, which exits
 * with one line naming the holder): two processes on one PGlite directory corrupt it.
 */
export async function openMigratedDatabase(config: Config, role = 'server'): Promise<Database> {
  const embedded = embeddedDirectory(config)
  if (embedded !== undefined) {
    await mkdir(embedded, { recursive: true })
    try {
      lockDataDir(embedded, role)
    } catch (error) {
      if (!(error instanceof DataDirLocked)) throw error
      console.error(`The embedded database ${error.message}; it allows one process at a time: stop that process first (or use a PostgreSQL DATABASE_URL).`)
      process.exit(1)
    }
  }
  const secretKey = await resolveSecret(config)
  const database = openDatabase(config.databaseUrl, config.dataDir)
  await database.migrate(async (db) => {
    const report = await runDataMigrations(db, secretKey)
    if (report.unreadable) console.warn(JSON.stringify({ level: 'warn', msg: `${report.unreadable} sealed secret(s) do not open with this SECRET_KEY; left as they are` }))
  })
  return database
}
