import type { Db, Tx } from './client.ts'

interface Preparable {
  prepare(name: string): { execute(values?: Record<string, unknown>): Promise<unknown> }
}
type Prepared<Q extends Preparable> = ReturnType<Q['prepare']>

// Drizzle's internals this relies on (drizzle-orm 0.45, both drivers, checked by test/api/compiled-queries.test.ts):
// a database or transaction holds its `dialect` (shared by every transaction of one database) and its
// `session`, whose `client` is the connection it runs on; a prepared query sends its text through `this.client`.
interface Internals {
  dialect: object
  session: { client: unknown }
}
const internals = (db: Db | Tx) => db as unknown as Internals

/**
 * A statement whose SQL text drizzle builds once and that then runs on whichever connection it is given:
 * the pool or an open transaction. Values are `sql.placeholder(name)`s filled by `execute({ name: value })`.
 *
 * Why: drizzle builds the SQL text of a query (walking its tree, quoting every name) each time it runs,
 * which cost more of the server's CPU than PostgreSQL spent running the small statements of a write
 * transaction; `.prepare()` builds once, but binds the result to the connection it was made on, so a
 * transaction could not use it. The text is built per database (its dialect) and the prepared query is
 * re-pointed at the caller's connection: the pool's, or the transaction's.
 */
export function compiled<Q extends Preparable>(name: string, build: (db: Db | Tx) => Q): (db: Db | Tx) => Prepared<Q> {
  const byDatabase = new WeakMap<object, Prepared<Q>>()
  return (db) => {
    const { dialect, session } = internals(db)
    let prepared = byDatabase.get(dialect)
    if (!prepared) byDatabase.set(dialect, (prepared = build(db).prepare(name) as Prepared<Q>))
    if ((prepared as unknown as { client: unknown }).client === session.client) return prepared
    return Object.create(prepared, { client: { value: session.client } }) as Prepared<Q>
  }
}
