import { sql } from 'drizzle-orm'
import { rowsOf } from '../../server/db/client.ts'
import type { Logger } from '../../server/lib/log.ts'
import type { Harness, TestClient } from './harness.ts'

/** The install state the dashboard gets for `provider` from GET /integrations (bound to `client`'s session). */
export async function oauthState(client: TestClient, slug: string, provider: 'chat' | 'tracker'): Promise<string> {
  const res = await client.get(`/api/v1/workspaces/${slug}/integrations`)
  if (res.status !== 200) throw new Error(`list integrations failed: ${res.status} ${JSON.stringify(res.body)}`)
  return (res.body as any[]).find((entry) => entry.provider === provider).oauth_state
}

/** Finishes an install through the real route, as the dashboard does after the provider's redirect. */
export async function connect(client: TestClient, slug: string, provider: 'chat' | 'tracker', code: string) {
  const state = await oauthState(client, slug, provider)
  return client.post(`/api/v1/workspaces/${slug}/integrations/${provider}/oauth`, { code, state, redirect_uri: 'https://app.example.com/callback' })
}

/** Every row of every text-like column that contains one of `needles` (empty when the database holds none in plaintext). */
export async function plaintextHits(h: Harness, needles: string[]): Promise<string[]> {
  const columns = rowsOf<{ table_name: string; column_name: string }>(await h.db.execute(sql`
    select table_name, column_name from information_schema.columns
    where table_schema = 'public' and data_type in ('text', 'character varying', 'jsonb', 'json')`))
  const hits: string[] = []
  for (const { table_name, column_name } of columns) {
    for (const needle of needles) {
      const rows = rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from ${sql.identifier(table_name)} where ${sql.identifier(column_name)}::text like ${`%${needle}%`}`))
      if (rows[0]!.n > 0) hits.push(`${table_name}.${column_name}`)
    }
  }
  return hits
}

/** `pg_dump` of the test database (Postgres only): the plain SQL text of every row. */
export async function pgDump(databaseUrl: string): Promise<string> {
  const child = Bun.spawn(['pg_dump', '--data-only', '--no-owner', databaseUrl], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (code !== 0) throw new Error(`pg_dump failed: ${err}`)
  return out
}

/** A logger that keeps every line, to prove what is never logged. */
export function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const emit = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void lines.push(JSON.stringify({ level, msg, ...fields }))
  return { lines, debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}

/**
 * The whole database as text: `pg_dump` on PostgreSQL; on PGlite (whose own dump is a binary copy of the
 * data directory) every row of every table of the schema, read from the catalog, as row text.
 */
export async function databaseDump(h: Harness): Promise<string> {
  if (h.ctx.database.driver === 'postgres') return pgDump(h.databaseUrl)
  const tables = rowsOf<{ table_name: string }>(await h.db.execute(sql`
    select table_name::text as table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`))
  const parts: string[] = []
  for (const { table_name } of tables) {
    const rows = rowsOf<{ row: string }>(await h.db.execute(sql`select t::text as row from ${sql.identifier(table_name)} t`))
    parts.push(`-- ${table_name}`, ...rows.map((row) => row.row))
  }
  return parts.join('\n')
}
