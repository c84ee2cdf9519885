// Statements as SQL text, without drizzle: what the background worker runs (server/background/worker.ts).
// A worker thread is a second JavaScript VM, and drizzle's query builder and the schema's table objects
// were half of what it loaded at idle (BENCHMARKS.md, "Background worker: memory"). The queue statements
// (dispatch take, fan-outs, leases, claims, records) are written once with the `sql` tag below and run
// through a `SqlRunner`: postgres.js in the worker (postgres-pool.ts), the PGlite bridge
// (background/pglite-bridge.ts), or drizzle's own connection on the main thread (client.ts `runnerOf`),
// so the API and the worker share each statement's one text.
//
// Rows come back as drizzle's raw `execute` gives them on both drivers: timestamps as PostgreSQL's text,
// JSON parsed, bigints as text. Statements that need a number or a date cast it themselves.

/** A statement (or a piece of one): literal text around values, which become `$n` parameters. */
export class SqlFragment {
  constructor(readonly strings: readonly string[], readonly values: readonly unknown[]) {}
}

/** Text spliced in as is: table and column names, constants; never input. */
export class SqlRaw {
  constructor(readonly text: string) {}
}

/** `sql\`select ... where id = ${id}\``: values are parameters; a nested fragment or `sql.raw` is spliced in. */
export function sql(strings: TemplateStringsArray | readonly string[], ...values: unknown[]): SqlFragment {
  return new SqlFragment(strings, values)
}
sql.raw = (text: string) => new SqlRaw(text)
/** Fragments joined by `separator` (plain text). */
sql.join = (fragments: readonly (SqlFragment | SqlRaw)[], separator: string) =>
  new SqlFragment(['', ...fragments.slice(1).map(() => separator), ''].slice(0, fragments.length + 1), fragments)

export interface CompiledSql { text: string; params: unknown[] }

/** The statement's text with `$1`, `$2`, ... and its parameters in order. */
export function compileSql(statement: SqlFragment): CompiledSql {
  const params: unknown[] = []
  const walk = (fragment: SqlFragment): string => {
    let text = fragment.strings[0]!
    fragment.values.forEach((value, i) => {
      if (value instanceof SqlFragment) text += walk(value)
      else if (value instanceof SqlRaw) text += value.text
      else text += `$${params.push(value)}`
      text += fragment.strings[i + 1]!
    })
    return text
  }
  return { text: walk(statement), params }
}

/** Where statements run: the pool (each statement on any connection) or one open transaction. */
export interface SqlRunner {
  rows<Row = Record<string, unknown>>(statement: SqlFragment): Promise<Row[]>
  /** Runs `work` in a transaction; a statement started inside it runs on its one connection, in order. */
  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T>
}

/** The rows of a statement whose first column is the `ms` until something falls due (null: nothing waits), clamped at 0. */
export async function msFrom(runner: SqlRunner, statement: SqlFragment): Promise<number | null> {
  const [row] = await runner.rows<{ ms: number | string | null }>(statement)
  return row?.ms == null ? null : Math.max(0, Number(row.ms))
}
