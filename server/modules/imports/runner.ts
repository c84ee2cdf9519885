// Running an import (docs/import.md#how-an-import-runs): the source's passes in order, records in
// batches; each batch commits with the job's checkpoint, counts and errors, and renews the lease. A run
// that dies is resumed by the next claim from its checkpoint; whatever it repeats, external_refs and the
// votes' unique keys turn into skips, so a resumed run ends with the rows an uninterrupted one makes.
import { sql } from 'drizzle-orm'
import { rowsOf, type Db, type Tx } from '../../db/client.ts'
import { crashPoint } from '../../db/effects.ts'
import type { ImportCheckpoint, ImportFormat, ImportRowError } from '../../db/schema/index.ts'
import type { Storage } from '../../lib/storage.ts'
import { IMPORT_LEASE_SECONDS, type ImportJob } from './claim.ts'
import { cannySource } from './canny.ts'
import { csvSource } from './csv.ts'
import { fiderSource } from './fider.ts'
import type { ImportRecord, OpenPart, RecordKind, Source } from './records.ts'
import type { Tally, Target } from './resolve.ts'
import { writeBatch } from './writer.ts'

/** Records per transaction: large enough that round trips are few, small enough that a crash repeats little. */
export const IMPORT_BATCH = 1000
/** Row errors kept on the job (the count goes on). */
export const ERRORS_KEPT = 100

export function sourceFor(format: ImportFormat, options: { board?: string }): Source {
  return format === 'csv' ? csvSource(options) : format === 'fider' ? fiderSource(options) : cannySource()
}

export const openerFor = (storage: Storage, files: Record<string, string>): OpenPart => async (part) => (files[part] ? storage.stream(files[part]!) : null)

interface Progress { tally: Tally; errors: ImportRowError[]; errorCount: number }

type Commit = (pass: RecordKind, records: number, batch: (ImportRecord & { file: string })[], progress: Progress) => Promise<void>

/** Reads the passes from `checkpoint` on and hands each batch to `commit`, which writes it with the new checkpoint. */
async function runPasses(source: Source, open: OpenPart, checkpoint: ImportCheckpoint, progress: Progress, commit: Commit, batchSize = IMPORT_BATCH) {
  const start = checkpoint.pass ? Math.max(0, source.passes.indexOf(checkpoint.pass as RecordKind)) : 0
  for (const pass of source.passes.slice(start)) {
    const skip = pass === checkpoint.pass ? checkpoint.records ?? 0 : 0
    let seen = 0
    let batch: (ImportRecord & { file: string })[] = []
    for await (const record of source.read(pass, open)) {
      if (++seen <= skip) continue
      batch.push(record)
      if (batch.length >= batchSize) {
        await commit(pass, seen, batch, progress)
        batch = []
      }
    }
    await commit(pass, seen, batch, progress)
  }
}

/** Writes a batch in `tx` and returns the progress it leads to (the caller keeps it once the transaction commits). */
async function writeIn(tx: Tx, base: Omit<Target, 'tx' | 'tally'>, pass: RecordKind, batch: (ImportRecord & { file: string })[], progress: Progress): Promise<Progress> {
  const tally: Tally = structuredClone(progress.tally)
  const errors = [...progress.errors]
  let errorCount = progress.errorCount
  const problem = (file: string) => (line: number, message: string) => {
    errorCount++
    if (errors.length < ERRORS_KEPT) errors.push({ file, line, message })
  }
  const good: ImportRecord[] = []
  for (const record of batch) {
    if (record.kind === 'error') problem(record.file)(record.line, record.message)
    else good.push(record)
  }
  if (good.length) await writeBatch({ ...base, tx, tally }, pass, good, problem(batch[0]!.file))
  return { tally, errors, errorCount }
}

/**
 * Runs a claimed job to its end. Each batch commits only while `owner` still holds the lease (a job whose
 * lease lapsed and was taken over stops here, its last batch rolled back). Returns false when the lease was lost.
 */
export interface RunHooks {
  /** Records per batch (default IMPORT_BATCH). */
  batchSize?: number
  /** Called after each committed batch (tests stop a run there, as a crash would). */
  afterBatch?(records: number): void
}

export async function runImport(db: Db, storage: Storage, job: ImportJob, owner: number, hooks: RunHooks = {}): Promise<boolean> {
  const base = { workspaceId: job.workspace_id, source: job.format, importId: job.id, defaultBoard: job.options.board, refCache: new Map<string, string>() }
  let progress: Progress = { tally: job.counts ?? {}, errors: job.errors ?? [], errorCount: job.error_count ?? 0 }
  const held = async (tx: Tx, set: ReturnType<typeof sql>) => rowsOf(await tx.execute(sql`update imports set ${set}, lease_until = now() + interval '${sql.raw(String(IMPORT_LEASE_SECONDS))} seconds'
    where id = ${job.id} and lease_owner = ${owner} and state = 'pending' returning id`)).length > 0
  class LeaseLost extends Error {}
  try {
    await runPasses(sourceFor(job.format, job.options), openerFor(storage, job.files), job.checkpoint ?? {}, progress, async (pass, records, batch) => {
      progress = await db.transaction(async (tx) => {
        // A batch commits without waiting for its WAL flush: a server crash can lose only whole batches, and
        // the job's checkpoint with them, so the resumed run repeats exactly those (one fsync fewer per batch).
        await tx.execute(sql`set local synchronous_commit = off`)
        const next = await writeIn(tx, base, pass, batch, progress)
        const checkpoint: ImportCheckpoint = { pass, records }
        if (!(await held(tx, sql`checkpoint = ${JSON.stringify(checkpoint)}::jsonb, counts = ${JSON.stringify(next.tally)}::jsonb, errors = ${JSON.stringify(next.errors)}::jsonb, error_count = ${next.errorCount}`))) throw new LeaseLost()
        return next
      })
      // Test hook: the process dies between two committed batches.
      if (batch.length) crashPoint('import:batch')
      hooks.afterBatch?.(records)
    }, hooks.batchSize)
  } catch (error) {
    if (error instanceof LeaseLost) return false
    throw error
  }
  await db.transaction(async (tx) => void (await held(tx, sql`state = 'done', finished_at = now()`)))
  for (const key of Object.values(job.files)) await storage.delete(key).catch(() => {})
  return true
}

/** What a dry run answers: the counts and row errors the import would have, from writes made in one transaction and rolled back. */
export async function planImport(db: Db, open: OpenPart, input: { workspaceId: string; format: ImportFormat; options: { board?: string } }) {
  const base = { workspaceId: input.workspaceId, source: input.format, importId: 'dry_run', defaultBoard: input.options.board, refCache: new Map<string, string>() }
  let progress: Progress = { tally: {}, errors: [], errorCount: 0 }
  class RolledBack extends Error {}
  await db.transaction(async (tx) => {
    await runPasses(sourceFor(input.format, input.options), open, {}, progress, async (pass, _records, batch) => {
      progress = await tx.transaction((inner) => writeIn(inner, base, pass, batch, progress))
    })
    throw new RolledBack()
  }).catch((error) => {
    if (!(error instanceof RolledBack)) throw error
  })
  return progress
}
