import { Column, DrizzleQueryError, is, Param, Placeholder, sql, SQL, Subquery } from 'drizzle-orm'
import { PostgresJsPreparedQuery } from 'drizzle-orm/postgres-js'
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
  /** postgres.js prepared queries: the text, the parameters (values, placeholders or params wrapping one), `prepare`, the logger. */
  queryString?: string
  params?: unknown[]
  prepare?: boolean
  logger?: { logQuery(query: string, params: unknown[]): void }
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

/** Decoders that return their input: a plain column's (text, boolean...) and that of `sql` without `mapWith`. */
const identityDecoders = new Set<unknown>([
  Column.prototype.mapFromDriverValue,
  (sql`` as unknown as { decoder: Decoder }).decoder.mapFromDriverValue,
])

/**
 * Rows mapped by a function written for the selection, once per statement: an object literal of the
 * selection's shape per row, each value read by its index and decoded only where the column's decoder
 * changes it (timestamps, integers sent as text, JSON). Drizzle's own mapping asks of every value of every
 * row what kind of field it came from (`is()` walks the prototype chain) and builds the object with
 * `reduce` (17 % of the server's profile samples on a page of 20 posts); a loop over the fields with
 * a decoder call per value still spent a tenth of a list request's CPU. The result is the same. Handled:
 * flat selections (`{ key: column or sql }`) and tables nested one level (`{ key: table }`) when no join
 * can be null; drizzle folds a missing outer join into `null`, so such selections keep drizzle's mapping.
 */
function rowMapper(fields: PreparedInternals['fields'], joinsNotNullableMap: PreparedInternals['joinsNotNullableMap']) {
  if (!fields?.length || fields.some(({ path }) => path.length > 2)) return undefined
  const nested = fields.some(({ path }) => path.length === 2)
  if (nested && joinsNotNullableMap && Object.values(joinsNotNullableMap).some((notNull) => !notNull)) return undefined
  // A key written into the literal as `"__proto__": ...` would set the prototype instead.
  if (fields.some(({ path }) => path.includes('__proto__'))) return undefined
  const decoders = fields.map(({ field }) => decoderOf(field))
  const valueOf = (i: number) => identityDecoders.has(decoders[i]!.mapFromDriverValue) ? `row[${i}]` : `(row[${i}] === null ? null : decoders[${i}].mapFromDriverValue(row[${i}]))`
  // Keys in the order drizzle's mapping gives them: each top-level key (or nested table) where it first appears.
  const shape = new Map<string, string | string[]>()
  fields.forEach(({ path }, i) => {
    const [key, member] = path as [string, string?]
    if (member === undefined) shape.set(key, valueOf(i))
    else shape.set(key, [...((shape.get(key) ?? []) as string[]), `${JSON.stringify(member)}: ${valueOf(i)}`])
  })
  const literal = [...shape].map(([key, value]) => `${JSON.stringify(key)}: ${typeof value === 'string' ? value : `{ ${value.join(', ')} }`}`).join(', ')
  // The source is built from the schema's own property names (JSON-quoted) and indexes, never from data.
  const build = new Function('decoders', `return (rows) => {
    const out = new Array(rows.length)
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      out[r] = { ${literal} }
    }
    return out
  }`) as (decoders: Decoder[]) => (rows: unknown[][]) => Record<string, unknown>[]
  return build(decoders)
}

type PostgresClient = { unsafe(query: string, params: unknown[], options: { prepare?: boolean }): Promise<unknown> & { values(): Promise<unknown[][]> } }

/**
 * On postgres.js, `execute` without drizzle's wrappers around the driver call: per statement drizzle
 * starts three tracing spans, asks of every parameter what kind it is (`is()` walks the prototype
 * chain) and awaits a cache check, and the keyed `GET /posts/{id}` sends three statements. Here each
 * parameter's source is decided once, and the call is the one drizzle makes: the same text, values,
 * `prepare` flag, query log, driver errors wrapped as DrizzleQueryError, rows through the mapper. Only
 * statements whose rows rowMapper maps, or that map none (writes without RETURNING), take this path.
 */
function directExecute(prepared: PreparedInternals) {
  const { queryString: text, params, fields, customResultMapper: mapper } = prepared
  if (!is(prepared, PostgresJsPreparedQuery) || typeof text !== 'string' || !params || (fields && !mapper)) return undefined
  const sources = params.map((param): ((values: Record<string, unknown>) => unknown) => {
    const placeholder = is(param, Placeholder) ? param : is(param, Param) && is(param.value, Placeholder) ? param.value : undefined
    if (!placeholder) return () => param
    const encode = is(param, Param) ? (value: unknown) => param.encoder.mapToDriverValue(value) : (value: unknown) => value
    return (values) => {
      if (!(placeholder.name in values)) throw new Error(`No value for placeholder "${placeholder.name}" was provided`)
      return encode(values[placeholder.name])
    }
  })
  return async function execute(this: PreparedInternals, values: Record<string, unknown> = {}) {
    const args = sources.map((source) => source(values))
    this.logger?.logQuery(text, args)
    const client = this.client as PostgresClient
    try {
      if (!mapper) return await client.unsafe(text, args, { prepare: this.prepare })
      return mapper(await client.unsafe(text, args, { prepare: this.prepare }).values())
    } catch (error) {
      throw new DrizzleQueryError(text, args, error as Error)
    }
  }
}

/** Drizzle's `.prepare(name)`, with drizzle's row mapping replaced by rowMapper's where it gives the same rows. */
function prepareOnce<Q extends Preparable>(query: Q, name: string): Prepared<Q> {
  const prepared = query.prepare(name) as Prepared<Q> & PreparedInternals
  const mapper = prepared.customResultMapper ? undefined : rowMapper(prepared.fields, prepared.joinsNotNullableMap)
  if (mapper) prepared.customResultMapper = mapper
  const execute = directExecute(prepared)
  if (execute) Object.defineProperty(prepared, 'execute', { value: execute })
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

interface Session { prepareQuery(query: unknown, fields: undefined, name: string, arrayMode: boolean): { execute(values?: Record<string, unknown>): Promise<unknown> } }

/**
 * A statement drizzle's builders cannot express (a data-modifying CTE), written with `sql` and compiled like
 * the others: its text built once per database, run on the pool or a transaction, placeholders filled by
 * `execute`. Its rows come as the driver gives them (read them with rowsOf).
 */
export function compiledSql(name: string, build: (db: Db | Tx) => SQL) {
  return compiled(name, (db) => ({
    prepare: (statement: string) => {
      const { dialect, session } = db as unknown as { dialect: { sqlToQuery(sql: SQL): unknown }; session: Session }
      return session.prepareQuery(dialect.sqlToQuery(build(db)), undefined, statement, false)
    },
  }))
}
