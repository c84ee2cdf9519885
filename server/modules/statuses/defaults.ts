import type { Db } from '../../db/client.ts'
import { statuses, type StatusKind } from '../../db/schema/index.ts'
import { newId } from '../../lib/ids.ts'

/** Every workspace starts with a workflow most teams use unchanged; new posts land in "Open". */
export const DEFAULT_STATUSES: { name: string; kind: StatusKind; color: string }[] = [
  { name: 'Open', kind: 'open', color: '#6b7280' },
  { name: 'Under review', kind: 'open', color: '#0ea5e9' },
  { name: 'Planned', kind: 'planned', color: '#8b5cf6' },
  { name: 'In progress', kind: 'in_progress', color: '#f59e0b' },
  { name: 'Complete', kind: 'complete', color: '#10b981' },
  { name: 'Closed', kind: 'closed', color: '#ef4444' },
]

export async function createDefaultStatuses(db: Db, workspaceId: string) {
  await db.insert(statuses).values(DEFAULT_STATUSES.map((status, position) => ({
    id: newId('status'), workspaceId, ...status, position, isDefault: position === 0,
  })))
}
