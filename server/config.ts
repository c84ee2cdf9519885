// Pure: reads an environment map, returns typed configuration or throws ConfigError naming the variable.
// Side effects (generating SECRET_KEY, creating DATA_DIR) belong to server/index.ts.

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`${variable}: ${problem}`)
    this.name = 'ConfigError'
  }
}

/** The hour (UTC) of members' daily digests unless NOTIFY_DIGEST_HOUR says otherwise. */
export const DEFAULT_DIGEST_HOUR = 8

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

export interface S3Config {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
}

export interface Config {
  port: number
  baseUrl: string
  /** Where the dashboard front end lives; e-mailed links point there. */
  dashboardUrl: string
  /** undefined: embedded PGlite persisted under dataDir; `memory://`: throwaway PGlite; else postgres. */
  databaseUrl: string | undefined
  /** PostgreSQL only: a second pool for the public reads (portal, widget), e.g. a read replica (docs/scaling.md). */
  databaseReadUrl: string | undefined
  dataDir: string
  secretKey: string | undefined
  smtpUrl: string | undefined
  /** How long one SMTP send may take from connecting to the server's last answer, in seconds; then it fails and is retried. */
  smtpSendTimeoutSeconds: number
  /** Post updates to one end user wait this long for more before one e-mail goes out (docs/notifications.md). */
  notifyBatchSeconds: number
  /** Records an import writes per transaction (docs/import.md#how-an-import-runs); small values only for tests. */
  importBatchSize: number
  /** ... but never longer than this after the first of them, however long a burst lasts. */
  notifyBatchMaxSeconds: number
  /** The hour (UTC, 0-23) members' daily digests go out. */
  notifyDigestHour: number
  emailFrom: string
  redisUrl: string | undefined
  superadminEmails: string[]
  allowedOrigins: string[]
  webhookAllowPrivate: boolean
  /** Operator-configured base URLs (CHAT_API_BASE, …) may resolve to private addresses; metadata ranges never. */
  operatorUrlsAllowPrivate: boolean
  webhookRetryScale: number
  /** `host:port` of the DNS server for custom-domain checks and webhook host resolution; undefined: the system's. */
  dnsResolver: string | undefined
  billing: boolean
  billingWebhookSecret: string | undefined
  idpIssuers: { US?: string; EU?: string }
  idpClientId: string | undefined
  idpClientSecret: string | undefined
  chatApiBase: string
  trackerApiBase: string
  /** The providers' OAuth authorize pages the dashboard sends an admin to (CHAT_AUTHORIZE_URL, TRACKER_AUTHORIZE_URL). */
  chatAuthorizeUrl: string
  trackerAuthorizeUrl: string
  /** The OAuth app's credentials at the chat and tracker providers; the tracker's app webhook signing secret. */
  chatClientId: string | undefined
  chatClientSecret: string | undefined
  trackerClientId: string | undefined
  trackerClientSecret: string | undefined
  trackerWebhookSecret: string | undefined
  s3: S3Config | undefined
  /** Where contact-form messages are e-mailed; unset: they are only stored. */
  contactEmail: string | undefined
  logLevel: LogLevel
  trustProxy: boolean
  rateLimitPerKey: number
  rateLimitPerIp: number
  /** Entries of each per-process cache (credentials, public pages; server/db/changes.ts); 0 turns them off. */
  cacheEntries: number
  /** Bytes the public cache's answers may hold in all (PUBLIC_CACHE_MB; server/lib/public-cache.ts); 0 turns it off. */
  publicCacheBytes: number
  /** Seconds a rotated-out OAuth refresh token still earns an access token (0: strict rotation). */
  oauthRefreshGraceSeconds: number
  /** Cookies get `Secure` unless the service runs on plain-http localhost. */
  secureCookies: boolean
  /** Intake addresses are `{token}@` this domain; notification Message-IDs use it too. */
  inboundEmailDomain: string
  /**
   * authserv-ids (RFC 8601) of the receiving mail servers whose `Authentication-Results` header an
   * inbound e-mail's sender may be verified by; empty: only the message's own DKIM signatures count.
   */
  inboundTrustedAuthservIds: string[]
  /** Server processes on PostgreSQL; 0 (the default) means one per core the container may use. The embedded database always runs one. */
  webConcurrency: number
  /** How long start-up waits for an unreachable PostgreSQL before it gives up with one line (exit 78). */
  databaseWaitSeconds: number
}

type Env = Record<string, string | undefined>

const text = (env: Env, name: string) => {
  const value = env[name]?.trim()
  return value ? value : undefined
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name)
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const value = Number(raw)
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`)
  return value
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = text(env, name)
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new ConfigError(name, `must be a number ≥ 0, got "${raw}"`)
  return value
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase()
  if (raw === undefined) return fallback
  if (['true', '1', 'yes', 'on'].includes(raw)) return true
  if (['false', '0', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(name, `must be true or false (or on/off), got "${raw}"`)
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = text(env, name)
  if (raw === undefined) return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(name, 'is not a valid URL')
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`)
  }
  return raw
}

const list = (env: Env, name: string) =>
  (text(env, name) ?? '').split(',').map((item) => item.trim()).filter(Boolean)

function origins(env: Env, name: string): string[] {
  return list(env, name).map((origin) => {
    try {
      return new URL(origin).origin
    } catch {
      throw new ConfigError(name, `"${origin}" is not an origin like https://app.example.com`)
    }
  })
}

/** An IP address with an optional port (default 53): `ip`, `ip:port`, `[ipv6]`, `[ipv6]:port`. DNS servers are named by address. */
function ipAndPort(env: Env, name: string): string | undefined {
  const raw = text(env, name)
  if (raw === undefined) return undefined
  const match = /^(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\])(?::(\d{1,5}))?$/.exec(raw)
  const port = Number(match?.[2] ?? 53)
  if (!match || port < 1 || port > 65535) throw new ConfigError(name, `must be an IP address and port like 127.0.0.1:53, got "${raw}"`)
  return `${match[1]}:${port}`
}

function s3(env: Env): S3Config | undefined {
  const bucket = text(env, 'S3_BUCKET')
  if (!bucket) return undefined
  const required = (name: string) => {
    const value = text(env, name)
    if (!value) throw new ConfigError(name, 'is required when S3_BUCKET is set')
    return value
  }
  return {
    bucket,
    endpoint: url(env, 'S3_ENDPOINT', ['http:', 'https:']) ?? required('S3_ENDPOINT'),
    region: text(env, 'S3_REGION') ?? 'us-east-1',
    accessKeyId: required('S3_ACCESS_KEY_ID'),
    secretAccessKey: required('S3_SECRET_ACCESS_KEY'),
  }
}

function inboundDomain(env: Env, fallback: string): string {
  const raw = text(env, 'INBOUND_EMAIL_DOMAIN')?.toLowerCase()
  if (raw === undefined) return fallback
  if (!/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(raw)) throw new ConfigError('INBOUND_EMAIL_DOMAIN', `must be a domain name like in.example.com, got "${raw}"`)
  return raw
}

export function getConfig(env: Env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535)
  const baseUrl = (url(env, 'BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, '')
  const base = new URL(baseUrl)

  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:', 'memory:', 'file:'])
  const databaseReadUrl = url(env, 'DATABASE_READ_URL', ['postgres:', 'postgresql:'])
  if (databaseReadUrl && !/^postgres(ql)?:/.test(databaseUrl ?? '')) throw new ConfigError('DATABASE_READ_URL', 'needs DATABASE_URL on PostgreSQL too (the embedded database has no replicas)')
  const secretKey = text(env, 'SECRET_KEY')
  if (secretKey !== undefined && secretKey.length < 32) {
    throw new ConfigError('SECRET_KEY', 'must be at least 32 characters')
  }

  // A self-hosted install has no billing provider: billing (trials that lapse, locked keys) is on only with its webhook secret.
  const billingRaw = text(env, 'BILLING')?.toLowerCase() ?? (text(env, 'BILLING_WEBHOOK_SECRET') ? 'on' : 'off')
  if (billingRaw !== 'on' && billingRaw !== 'off') throw new ConfigError('BILLING', `must be on or off, got "${billingRaw}"`)

  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info') as LogLevel
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', 'must be one of debug, info, warn, error, silent')
  }

  const emailFrom = text(env, 'EMAIL_FROM') ?? `Chorus <no-reply@${base.hostname}>`
  if (!emailFrom.includes('@')) throw new ConfigError('EMAIL_FROM', 'must contain an e-mail address')

  const contactEmail = text(env, 'CONTACT_EMAIL')?.toLowerCase()
  if (contactEmail !== undefined && !/^[^@\s]+@[^@\s]+$/.test(contactEmail)) throw new ConfigError('CONTACT_EMAIL', `"${contactEmail}" is not an e-mail address`)

  const superadminEmails = list(env, 'SUPERADMIN_EMAILS').map((email) => email.toLowerCase())
  for (const email of superadminEmails) {
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new ConfigError('SUPERADMIN_EMAILS', `"${email}" is not an e-mail address`)
  }

  const idpIssuers = { US: url(env, 'IDP_ISSUER_US', ['http:', 'https:']), EU: url(env, 'IDP_ISSUER_EU', ['http:', 'https:']) }
  if ((idpIssuers.US || idpIssuers.EU) && !text(env, 'IDP_CLIENT_ID')) throw new ConfigError('IDP_CLIENT_ID', 'is required when IDP_ISSUER_US or IDP_ISSUER_EU is set')

  return {
    port,
    baseUrl,
    dashboardUrl: (url(env, 'DASHBOARD_URL', ['http:', 'https:']) ?? baseUrl).replace(/\/+$/, ''),
    databaseUrl,
    databaseReadUrl,
    dataDir: text(env, 'DATA_DIR') ?? './data',
    secretKey,
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    smtpSendTimeoutSeconds: integer(env, 'SMTP_SEND_TIMEOUT_SECONDS', 20, 1, 25),
    notifyBatchSeconds: positiveNumber(env, 'NOTIFY_BATCH_SECONDS', 60),
    importBatchSize: integer(env, 'IMPORT_BATCH_SIZE', 1000, 1, 10_000),
    notifyBatchMaxSeconds: positiveNumber(env, 'NOTIFY_BATCH_MAX_SECONDS', 900),
    notifyDigestHour: integer(env, 'NOTIFY_DIGEST_HOUR', DEFAULT_DIGEST_HOUR, 0, 23),
    emailFrom,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    superadminEmails,
    allowedOrigins: origins(env, 'ALLOWED_ORIGINS'),
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    operatorUrlsAllowPrivate: boolean(env, 'OPERATOR_URLS_ALLOW_PRIVATE', false),
    webhookRetryScale: positiveNumber(env, 'WEBHOOK_RETRY_SCALE', 1),
    dnsResolver: ipAndPort(env, 'DNS_RESOLVER'),
    billing: billingRaw === 'on',
    billingWebhookSecret: text(env, 'BILLING_WEBHOOK_SECRET'),
    idpIssuers,
    idpClientId: text(env, 'IDP_CLIENT_ID'),
    idpClientSecret: text(env, 'IDP_CLIENT_SECRET'),
    chatApiBase: (url(env, 'CHAT_API_BASE', ['http:', 'https:']) ?? 'https://slack.com/api').replace(/\/+$/, ''),
    trackerApiBase: (url(env, 'TRACKER_API_BASE', ['http:', 'https:']) ?? 'https://api.linear.app').replace(/\/+$/, ''),
    chatAuthorizeUrl: url(env, 'CHAT_AUTHORIZE_URL', ['http:', 'https:']) ?? 'https://slack.com/oauth/v2/authorize',
    trackerAuthorizeUrl: url(env, 'TRACKER_AUTHORIZE_URL', ['http:', 'https:']) ?? 'https://linear.app/oauth/authorize',
    chatClientId: text(env, 'CHAT_CLIENT_ID'),
    chatClientSecret: text(env, 'CHAT_CLIENT_SECRET'),
    trackerClientId: text(env, 'TRACKER_CLIENT_ID'),
    trackerClientSecret: text(env, 'TRACKER_CLIENT_SECRET'),
    trackerWebhookSecret: text(env, 'TRACKER_WEBHOOK_SECRET'),
    s3: s3(env),
    contactEmail,
    logLevel,
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    rateLimitPerKey: integer(env, 'RATE_LIMIT_PER_KEY', 600, 1, 1_000_000),
    rateLimitPerIp: integer(env, 'RATE_LIMIT_PER_IP', 20, 1, 1_000_000),
    cacheEntries: integer(env, 'CACHE_ENTRIES', 1000, 0, 1_000_000),
    publicCacheBytes: integer(env, 'PUBLIC_CACHE_MB', 8, 0, 4096) * 1024 * 1024,
    inboundEmailDomain: inboundDomain(env, base.hostname),
    inboundTrustedAuthservIds: list(env, 'INBOUND_TRUSTED_AUTHSERV_IDS').map((id) => id.toLowerCase()),
    oauthRefreshGraceSeconds: integer(env, 'OAUTH_REFRESH_GRACE_SECONDS', 30, 0, 3600),
    webConcurrency: integer(env, 'WEB_CONCURRENCY', 0, 0, 1024),
    databaseWaitSeconds: integer(env, 'DATABASE_WAIT_SECONDS', 30, 0, 3600),
    secureCookies: !(base.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(base.hostname)),
  }
}
