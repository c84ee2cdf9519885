// The embedded database from the background worker. PGlite is one engine in the main thread's memory
// (one process, one connection), so the worker cannot open it: its statements travel to the main thread
// as messages and run there, on the same connection as the requests'. drizzle in the worker drives a
// stand-in PGlite client (`query`, `transaction`) whose calls become these messages:
//   worker → main  { db: 'query', id, sql, params, rowMode, tx? }   run a statement (inside open transaction `tx`)
//                  { db: 'begin', id }                               open a transaction; answered with its number
//                  { db: 'end', id, tx, commit }                     commit or roll it back
//   main → worker  { db: 'result', id, value?, error? }              the answer to request `id`
//                  { db: 'work', table }                             a NOTIFY of committed work (server/db/work.ts)
// A transaction holds PGlite's one connection from `begin` to `end` (the main thread's requests queue
// behind it, as behind any transaction); if the worker dies meanwhile, `workerGone` rolls it back.
// The worker's loops send SQL text (server/db/sql-text.ts); drizzle's PGlite session over the same
// messages is built only when a rarely used loop first needs it (mail, duplicate checks, imports, chat sends).
// Measured against running the loops in the main thread: BENCHMARKS.md ("Notes: background work in a worker thread").
import type { PGlite } from '@electric-sql/pglite'
import type { Database, Db } from '../db/client.ts'
import { compileSql, type SqlFragment, type SqlRunner } from '../db/sql-text.ts'
import { WORK_QUEUES, workChannel, type WorkQueue, type WorkTable } from '../db/work.ts'

export type BridgeRequest =
  | { db: 'query'; id: number; sql: string; params: unknown[]; rowMode?: 'array' | 'object'; tx?: number }
  | { db: 'begin'; id: number }
  | { db: 'end'; id: number; tx: number; commit: boolean }
export type BridgeAnswer =
  | { db: 'result'; id: number; value?: unknown; error?: Record<string, unknown> }
  | { db: 'work'; table: WorkTable }


// drizzle's PGlite session keeps times, intervals and dates as PostgreSQL's text (drizzle-orm/pglite/session.js);
// the parsers are functions, which a message cannot carry, so the main thread applies the same ones.
const asText = (value: string) => value
const KEEP_TEXT = Object.fromEntries([1114, 1184, 1186, 1082, 1231, 1115, 1185, 1187, 1182].map((oid) => [oid, asText]))

const ROLLBACK = Symbol('rollback')

/** The error's fields a caller looks at (`code` for unique violations and connection errors), as plain data. */
const errorData = (error: any) => ({ message: String(error?.message ?? error), code: error?.code, detail: error?.detail, constraint: error?.constraint, table: error?.table })

type Queryable = Pick<PGlite, 'query'>

/** The main thread's side: runs the worker's statements on `pglite` and forwards work notifications through `post`. */
export function serveDatabase(pglite: PGlite, post: (answer: BridgeAnswer) => void) {
  const open = new Map<number, { tx: Queryable; end(commit: boolean): void }>()
  const finishing = new Map<number, Promise<void>>()
  let nextTx = 0
  let gone = false
  const answer = (id: number, run: () => Promise<unknown>) =>
    run().then((value) => !gone && post({ db: 'result', id, value }), (error) => !gone && post({ db: 'result', id, error: errorData(error) }))
  const listening = Promise.all(WORK_QUEUES.map((table) => pglite.listen(workChannel(table), () => !gone && post({ db: 'work', table }))))

  return {
    /** Handles a bridge request; false for any other message. */
    handle(message: BridgeRequest | { db?: undefined }): boolean {
      if (!message.db) return false
      if (message.db === 'query') {
        const target = message.tx === undefined ? pglite : open.get(message.tx)?.tx
        answer(message.id, async () => {
          if (!target) throw new Error('no such transaction')
          return target.query(message.sql, message.params, { rowMode: message.rowMode, parsers: KEEP_TEXT })
        })
      } else if (message.db === 'begin') {
        const tx = ++nextTx
        let opened!: () => void
        const begun = new Promise<void>((resolve) => (opened = resolve))
        const finished = pglite.transaction(async (handle) => {
          const commit = await new Promise<boolean>((end) => {
            // A begin queued behind another transaction can open after its worker died: it would hold
            // PGlite's one connection for good, so it rolls back at once.
            if (gone) return end(false)
            open.set(tx, { tx: handle, end })
            opened()
          })
          if (!commit) throw ROLLBACK
        }).catch((error) => { if (error !== ROLLBACK) throw error })
        finishing.set(tx, finished)
        // A transaction that failed to open (PGlite closed) answers the begin with its error.
        answer(message.id, () => Promise.race([begun.then(() => tx), finished.then(() => { throw new Error('transaction did not open') })]))
      } else {
        const entry = open.get(message.tx)
        open.delete(message.tx)
        entry?.end(message.commit)
        const finished = finishing.get(message.tx)
        finishing.delete(message.tx)
        answer(message.id, async () => { await finished })
      }
      return true
    },
    /** The worker exited: its open transactions roll back, and nothing more is sent to it. */
    workerGone() {
      gone = true
      for (const entry of open.values()) entry.end(false)
      open.clear()
    },
    async close() {
      this.workerGone()
      await Promise.all([...finishing.values()].map((finished) => finished.catch(() => {})))
      for (const unlisten of await listening.catch(() => [])) await unlisten().catch(() => {})
    },
  }
}

/** Rebuilds a bridged error with the fields callers read. */
const toError = (data: Record<string, unknown>) => Object.assign(new Error(String(data.message)), data)

/** The worker's side: a drizzle `Db` whose statements run in the main thread, and wake-ups forwarded from there. */
export function bridgedDatabase(post: (request: BridgeRequest) => void) {
  let nextId = 0
  const waiting = new Map<number, { resolve(value: any): void; reject(error: Error): void }>()
  const listeners = new Set<{ tables: readonly WorkQueue[]; onWork(table: WorkTable): void }>()
  type WithoutId<R> = R extends unknown ? Omit<R, 'id'> : never
  const call = <T>(request: WithoutId<BridgeRequest>) => new Promise<T>((resolve, reject) => {
    const id = ++nextId
    waiting.set(id, { resolve, reject })
    post({ ...request, id } as BridgeRequest)
  })
  const queryOn = (tx?: number) => (sql: string, params: unknown[] = [], options?: { rowMode?: 'array' | 'object' }) =>
    call<any>({ db: 'query', sql, params, rowMode: options?.rowMode, tx })
  // The stand-in for the PGlite client that drizzle's PGlite session calls (query, transaction).
  const client = {
    query: queryOn(),
    async transaction<T>(work: (tx: { query: ReturnType<typeof queryOn> }) => Promise<T>): Promise<T> {
      const tx = await call<number>({ db: 'begin' })
      let result: T
      try {
        result = await work({ query: queryOn(tx) })
      } catch (error) {
        await call({ db: 'end', tx, commit: false }).catch(() => {})
        throw error
      }
      await call({ db: 'end', tx, commit: true })
      return result
    },
  }
  type Query = ReturnType<typeof queryOn>
  const runnerOn = (query: Query, inTransaction: boolean): SqlRunner => ({
    async rows<Row>(statement: SqlFragment) {
      const { text, params } = compileSql(statement)
      return (await query(text, params)).rows as Row[]
    },
    // PGlite's one connection runs one transaction at a time: a nested one runs inside it.
    transaction: (work) => (inTransaction ? work(runnerOn(query, true)) : client.transaction((tx) => work(runnerOn(tx.query, true)))),
  })
  let db: Db | undefined
  const database: Pick<Database, 'db' | 'sql' | 'driver' | 'listenForWork'> & { loadDb(): Promise<void> } = {
    // Loaded when a rare loop first needs it, and only here, as in server/db/client.ts: drizzle's PGlite
    // session imports PGlite's engine code, which neither thread of a PostgreSQL process should load.
    async loadDb() {
      if (db) return
      const { drizzle } = await import('drizzle-orm/pglite')
      db ??= drizzle({ client: client as never }) as unknown as Db
    },
    get db() {
      if (!db) throw new Error('drizzle is not loaded in the background worker (loadDb)')
      return db
    },
    sql: runnerOn(client.query, false),
    driver: 'pglite',
    async listenForWork(tables, onWork) {
      const listener = { tables, onWork }
      listeners.add(listener)
      return async () => void listeners.delete(listener)
    },
  }
  return {
    database,
    /** Handles an answer from the main thread; false for any other message. */
    handle(message: BridgeAnswer | { db?: undefined }): boolean {
      if (message.db === 'result') {
        const request = waiting.get(message.id)
        waiting.delete(message.id)
        if (message.error) request?.reject(toError(message.error))
        else request?.resolve(message.value)
        return true
      }
      if (message.db === 'work') {
        for (const listener of listeners) if (listener.tables.includes(message.table as WorkQueue)) listener.onWork(message.table)
        return true
      }
      return false
    },
  }
}
