import { createApp } from './app.ts'
import { startNotificationMailer } from './modules/notifications/mailer.ts'
import { startWebhookRunner } from './modules/webhooks/runner.ts'
import { configOrExit, openMigratedDatabase, resolveSecret } from './startup.ts'

async function main() {
  let config = configOrExit(process.env)
  config = { ...config, secretKey: await resolveSecret(config) }
  const database = await openMigratedDatabase(config)
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
