// The PostgreSQL pool of a server process's thread, without drizzle: the main thread wraps it in drizzle
// (client.ts), the background worker runs its SQL text on it directly (sql-text.ts, worker.ts). Both get
// the same connection settings, the same postgres.js workarounds and the same row types: drizzle's
// (timestamps, dates and intervals kept as PostgreSQL's text), set here so the worker needs no drizzle.
import postgres from 'postgres'
import { CACHE_CHANNEL } from './changes.ts'
import { isConnectionError } from './errors.ts'
import { compileSql, type SqlRunner } from './sql-text.ts'
import { workChannel, type ListenForWork } from './work.ts'

export interface PostgresPool {
  client: postgres.Sql
  /** The pool as a runner of SQL text (the worker's statements). */
  sql: SqlRunner
  listenForWork: ListenForWork
  listenForChanges(onChange: (table: string) => void, onLive: (live: boolean) => void): Promise<() => Promise<void>>
}

/** What drizzle's postgres-js driver sets on its client (drizzle-orm/postgres-js/driver.js): these types stay text. */
const TEXT_TYPES = ['1184', '1082', '1083', '1114', '1182', '1185', '1115', '1231']
const asIs = (value: unknown) => value

export function openPostgresPool(databaseUrl: string, options: { poolSize?: number; applicationName?: string } = {}): PostgresPool {
  // connect_timeout: a connection that cannot be made is given up on after 10 s (30 s by default), so the request,
  // loop round or shutdown that wanted it does not wait longer. (The stalls once blamed on backends terminated during
  // startup were postgres.js losing a pending write at a close: patches/postgres+3.4.9.patch.)
  // jit off: every statement here is a short OLTP one, and PostgreSQL compiles a plan whose estimate passes
  // jit_above_cost with LLVM first: an e-mail claim that had to sort (which queueTransaction prices out, so
  // estimated at 10^10) spent 230-370 ms compiling before updating one row.
  const pool = postgres(databaseUrl, { max: options.poolSize ?? 10, connect_timeout: 10, onnotice: () => {}, connection: { application_name: options.applicationName ?? 'chorus', jit: 'off' } })
  const client = guardTransactions(wrapUnsafe(pool, (unsafe) => postgresJsWorkarounds(preparedStatements(unsafe))))
  const types = client.options as unknown as { parsers: Record<string, unknown>; serializers: Record<string, unknown> }
  for (const type of TEXT_TYPES) types.parsers[type] = types.serializers[type] = asIs
  types.serializers['114'] = types.serializers['3802'] = asIs
  return {
    client,
    sql: postgresRunner(client),
    async listenForWork(tables, onWork) {
      // postgres.js listens on one dedicated connection, re-established after a drop; whatever was
      // committed while it was down is announced by the `*` sent on every (re)connect.
      const listening = await Promise.all(tables.map((table) => client.listen(workChannel(table), () => onWork(table), () => onWork('*'))))
      return async () => { await Promise.all(listening.map(({ unlisten }) => unlisten())) }
    },
    async listenForChanges(onChange, onLive) {
      let live = false
      const setLive = (next: boolean) => onLive((live = next))
      const subscribe = () => client.listen(CACHE_CHANNEL, onChange, () => setLive(true))
      const { unlisten } = await subscribe()
      const listener = listenerOf(client)
      listener.onClose(() => setLive(false))
      // postgres.js re-listens once after a close; if that attempt fails (the database still down), the
      // channel stays registered with the failed attempt and is never tried again. Until it listens, it is
      // tried again every 2 s.
      const retry = setInterval(() => {
        if (live) return
        listener.forget(CACHE_CHANNEL)
        subscribe().catch(() => {})
      }, 2000)
      retry.unref()
      return async () => {
        clearInterval(retry)
        setLive(false)
        await unlisten()
      }
    },
  }
}

/** SQL text on a postgres.js pool or transaction: each statement prepared (named) on its connection, like drizzle's. */
export function postgresRunner(client: postgres.Sql | postgres.TransactionSql): SqlRunner {
  return {
    async rows<Row>(statement: Parameters<SqlRunner['rows']>[0]) {
      const { text, params } = compileSql(statement)
      return (await client.unsafe(text, params as never[], { prepare: true })) as unknown as Row[]
    },
    // Inside a transaction, a nested one is a savepoint (as drizzle's).
    transaction: <T>(work: (tx: SqlRunner) => Promise<T>) => ('savepoint' in client
      ? client.savepoint((tx) => work(postgresRunner(tx)))
      : client.begin((tx) => work(postgresRunner(tx)))) as Promise<T>,
  }
}

/**
 * What postgres.js (3.4.9, src/index.js) keeps of its listening connection on the `listen` function: the
 * `Sql` pool it listens on (`listen.sql`, whose pool reads `options.onclose` at each close) and the channels
 * with their pending LISTEN (`listen.channels`). It re-listens after a close and then calls `onlisten`
 * again, but says nothing when the connection closes: notifications sent meanwhile are lost.
 */
function listenerOf(client: postgres.Sql) {
  const internals = client.listen as unknown as { sql?: { options: { onclose?: (id: number) => void } }; channels?: Record<string, unknown> }
  if (!internals.sql) throw new Error('postgres.js keeps no listening connection where expected (listen.sql)')
  const options = internals.sql.options
  return {
    onClose(lost: () => void) {
      const previous = options.onclose
      options.onclose = (id) => {
        lost()
        previous?.(id)
      }
    },
    forget: (channel: string) => void delete internals.channels?.[channel],
  }
}

type Unsafe = postgres.Sql['unsafe']

/**
 * Replaces `unsafe` (where drizzle sends every statement) on the pool and on each transaction it begins;
 * the transforms below are composed into one `wrap`, so a statement and a transaction pay for one layer.
 */
function wrapUnsafe(client: postgres.Sql, wrap: (unsafe: Unsafe) => Unsafe): postgres.Sql {
  const apply = (sql: postgres.Sql) => {
    Object.defineProperty(sql, 'unsafe', { value: wrap(sql.unsafe.bind(sql) as Unsafe) })
    return sql
  }
  const begin = client.begin.bind(client) as (...args: unknown[]) => Promise<unknown>
  Object.defineProperty(client, 'begin', {
    value: (...args: unknown[]) => {
      const fn = args.pop() as (sql: postgres.Sql) => unknown
      return begin(...args, (sql: postgres.Sql) => fn(apply(sql)))
    },
  })
  return apply(client)
}

/**
 * Makes every query drizzle builds a named prepared statement, as postgres.js does for its own tagged
 * queries: PostgreSQL then parses and plans each statement once per connection instead of on every
 * request (for a list's seven-table join, planning took longer than running). Drizzle asks for
 * `prepare: false` on every builder query without a `.prepare(name)`; those are single statements, so
 * they can always be prepared. Raw `db.execute` calls (migrations, multi-statement SQL) pass no
 * option and stay unprepared. postgres.js forgets a connection's statements when it is recycled
 * (max_lifetime, 30–60 min), which bounds the cache.
 */
const preparedStatements = (unsafe: Unsafe): Unsafe =>
  ((query: string, params?: never, options?: { prepare?: boolean }) =>
    unsafe(query, params, options?.prepare === false ? { ...options, prepare: true } : options)) as Unsafe

/**
 * Two pieces of state postgres.js 3.4.9 keeps per connection outlive the statement they belong to
 * (porsager/postgres#1119, #1181, #1223; unfixed upstream), and this undoes their effect on the next one:
 *
 * - The row count of a result is reset only when a statement completes. After one that failed part-way
 *   (cancelled, timed out, a division by zero on row 4, its backend terminated) the next result on that
 *   connection stores its rows after as many holes: `[row] = result` read `undefined`, and an API-key
 *   lookup that found its key answered 401. The rows are all there, only shifted, so a result that starts
 *   with a hole is moved down in place (its `count`, `command` and `columns` kept); a whole result costs
 *   one `in` check.
 * - The error of a statement whose backend was terminated is kept after the connection closes, and the
 *   reconnected connection fails its first statement with it before sending it. A statement that was never
 *   sent (`state` is set when postgres.js writes it) is sent again, once.
 * See docs/postgres-js-rollback-crash.md.
 */
function postgresJsWorkarounds(unsafe: Unsafe): Unsafe {
  const send = (args: Parameters<Unsafe>, retries: number): postgres.PendingQuery<postgres.Row[]> => {
    const query = unsafe(...args) as postgres.PendingQuery<postgres.Row[]> & QueryInternals
    const then = query.then
    // `values()` and `raw()` return the same query object, so this is the one awaited.
    Object.defineProperty(query, 'then', {
      value: (resolved?: (value: unknown) => unknown, rejected?: (reason: unknown) => unknown) => then.call(query,
        (result: unknown) => (resolved ? resolved(closeUp(result)) : closeUp(result)),
        (error: unknown) => {
          // Only an error from the server: a connection that cannot be made (refused, timed out) is not tried twice.
          if (query.state === null && error instanceof postgres.PostgresError && retries > 0) {
            const again = send(args, retries - 1) as typeof query
            if (query.isRaw === 'values') again.values()
            else if (query.isRaw === true) again.raw()
            return again.then(resolved, rejected)
          }
          if (rejected) return rejected(error)
          throw error
        }),
    })
    return query
  }
  return ((...args: Parameters<Unsafe>) => send(args, 1)) as Unsafe
}

/** What the workarounds read of a postgres.js query: `state` (null until written to a connection) and its row format. */
interface QueryInternals { state: unknown; isRaw?: boolean | 'values' }

function closeUp(result: unknown) {
  if (!Array.isArray(result) || result.length === 0 || 0 in result) return result
  let holes = 0
  while (holes < result.length && !(holes in result)) holes++
  result.copyWithin(0, holes)
  result.length -= holes
  return result
}

/**
 * postgres.js 3.4 answers a failed transaction callback with ROLLBACK on the same connection. When
 * the callback failed because that connection closed (server restart, failover, terminated backend),
 * the ROLLBACK is written to a socket that is already gone, in a setImmediate callback, and the
 * resulting `TypeError: null is not an object (evaluating 'socket.write')` is uncaught: the process
 * exits. The server rolls an interrupted transaction back by itself, so a callback that failed with
 * a lost connection is left unsettled (the library drops it when the connection closes, and
 * `begin` itself rejects with the connection error). See docs/postgres-js-rollback-crash.md.
 */
export function guardTransactions(client: postgres.Sql): postgres.Sql {
  const begin = client.begin.bind(client) as (...args: unknown[]) => Promise<unknown>
  const guarded = (...args: unknown[]) => {
    const fn = args.pop() as (sql: unknown) => unknown
    return begin(...args, (sql: unknown) =>
      Promise.resolve()
        .then(() => fn(sql))
        .catch((error) => {
          if (isConnectionError(error)) return new Promise(() => {})
          throw error
        }))
  }
  Object.defineProperty(client, 'begin', { value: guarded })
  return client
}
