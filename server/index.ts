import { mkdir } from 'node:fs/promises'
import { createApp } from './app.ts'
import { ConfigError, getConfig, type Config } from './config.ts'
import { openDatabase } from './db/client.ts'
import { randomToken } from './lib/crypto.ts'
import { startNotificationMailer } from './modules/notifications/mailer.ts'
import { startWebhookRunner } from './modules/webhooks/runner.ts'

/** SECRET_KEY from the environment, or one generated once and kept under DATA_DIR (a single-instance convenience). */
async function resolveSecret(config: Config): Promise<string> {
  if (config.secretKey) return config.secretKey
  await mkdir(config.dataDir, { recursive: true })
  const file = Bun.file(`${config.dataDir}/secret.key`)
  if (await file.exists()) return (await file.text()).trim()
  const secret = randomToken(48)
  await Bun.write(file, secret)
  console.warn(JSON.stringify({ level: 'warn', msg: `SECRET_KEY is not set; generated one in ${config.dataDir}/secret.key. Several instances must share one SECRET_KEY.` }))
  return secret
}

async function main() {
  let config: Config
  try {
    config = getConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Invalid configuration: ${error.message}`)
      process.exit(1)
    }
    throw error
  }
  config = { ...config, secretKey: await resolveSecret(config) }
  if (config.databaseUrl === undefined) await mkdir(config.dataDir, { recursive: true })

  const database = openDatabase(config.databaseUrl, config.dataDir)
  await database.migrate()
  const { app, ctx } = await createApp({ config, database })
  app.listen({ port: config.port, hostname: '0.0.0.0' })
  ctx.log.info('chorus listening', { url: config.baseUrl, port: app.server?.port, database: database.driver })
  const webhooks = await startWebhookRunner(ctx)
  const mailer = startNotificationMailer(ctx)

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    ctx.log.info('shutting down', { signal })
    // Stop accepting, let in-flight requests finish, let the worker record attempts in flight, then close the pool.
    await app.stop()
    await webhooks.stop()
    await mailer.stop()
    ctx.limiter.close()
    await database.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

await main()
