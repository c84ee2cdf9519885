import { isSupervised, processCount, PROCESS_INDEX_ENV, stopWithSupervisor, superviseProcesses } from './cluster.ts'
import { createLogger } from './lib/log.ts'
import { startBackground } from './background/supervisor.ts'
import { listenForCaches } from './db/changes.ts'
import { unhandledRejectionHandler } from './db/errors.ts'
import { cannotStart, configOrExit, openMigratedDatabase, resolveSecret, waitForPostgres, whereToGo } from './startup.ts'

async function main() {
  let config = configOrExit(process.env)
  config = { ...config, secretKey: await resolveSecret(config) }
  const processes = processCount(config)
  const log = createLogger(config.logLevel)
  // Several processes: this one only supervises; each child serves (and finds SECRET_KEY set).
  if (processes > 1 && !isSupervised()) {
    // One wait (and one line if it fails) for all of them, rather than each process's own.
    await waitForPostgres(config.databaseUrl!, config.databaseWaitSeconds, log)
    return superviseProcesses(processes, { SECRET_KEY: config.secretKey! }, log)
  }
  // What has started so far; a stop during start-up stops just that.
  let database: Awaited<ReturnType<typeof openMigratedDatabase>> | undefined
  let started: Awaited<ReturnType<typeof import('./app.ts').createApp>> | undefined
  let background: ReturnType<typeof startBackground> | undefined
  let caches: ReturnType<typeof listenForCaches> | undefined
  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    // A loop stuck on a database that is gone must not keep the process alive for ever.
    setTimeout(() => {
      log.error('shutdown did not finish in 15 s; exiting', { signal })
      process.exit(1)
    }, 15_000).unref()
    // Stop accepting, let in-flight requests finish, let the background worker record attempts in flight
    // (on PGlite through this thread's database), then close the database.
    if (started?.app.server) await started.app.stop()
    await background?.stop()
    await caches?.stop()
    started?.ctx.limiter.close()
    await started?.ctx.readDatabase?.close()
    await database?.close()
    // Whatever start-up step is still pending ends here with the process.
    process.exit(0)
  }
  // Handlers before anything else: a signal that finds none ends the process at once, with no cleanup and
  // a signal for an exit status (a supervisor replacing a process, or an orchestrator, can stop a server
  // the moment it says it is listening, or while it is still starting).
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  if (isSupervised()) stopWithSupervisor(() => void shutdown('supervisor exited'))

  // The route modules load while the database opens: PGlite compiles its WebAssembly off this thread,
  // so the two overlap (BENCHMARKS.md, "Start-up").
  const appModule = import('./app.ts')
  appModule.catch(() => {}) // awaited below; a failure surfaces there, not as an unhandled rejection meanwhile
  database = await openMigratedDatabase(config, 'server', log)
  if (stopping) return
  const { createApp } = await appModule
  started = await createApp({ config, database })
  if (stopping) return
  const { app, ctx } = started
  // The per-process caches listen for changes on this thread (PGlite's engine already announces them here).
  if (database.driver === 'postgres') caches = listenForCaches(database, ctx.changes)
  // A connection lost while it starts up must not end the process (db/errors.ts); any other unhandled rejection does.
  process.on('unhandledRejection', unhandledRejectionHandler(ctx.log, () => process.exit(1)))
  // With several processes each binds the port with SO_REUSEPORT and the kernel spreads connections.
  try {
    app.listen({ port: config.port, hostname: '0.0.0.0', reusePort: isSupervised() })
  } catch (error) {
    if ((error as { code?: string }).code !== 'EADDRINUSE') throw error
    cannotStart(`Port ${config.port} is in use by another process: stop it, or set PORT to a free port`)
  }
  ctx.log.info('chorus listening', { url: config.baseUrl, port: app.server?.port, database: database.driver, pid: process.pid, process: process.env[PROCESS_INDEX_ENV] ?? null })
  if (database.driver === 'pglite' && config.webConcurrency > 1) ctx.log.info('the embedded database runs in one process; WEB_CONCURRENCY applies to PostgreSQL')
  // Every background loop runs in one worker thread; this thread serves HTTP only.
  background = startBackground(ctx)
  // Where to go next, once (the first of several processes says it).
  if ((process.env[PROCESS_INDEX_ENV] ?? '0') === '0') ctx.log.info(...(await whereToGo(ctx.db, config.baseUrl)))
}

await main()
