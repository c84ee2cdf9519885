// An outbox event as the dispatcher takes it (dispatch.ts, SQL text) and subscribers receive it: no
// drizzle types at run time, so the background worker's fan-out loads no schema.

/** An outbox row as subscribers receive it; `createdAt` is PostgreSQL's text of the timestamp. */
export interface OutboxEvent {
  id: string
  workspaceId: string
  type: string
  data: Record<string, unknown>
  createdAt: string
}

/** The workspaces a batch of events belongs to, each once: what every subscriber looks its targets up by. */
export const workspacesOf = (rows: OutboxEvent[]) => [...new Set(rows.map((row) => row.workspaceId))]
