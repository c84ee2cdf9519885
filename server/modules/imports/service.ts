// Receiving an import (docs/import.md): the file is streamed to disk, checked whole against its format
// (a file that is not what it claims is a 422 naming the line), then either planned in a rolled-back
// transaction (dry run) or stored and queued for the background import runner.
import { and, eq, sql } from 'drizzle-orm'
import { join } from 'node:path'
import type { AppContext } from '../../context.ts'
import { rowsOf } from '../../db/client.ts'
import { imports, IMPORT_FORMATS, type ImportFormat } from '../../db/schema/index.ts'
import { invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { discard, type StreamedPart } from '../../lib/multipart-stream.ts'
import { FormatError } from '../../lib/text-stream.ts'
import type { OpenPart } from './records.ts'
import { planImport, sourceFor } from './runner.ts'
import { TALLY_NAME } from './writer.ts'

export { IMPORT_MAX_BYTES } from './records.ts'
/** Parts a format takes besides `file`. */
const EXTRA_PARTS: Record<ImportFormat, string[]> = { csv: ['votes', 'comments'], fider: [], canny: [] }

export const importTempDir = (ctx: { config: { dataDir: string } }) => join(ctx.config.dataDir, 'tmp')

export interface ImportRequest { format: string; dryRun: boolean; board?: string; files: Record<string, StreamedPart>; userId: string | null }

const openLocal = (files: Record<string, StreamedPart>): OpenPart => async (part) => (files[part] ? Bun.file(files[part]!.path).stream() : null)

function checkedFormat(request: ImportRequest): ImportFormat {
  if (!IMPORT_FORMATS.includes(request.format as ImportFormat)) throw invalid(['body', 'format'], `format must be one of ${IMPORT_FORMATS.join(', ')}`, 'enum')
  const format = request.format as ImportFormat
  if (!request.files.file) throw invalid(['body', 'file'], 'Send the file to import as the multipart field "file"', 'missing')
  const unknown = Object.keys(request.files).find((part) => part !== 'file' && !EXTRA_PARTS[format].includes(part))
  if (unknown) throw invalid(['body', unknown], `The ${format} format takes no "${unknown}" file`, 'extra_forbidden')
  return format
}

/** Creates the import (202) or answers its plan (dry run); the temporary files are always gone afterwards. */
export async function receiveImport(ctx: Pick<AppContext, 'db' | 'storage'>, workspaceId: string, request: ImportRequest) {
  try {
    const format = checkedFormat(request)
    const options = request.board ? { board: request.board } : {}
    const open = openLocal(request.files)
    let records: Record<string, number>
    try {
      records = await sourceFor(format, options).check(open)
    } catch (error) {
      if (error instanceof FormatError) throw invalid(['body', 'file'], `This is not a valid ${format} file: ${error.message}`, 'format')
      throw error
    }
    if (request.dryRun) {
      const plan = await planImport(ctx.db, open, { workspaceId, format, options })
      return { dry_run: true as const, format, status: 'planned' as const, records, ...countsOf(plan.tally), errors: plan.errors, error_count: plan.errorCount }
    }
    const id = newId('import')
    const files: Record<string, string> = {}
    for (const [part, file] of Object.entries(request.files)) {
      files[part] = `${id}_${part}`
      await ctx.storage.putFile(files[part]!, file.path, file.type || 'application/octet-stream')
    }
    const bytesTotal = Object.values(request.files).reduce((sum, file) => sum + file.size, 0)
    const [row] = await ctx.db.insert(imports).values({ id, workspaceId, format, files, options: { ...options, records } as never, bytesTotal, createdByUserId: request.userId }).returning()
    return toImportResponse(row!)
  } finally {
    await discard(request.files)
  }
}

export async function getImport(ctx: Pick<AppContext, 'db'>, workspaceId: string, id: string) {
  const [row] = await ctx.db.select().from(imports).where(and(eq(imports.workspaceId, workspaceId), eq(imports.id, id)))
  if (!row) throw notFound('Import')
  return toImportResponse(row)
}

export async function listImports(ctx: AppContext, workspaceId: string) {
  const rows = await ctx.db.select().from(imports).where(eq(imports.workspaceId, workspaceId)).orderBy(sql`${imports.createdAt} desc`).limit(50)
  return { items: rows.map(toImportResponse) }
}

/** Every entity's counts, zeros included, so clients read one shape. */
function countsOf(tally: Record<string, { created: number; merged: number; skipped: number }>) {
  const counts: Record<string, { created: number; merged: number; skipped: number }> = {}
  for (const name of Object.values(TALLY_NAME)) counts[name] = tally[name] ?? { created: 0, merged: 0, skipped: 0 }
  return { counts }
}

type ImportRow = typeof imports.$inferSelect

export function toImportResponse(row: ImportRow) {
  const source = sourceFor(row.format, row.options)
  const passIndex = row.checkpoint.pass ? source.passes.indexOf(row.checkpoint.pass as never) : -1
  const status = row.state === 'done' ? 'completed' : row.state === 'failed' ? 'failed' : row.startedAt ? 'running' : 'queued'
  return {
    id: row.id,
    format: row.format,
    status: status as 'queued' | 'running' | 'completed' | 'failed',
    dry_run: false as const,
    ...countsOf(row.counts),
    errors: row.errors,
    error_count: row.errorCount,
    progress: {
      pass: row.state === 'done' ? null : row.checkpoint.pass ?? null,
      passes_done: row.state === 'done' ? source.passes.length : Math.max(0, passIndex),
      passes_total: source.passes.length,
      records_in_pass: row.checkpoint.records ?? 0,
      percent: row.state === 'done' ? 100 : Math.floor((100 * Math.max(0, passIndex)) / source.passes.length),
    },
    bytes: row.bytesTotal,
    failure: row.failure,
    attempts: row.attempts,
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
  }
}

/** Used by scripts/import.ts: the import row for a file an operator already has on disk. */
export async function workspaceIdBySlug(ctx: Pick<AppContext, 'db'>, slug: string) {
  const [row] = rowsOf<{ id: string }>(await ctx.db.execute(sql`select id from workspaces where slug = ${slug}`))
  return row?.id ?? null
}
