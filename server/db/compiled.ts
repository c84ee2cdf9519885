import { Column, is, SQL, Subquery } from 'drizzle-orm'
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
// A prepared query (both drivers) keeps its selection as `fields` (one `{ path, field }` per column, in the
// order of the row's values) and maps rows with `customResultMapper` instead of drizzle's own when it is set.
interface Decoder { mapFromDriverValue(value: unknown): unknown }
interface PreparedInternals {
  client: unknown
  fields?: { path: string[]; field: unknown }[]
  customResultMapper?: (rows: unknown[][]) => unknown
  /** Table name → whether its join can never be null (absent without joins). */
  joinsNotNullableMap?: Record<string, boolean>
}

/** Where drizzle's mapResultRow finds a field's decoder. */
function decoderOf(field: unknown): Decoder {
  if (is(field, Column)) return field as unknown as Decoder
  // `decoder` is internal to drizzle's SQL type.
  if (is(field, SQL)) return (field as unknown as { decoder: Decoder }).decoder
  if (is(field, Subquery)) return (field as unknown as { _: { sql: { decoder: Decoder } } })._.sql.decoder
  return (field as { sql: { decoder: Decoder } }).sql.decoder
}

/**
 * Rows mapped with each column's decoder found once. Drizzle's own mapping asks of every value of every
 * row what kind of field it came from (`is()` walks the prototype chain) and builds the object with
 * `reduce`: 17 % of the server's profile samples on a page of 20 posts. The result is the same. Handled: flat
 * selections (`{ key: column or sql }`) and tables nested one level (`{ key: table }`) when no join can
 * be null; drizzle folds a missing outer join into `null`, so such selections keep drizzle's mapping.
 */
function rowMapper(fields: PreparedInternals['fields'], joinsNotNullableMap: PreparedInternals['joinsNotNullableMap']) {
  if (!fields?.length || fields.some(({ path }) => path.length > 2)) return undefined
  const nested = fields.some(({ path }) => path.length === 2)
  if (nested && joinsNotNullableMap && Object.values(joinsNotNullableMap).some((notNull) => !notNull)) return undefined
  const paths = fields.map(({ path }) => path)
  const decoders = fields.map(({ field }) => decoderOf(field))
  return (rows: unknown[][]) => rows.map((row) => {
    const out: Record<string, any> = {}
    for (let i = 0; i < paths.length; i++) {
      const raw = row[i]
      const value = raw === null ? null : decoders[i]!.mapFromDriverValue(raw)
      const path = paths[i]!
      if (path.length === 1) out[path[0]!] = value
      else (out[path[0]!] ??= {})[path[1]!] = value
    }
    return out
  })
}

/** Drizzle's `.prepare(name)`, with drizzle's row mapping replaced by rowMapper's where it gives the same rows. */
function prepareOnce<Q extends Preparable>(query: Q, name: string): Prepared<Q> {
  const prepared = query.prepare(name) as Prepared<Q> & PreparedInternals
  const mapper = prepared.customResultMapper ? undefined : rowMapper(prepared.fields, prepared.joinsNotNullableMap)
  if (mapper) prepared.customResultMapper = mapper
  return prepared
}

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
    if (!prepared) byDatabase.set(dialect, (prepared = prepareOnce(build(db), name)))
    if ((prepared as unknown as { client: unknown }).client === session.client) return prepared
    return Object.create(prepared, { client: { value: session.client } }) as Prepared<Q>
  }
}
