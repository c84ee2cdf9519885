import type { Config } from './config.ts'
import { createChangeFeed, type ChangeFeed } from './db/changes.ts'
import { openDatabase, type Database, type Db } from './db/client.ts'
import { createLogger, type Logger } from './lib/log.ts'
import { createMailer, type Mailer } from './lib/mail.ts'
import { outboundFor, type Outbound } from './lib/outbound.ts'
import { memoryRateLimiter, postgresRateLimiter, redisRateLimiter, type RateLimiter } from './lib/rate-limit.ts'
import { createSecrets, type Secrets } from './lib/secrets.ts'
import { createStorage, type Storage } from './lib/storage.ts'

/** The background worker as /health reports it: `off` where no worker runs (tests, tools), else its supervisor's view (server/background/supervisor.ts). */
export type BackgroundState = 'off' | 'starting' | 'ok' | 'restarting'

/** Everything a module needs, built once per app: services receive the parts they use, never Elysia's context. */
export interface AppContext {
  config: Config & { secretKey: string }
  db: Db
  database: Database
  /**
   * Where the public reads go (the portal's pages, the widget's and the public JSON reads): a pool on
   * DATABASE_READ_URL (a read replica) when set, else `db`. Anything a visitor must see right after their own
   * write (their `voted` flags, their session) reads `db`.
   */
  readDb: Db
  /** The read pool, when it is not `database` (closed on shutdown). */
  readDatabase?: Database
  log: Logger
  mail: Mailer
  limiter: RateLimiter
  /** Seal/unseal secrets at rest, purpose-bound keys from SECRET_KEY (server/lib/secrets.ts). */
  secrets: Secrets
  /** The guarded fetch for every URL a user, a provider or the operator chose (server/lib/outbound.ts). */
  outbound: Outbound
  /** Uploaded files: a directory under DATA_DIR, or S3 when configured. */
  storage: Storage
  /** Committed changes to what the per-process caches hold, and whether they are heard now (server/db/changes.ts). */
  changes: ChangeFeed
  /** Set by the background worker's supervisor; read by /health. */
  background: { state: BackgroundState }
  keys: {
    accessToken: Uint8Array
    /** Signs the end-user session tokens that identify returns to the widget. */
    widgetSession: Uint8Array
  }
}

export interface ContextOverrides {
  log?: Logger
  mail?: Mailer
  limiter?: RateLimiter
  storage?: Storage
}

export async function createContext(config: Config, database: Database, overrides: ContextOverrides = {}): Promise<AppContext> {
  if (!config.secretKey) throw new Error('SECRET_KEY must be resolved before the app is created')
  const log = overrides.log ?? createLogger(config.logLevel)
  const secrets = await createSecrets(config.secretKey)
  const changes = createChangeFeed()
  // PGlite announces changes in this thread as they commit. On PostgreSQL the server listens once it starts
  // (`listenForCaches`, server/index.ts); until then, and in a process that never listens, the caches are off.
  if (database.driver === 'pglite') await database.listenForChanges(changes.changed, changes.setLive)
  const readDatabase = config.databaseReadUrl ? openDatabase(config.databaseReadUrl, config.dataDir) : undefined
  return {
    config: config as Config & { secretKey: string },
    db: database.db,
    database,
    readDb: readDatabase?.db ?? database.db,
    readDatabase,
    log,
    mail: overrides.mail ?? createMailer(config, database.sql, log),
    limiter: overrides.limiter ?? rateLimiterFor(config, database),
    secrets,
    outbound: outboundFor(config),
    storage: overrides.storage ?? createStorage(config),
    changes,
    background: { state: 'off' },
    keys: {
      accessToken: await secrets.deriveKey('access-token'),
      widgetSession: await secrets.deriveKey('widget-session'),
    },
  }
}

/** A guarded fetch with the configured policy and a DNS resolver (and cache) of its own. */

/** Builds a plugin once per app, so every module can `.use()` it for types without registering it twice. */
export function perApp<T extends object>(build: (ctx: AppContext) => T): (ctx: AppContext) => T {
  const built = new WeakMap<AppContext, T>()
  return (ctx) => {
    let value = built.get(ctx)
    if (!value) built.set(ctx, (value = build(ctx)))
    return value
  }
}

/**
 * Redis when configured; else PostgreSQL, which every process and machine on the database shares;
 * in-process counters only for the embedded database, which one process owns.
 */
function rateLimiterFor(config: Config, database: Database): RateLimiter {
  if (config.redisUrl) return redisRateLimiter(config.redisUrl)
  return database.driver === 'postgres' ? postgresRateLimiter(database.db) : memoryRateLimiter()
}
