import { sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { rowsOf, type Db } from '../../db/client.ts'
import { pullStream } from '../../lib/pull-stream.ts'
import type { Section } from './sections.ts'

/** Rows per keyset page: each page is one string in memory; smaller pages keep the peak lower (BENCHMARKS.md). */
export const EXPORT_PAGE_SIZE = 250
export const EXPORT_VERSION = 1

/** One keyset page as JSON text: its rows joined by `,\n`, how many, and the key of the last. */
async function readPage(db: Db, section: Section, cursor: string | null, limit: number) {
  const fields = sql.join(section.fields.map(([name, expression]) => sql`${name}::text, ${expression}`), sql`, `)
  const after = cursor === null ? sql`` : sql` and ${section.key} > ${cursor}`
  const [page] = rowsOf<{ n: number; last: string | null; json: string }>(await db.execute(sql`
    select count(*)::int as n, max(k) as last, coalesce(string_agg(j, E',\n' order by k), '') as json
    from (select ${section.key} as k, json_build_object(${fields})::text as j from ${section.from}
          where ${section.where}${after} order by ${section.key} limit ${limit}) page`))
  return page!
}

/**
 * The export as a JSON byte stream: `{format, version, exported_at, <section>: ..., counts}`.
 * Every page is read in one REPEATABLE READ, READ ONLY transaction, so the file is one consistent
 * snapshot however long the download takes; pages are keyset-paged and written with backpressure,
 * so memory stays flat at any size.
 */
export function exportStream(ctx: AppContext, format: string, sections: Section[]): ReadableStream<Uint8Array> {
  return pullStream(async (write) => {
    await ctx.db.transaction(async (tx) => {
      const db = tx as unknown as Db
      const counts: Record<string, number> = {}
      await write(`{"format":${JSON.stringify(format)},"version":${EXPORT_VERSION},"exported_at":${JSON.stringify(new Date().toISOString())}`)
      for (const section of sections) {
        await write(`,${JSON.stringify(section.name)}:`)
        if (section.single) {
          const page = await readPage(db, section, null, 1)
          await write(page.n ? page.json : 'null')
          counts[section.name] = page.n
          continue
        }
        let cursor: string | null = null
        let written = 0
        await write('[')
        for (;;) {
          const page = await readPage(db, section, cursor, EXPORT_PAGE_SIZE)
          if (page.n) await write(`${written ? ',' : ''}\n${page.json}`)
          written += page.n
          if (page.n < EXPORT_PAGE_SIZE) break
          cursor = page.last
        }
        await write(']')
        counts[section.name] = written
      }
      await write(`,"counts":${JSON.stringify(counts)}}\n`)
    }, { isolationLevel: 'repeatable read', accessMode: 'read only' })
  }, (error) => ctx.log.error('export failed mid-stream', { format, error: String(error) }))
}

/** `Content-Disposition: attachment` with a name saying what and when. */
export function exportHeaders(name: string) {
  return {
    'content-type': 'application/json; charset=utf-8',
    'content-disposition': `attachment; filename="chorus-${name}-${new Date().toISOString().slice(0, 10)}.json"`,
    'cache-control': 'no-store',
  }
}
