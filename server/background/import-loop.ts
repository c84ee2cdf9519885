// The import runner (docs/import.md#how-an-import-runs): one job at a time per worker, claimed with the
// delivery loop's owner number, so a job whose worker died (its owner lock gone) is resumed at once by
// the next claim, and one whose worker went silent, after its lease. New imports wake it (migration 0040).
import { describeError } from '../db/errors.ts'
import { IDLE_BACKSTOP_MS } from '../db/work.ts'
import { claimImport, recordFailure } from '../modules/imports/claim.ts'
import type { BackgroundContext } from './context.ts'
import { LOCK_SPACE } from './leases.ts'
import { wokenLoop, type WokenLoop } from './woken-loop.ts'

export function startImportLoop(ctx: BackgroundContext, owner: () => number): WokenLoop {
  return wokenLoop(ctx.database.listenForWork, ['imports'], async (waker, running) => {
    while (running()) {
      const job = await claimImport(ctx.db, owner(), LOCK_SPACE).catch((error) => {
        if (running()) ctx.log.error('import claim', { error: describeError(error) })
        return null
      })
      if (!job) {
        if (running()) await waker.sleep(IDLE_BACKSTOP_MS)
        continue
      }
      ctx.log.info('import started', { import_id: job.id, format: job.format })
      try {
        // The sources, the writer and their parsers load with the first claimed job, not with the worker.
        const { runImport } = await import('../modules/imports/runner.ts')
        const finished = await runImport(ctx.db, ctx.storage, job, owner(), { batchSize: ctx.config.importBatchSize })
        ctx.log.info(finished ? 'import finished' : 'import lease lost', { import_id: job.id })
      } catch (error) {
        ctx.log.error('import failed', { import_id: job.id, error: describeError(error) })
        await recordFailure(ctx.db, job, owner(), describeError(error)).catch(() => {})
      }
    }
  })
}
