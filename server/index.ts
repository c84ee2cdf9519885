import { createApp } from './app.ts'
import { startEventDispatcher } from './events/dispatch.ts'
import { startNotificationMailer } from './modules/notifications/mailer.ts'
import { startWebhookRunner } from './modules/webhooks/runner.ts'
import { describeError, isConnectionError } from './db/errors.ts'
import { configOrExit, openMigratedDatabase, resolveSecret } from './startup.ts'

async function main() {
  let config = configOrExit(process.env)
  config = { ...config, secretKey: await resolveSecret(config) }
  const database = await openMigratedDatabase(config)
  const { app, ctx } = await createApp({ config, database })
  // postgres.js reads the array types on every new connection without handling a failure: a backend
  // terminated at that moment (restart, failover) rejects a promise nobody awaits, and the connection
  // simply reconnects (docs/postgres-js-rollback-crash.md). Such a rejection must not end the process;
  // any other unhandled rejection still does.
  process.on('unhandledRejection', (reason) => {
    if (isConnectionError(reason)) return ctx.log.warn('database connection lost while connecting', { error: describeError(reason) })
    ctx.log.error('unhandled rejection', { error: describeError(reason) })
    process.exit(1)
  })
  app.listen({ port: config.port, hostname: '0.0.0.0' })
  ctx.log.info('chorus listening', { url: config.baseUrl, port: app.server?.port, database: database.driver })
  const dispatcher = startEventDispatcher({ db: ctx.db, log: ctx.log, listenForWork: ctx.database.listenForWork })
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
    await dispatcher.stop()
    await mailer.stop()
    ctx.limiter.close()
    await database.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

await main()
