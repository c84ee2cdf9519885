import type { Config } from './config.ts'
import type { Database, Db } from './db/client.ts'
import { deriveKey } from './lib/crypto.ts'
import { createLogger, type Logger } from './lib/log.ts'
import { createMailer, type Mailer } from './lib/mail.ts'
import { memoryRateLimiter, redisRateLimiter, type RateLimiter } from './lib/rate-limit.ts'

/** Everything a module needs, built once per app: services receive the parts they use, never Elysia's context. */
export interface AppContext {
  config: Config & { secretKey: string }
  db: Db
  database: Database
  log: Logger
  mail: Mailer
  limiter: RateLimiter
  keys: {
    accessToken: Uint8Array
    /** Signs the end-user session tokens that identify returns to the widget. */
    widgetSession: Uint8Array
    /** Seals the HS256 secrets of workspaces' JWT configurations at rest. */
    jwtConfigSecrets: Uint8Array
  }
}

export interface ContextOverrides {
  log?: Logger
  mail?: Mailer
  limiter?: RateLimiter
}

export async function createContext(config: Config, database: Database, overrides: ContextOverrides = {}): Promise<AppContext> {
  if (!config.secretKey) throw new Error('SECRET_KEY must be resolved before the app is created')
  const log = overrides.log ?? createLogger(config.logLevel)
  return {
    config: config as Config & { secretKey: string },
    db: database.db,
    database,
    log,
    mail: overrides.mail ?? createMailer(config, database.db, log),
    limiter: overrides.limiter ?? (config.redisUrl ? redisRateLimiter(config.redisUrl) : memoryRateLimiter()),
    keys: {
      accessToken: await deriveKey(config.secretKey, 'access-token'),
      widgetSession: await deriveKey(config.secretKey, 'widget-session'),
      jwtConfigSecrets: await deriveKey(config.secretKey, 'jwt-config-secrets'),
    },
  }
}

/** Builds a plugin once per app, so every module can `.use()` it for types without registering it twice. */
export function perApp<T extends object>(build: (ctx: AppContext) => T): (ctx: AppContext) => T {
  const built = new WeakMap<AppContext, T>()
  return (ctx) => {
    let value = built.get(ctx)
    if (!value) built.set(ctx, (value = build(ctx)))
    return value
  }
}
