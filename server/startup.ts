import { mkdir } from 'node:fs/promises'
import { ConfigError, getConfig, type Config } from './config.ts'
import { openDatabase, type Database } from './db/client.ts'
import { randomToken } from './lib/crypto.ts'

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

/** The configured database with every migration applied (the embedded one is created under DATA_DIR). */
export async function openMigratedDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl === undefined) await mkdir(config.dataDir, { recursive: true })
  const database = openDatabase(config.databaseUrl, config.dataDir)
  await database.migrate()
  return database
}
