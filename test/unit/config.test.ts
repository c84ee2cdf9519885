import { describe, expect, test } from 'bun:test'
import { ConfigError, getConfig } from '../../server/config.ts'

const fails = (env: Record<string, string>, variable: string) => {
  try {
    getConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe(variable)
    expect((error as Error).message.startsWith(`${variable}:`)).toBe(true)
    return
  }
  throw new Error(`expected ${variable} to be rejected`)
}

describe('getConfig', () => {
  test('defaults need no environment at all', () => {
    const config = getConfig({})
    expect(config.port).toBe(3000)
    expect(config.baseUrl).toBe('http://localhost:3000')
    expect(config.dashboardUrl).toBe('http://localhost:3000')
    expect(config.databaseUrl).toBeUndefined()
    expect(config.dataDir).toBe('./data')
    expect(config.secretKey).toBeUndefined()
    expect(config.billing).toBe(false)
    expect(config.webhookAllowPrivate).toBe(false)
    expect(config.webhookRetryScale).toBe(1)
    expect(config.dnsResolver).toBeUndefined()
    expect(config.rateLimitPerKey).toBe(600)
    expect(config.rateLimitPerIp).toBe(20)
    expect(config.secureCookies).toBe(false)
    expect(config.s3).toBeUndefined()
    expect(config.superadminEmails).toEqual([])
    expect(config.smtpSendTimeoutSeconds).toBe(20)
  })

  test('reads every variable', () => {
    const config = getConfig({
      PORT: '8080', BASE_URL: 'https://feedback.example.com/', DATABASE_URL: 'postgres://u@db:5432/chorus', DATA_DIR: '/var/chorus',
      SECRET_KEY: 'k'.repeat(32), SMTP_URL: 'smtp://mail:25', EMAIL_FROM: 'Chorus <hi@example.com>', REDIS_URL: 'redis://cache:6379',
      SUPERADMIN_EMAILS: 'Root@Example.com, ops@example.com', ALLOWED_ORIGINS: 'https://app.example.com,https://admin.example.com/',
      WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.001', BILLING: 'off', BILLING_WEBHOOK_SECRET: 'whsec_x',
      IDP_ISSUER_US: 'https://us.idp.example', IDP_ISSUER_EU: 'https://eu.idp.example', IDP_CLIENT_ID: 'cid', IDP_CLIENT_SECRET: 'cs',
      CHAT_API_BASE: 'http://127.0.0.1:9000/api/', TRACKER_API_BASE: 'http://127.0.0.1:9001',
      S3_BUCKET: 'files', S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b',
      CONTACT_EMAIL: 'Sales@Example.com', SMTP_SEND_TIMEOUT_SECONDS: '5',
    })
    expect(config.port).toBe(8080)
    expect(config.baseUrl).toBe('https://feedback.example.com')
    expect(config.secureCookies).toBe(true)
    expect(config.superadminEmails).toEqual(['root@example.com', 'ops@example.com'])
    expect(config.allowedOrigins).toEqual(['https://app.example.com', 'https://admin.example.com'])
    expect(config.webhookAllowPrivate).toBe(true)
    expect(config.webhookRetryScale).toBe(0.001)
    expect(config.billing).toBe(false)
    expect(config.idpIssuers).toEqual({ US: 'https://us.idp.example', EU: 'https://eu.idp.example' })
    expect(config.chatApiBase).toBe('http://127.0.0.1:9000/api')
    expect(config.s3).toEqual({ bucket: 'files', endpoint: 'http://minio:9000', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b' })
    expect(config.contactEmail).toBe('sales@example.com')
    expect(config.smtpSendTimeoutSeconds).toBe(5)
  })

  test('DNS_RESOLVER is an address and port, the port defaulting to 53', () => {
    expect(getConfig({ DNS_RESOLVER: '127.0.0.1:5353' }).dnsResolver).toBe('127.0.0.1:5353')
    expect(getConfig({ DNS_RESOLVER: '10.0.0.2' }).dnsResolver).toBe('10.0.0.2:53')
    expect(getConfig({ DNS_RESOLVER: '[::1]:5353' }).dnsResolver).toBe('[::1]:5353')
  })

  test('memory:// and file: select the embedded database', () => {
    expect(getConfig({ DATABASE_URL: 'memory://' }).databaseUrl).toBe('memory://')
    expect(getConfig({ DATABASE_URL: 'file:///tmp/chorus' }).databaseUrl).toBe('file:///tmp/chorus')
  })

  test('invalid values name their variable', () => {
    fails({ PORT: 'eighty' }, 'PORT')
    fails({ PORT: '70000' }, 'PORT')
    fails({ BASE_URL: 'not a url' }, 'BASE_URL')
    fails({ BASE_URL: 'ftp://example.com' }, 'BASE_URL')
    fails({ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL')
    fails({ SECRET_KEY: 'short' }, 'SECRET_KEY')
    fails({ SMTP_URL: 'http://mail' }, 'SMTP_URL')
    fails({ REDIS_URL: 'localhost:6379' }, 'REDIS_URL')
    fails({ WEBHOOK_ALLOW_PRIVATE: 'maybe' }, 'WEBHOOK_ALLOW_PRIVATE')
    fails({ WEBHOOK_RETRY_SCALE: '-1' }, 'WEBHOOK_RETRY_SCALE')
    fails({ DNS_RESOLVER: 'dns://1.1.1.1' }, 'DNS_RESOLVER')
    fails({ DNS_RESOLVER: 'ns.example.com' }, 'DNS_RESOLVER')
    fails({ DNS_RESOLVER: '127.0.0.1:70000' }, 'DNS_RESOLVER')
    fails({ BILLING: 'sometimes' }, 'BILLING')
    fails({ SUPERADMIN_EMAILS: 'not-an-email' }, 'SUPERADMIN_EMAILS')
    fails({ ALLOWED_ORIGINS: 'app.example.com' }, 'ALLOWED_ORIGINS')
    fails({ LOG_LEVEL: 'loud' }, 'LOG_LEVEL')
    fails({ S3_BUCKET: 'files' }, 'S3_ENDPOINT')
    fails({ S3_BUCKET: 'files', S3_ENDPOINT: 'http://s3' }, 'S3_ACCESS_KEY_ID')
    fails({ CONTACT_EMAIL: 'sales' }, 'CONTACT_EMAIL')
    // A send must end inside the 60 s lease of the mail it sends and before the HTTP server's 30 s idle limit.
    for (const value of ['0', '26', '2.5', 'soon']) fails({ SMTP_SEND_TIMEOUT_SECONDS: value }, 'SMTP_SEND_TIMEOUT_SECONDS')
  })
})
