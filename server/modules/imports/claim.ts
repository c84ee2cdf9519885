// Claiming an import job and recording a failed run: the statements the background worker's import loop
// runs on every wake. Kept apart from runner.ts, so the worker loads the sources, the writer and their
// parsers only when a job is claimed (server/background/import-loop.ts).
import { sql } from 'drizzle-orm'
import { rowsOf, type Db } from '../../db/client.ts'
import type { ImportCheckpoint, ImportFormat, ImportRowError } from '../../db/schema/index.ts'
import type { Tally } from './resolve.ts'

/** A claim lasts this long between batches; a live worker renews it with every batch. */
export const IMPORT_LEASE_SECONDS = 60

export interface ImportJob {
  id: string
  workspace_id: string
  format: ImportFormat
  files: Record<string, string>
  options: { board?: string }
  checkpoint: ImportCheckpoint
  counts: Tally
  errors: ImportRowError[]
  error_count: number
}

/**
 * Leases the oldest pending import no live worker holds (its owner's advisory lock is gone, or its lease
 * ran out: server/background/leases.ts), or null. Counts the attempt.
 */
export async function claimImport(db: Db, owner: number, lockSpace: number): Promise<ImportJob | null> {
  const [job] = rowsOf<ImportJob>(await db.execute(sql`
    with live as materialized (
      select objid::bigint as owner from pg_locks
      where locktype = 'advisory' and granted and objsubid = 2 and classid = ${sql.raw(String(lockSpace))}
        and database = (select oid from pg_database where datname = current_database())
    )
    update imports set lease_owner = ${owner}, lease_until = now() + interval '${sql.raw(String(IMPORT_LEASE_SECONDS))} seconds', attempts = attempts + 1, started_at = coalesce(started_at, now())
    where id = (select id from imports where state = 'pending'
      and (lease_owner is null or lease_until < now() or lease_owner not in (select owner from live) or lease_owner = ${owner})
      order by created_at limit 1 for update skip locked)
    returning id, workspace_id, format, files, options, checkpoint, counts, errors, error_count, attempts`))
  return job ?? null
}

/** After a run threw: the job fails for good once it has thrown this many times. */
export const MAX_IMPORT_ATTEMPTS = 3

export async function recordFailure(db: Db, job: ImportJob & { attempts?: number }, owner: number, message: string) {
  await db.execute(sql`update imports set lease_owner = null, lease_until = null,
    state = case when attempts >= ${MAX_IMPORT_ATTEMPTS} then 'failed' else state end,
    finished_at = case when attempts >= ${MAX_IMPORT_ATTEMPTS} then now() else finished_at end, failure = ${message}
    where id = ${job.id} and lease_owner = ${owner}`)
}
