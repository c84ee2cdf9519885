// Classifying and describing database errors without leaking what the queries carried.

/** postgres.js and socket codes for a connection that is gone or cannot be made. */
const CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'])
/** SQLSTATEs of a server shutting down or restarting: admin_shutdown, crash_shutdown, cannot_connect_now. */
const SHUTDOWN_STATES = new Set(['57P01', '57P02', '57P03'])

function* chain(error: unknown) {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) yield current
}

/** True when the error means the database connection was lost (restart, failover, network), not that the query was wrong. */
export function isConnectionError(error: unknown): boolean {
  for (const link of chain(error)) {
    const code = (link as { code?: unknown }).code
    if (typeof code !== 'string') continue
    if (CONNECTION_CODES.has(code) || SHUTDOWN_STATES.has(code) || code.startsWith('08')) return true
  }
  return false
}

/**
 * An error for the log: the SQL text of a failed query but never its parameters (they hold user
 * content and credentials' hashes), then the cause's message and stack.
 */
export function describeError(error: unknown): string {
  const parts: string[] = []
  for (const link of chain(error)) {
    if (!(link instanceof Error)) {
      parts.push(String(link))
      continue
    }
    const query = (link as { query?: unknown }).query
    if (typeof query === 'string' && 'params' in link) {
      parts.push(`Failed query: ${query}`)
      continue
    }
    parts.push((link.stack ?? `${link.name}: ${link.message}`).replace(/\nparams: [\s\S]*?(?=\n    at |$)/, ''))
  }
  return parts.join('\ncaused by: ')
}

/**
 * A thread's handler of unhandled rejections (the server's main thread and its background worker). A lost
 * connection is no reason to end a thread: postgres.js 3.4.9 left one such rejection unhandled (its array-type
 * read on a new connection, now caught by patches/postgres+3.4.9.patch; docs/postgres-js-rollback-crash.md),
 * and a driver fault of that kind is logged and ignored. Any other ends the thread (`exit`): the process, or
 * the worker, which its supervisor starts again.
 */
export function unhandledRejectionHandler(log: Record<'warn' | 'error', (message: string, fields: Record<string, unknown>) => void>, exit: () => void) {
  return (reason: unknown) => {
    if (isConnectionError(reason)) return log.warn('database connection lost while connecting', { error: describeError(reason) })
    log.error('unhandled rejection', { error: describeError(reason) })
    exit()
  }
}
