// The chat jobs' claim on the shared lease (server/background/leases.ts), as SQL text: the background
// worker runs it at every round that may have chat work, before (and without) loading delivery.ts.
import { CHAT_JOBS, claimDue } from '../../background/leases.ts'
import type { SqlRunner } from '../../db/sql-text.ts'

/** A chat job as the shared lease claims it. */
export type ChatClaim = { mapping_id: string; event_id: string; attempts: number }

/** Leases up to `limit` due chat jobs to `owner`. */
export async function leaseChatJobs(runner: SqlRunner, owner: number, limit: number): Promise<ChatClaim[]> {
  return claimDue<ChatClaim>(runner, CHAT_JOBS, owner, limit)
}
