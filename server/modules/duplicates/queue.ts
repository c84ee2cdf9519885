// The suggestion step, off the create request: the dispatcher's fan-out (check-subscriber.ts) queues a
// `duplicate_checks` row for every `post.created`, and the background worker's suggester loop
// (server/background/suggester.ts) claims rows with a lease and runs `suggestDuplicates` for each. A crash
// mid-check leaves the lease to expire and the check runs again (the pair index makes that harmless).
import { sql } from 'drizzle-orm'
import { rowsOf, type Db, type Tx } from '../../db/client.ts'
import { drizzleQueueTransaction as queueTransaction } from '../../db/leased-queue.ts'
import type { Language } from '../../lib/language.ts'
import { foldWaitingTerms } from './term-counts.ts'

/** How long a claimed check is held before another loop may take it again. */
const LEASE_SECONDS = 60
/** A check that failed this many times is dropped (logged): the suggestion is a help, never a duty. */
const MAX_ATTEMPTS = 3

interface Claimed { post_id: string; workspace_id: string; attempts: number; title: string; body: string; language: Language; board_id: string; label_ids: string[] }

/** Claims up to `limit` due checks (oldest first), runs each, and removes it; returns how many it claimed. */
export async function runDuplicateChecks(db: Db, onError: (postId: string, error: unknown) => void, limit = 20) {
  // The term counts the checks' idf reads stay small to read: new posts' deltas folded first.
  await foldWaitingTerms(db)
  const claimed = await queueTransaction(db, async (tx) => rowsOf<Claimed>(await tx.execute(sql`
    with taken as (
      update duplicate_checks set lease_until = now() + interval '${sql.raw(String(LEASE_SECONDS))} seconds', attempts = attempts + 1
      where ctid = any(array(select ctid from duplicate_checks where lease_until is null or lease_until < now() order by created_at limit ${limit} for update skip locked))
      returning post_id, workspace_id, attempts)
    select t.post_id, t.workspace_id, t.attempts, p.title, p.body, p.language, p.board_id, p.label_ids
    from taken t join posts p on p.id = t.post_id`)))
  // The similarity search (service.ts and its text tools) loads on the first claimed check, not with the worker (bench/worker-modules.ts).
  if (!claimed.length) return 0
  const { suggestDuplicatesMany } = await import('./service.ts')
  const done: string[] = []
  const postOf = (check: Claimed) => ({ id: check.post_id, title: check.title, body: check.body, language: check.language, board_id: check.board_id, labelIds: check.label_ids })
  /** A workspace's checks together (the statements they share read once: similarity.ts similarPostsMany); if they fail, each alone, so one bad check sinks no other. */
  async function settle(workspaceId: string, checks: Claimed[]) {
    try {
      await suggestDuplicatesMany(db, workspaceId, checks.map(postOf))
      done.push(...checks.map((check) => check.post_id))
    } catch (error) {
      if (checks.length > 1) {
        for (const check of checks) await settle(workspaceId, [check])
        return
      }
      onError(checks[0]!.post_id, error)
      if (checks[0]!.attempts >= MAX_ATTEMPTS) done.push(checks[0]!.post_id)
    }
  }
  for (const workspaceId of new Set(claimed.map((check) => check.workspace_id))) await settle(workspaceId, claimed.filter((check) => check.workspace_id === workspaceId))
  // One statement for the batch; a crash before it runs the checks again once their leases lapse (harmless).
  if (done.length) await db.execute(sql`delete from duplicate_checks where post_id = any(${`{${done.join(',')}}`}::text[])`)
  return claimed.length
}

/** Milliseconds until a leased check may be tried again, 0 when one is due, null when none waits. */
export async function msUntilDuplicateCheck(db: Db) {
  const [row] = rowsOf<{ ms: number | null }>(await db.execute(sql`select (extract(epoch from min(coalesce(lease_until, created_at)) - now()) * 1000)::float8 as ms from duplicate_checks`))
  return row?.ms == null ? null : Math.max(0, Number(row.ms))
}
