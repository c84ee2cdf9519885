import { t } from 'elysia'
import { STATUS_KINDS, type statuses } from '../../db/schema/index.ts'
import { Enum, HexColor, Integer, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'

export const StatusKind = Enum(STATUS_KINDS, { description: 'Where the status sits on the roadmap' })
const Name = t.String({ minLength: 1, maxLength: 50, pattern: '\\S', description: 'Unique in the workspace' })
const Position = Integer({ minimum: 0, maximum: 10_000, description: '0-based place in the workflow order; a value past the end puts the status last' })

export const StatusCreate = t.Object({
  name: Name,
  kind: StatusKind,
  color: t.Optional(HexColor),
  position: t.Optional(Position),
  is_default: t.Optional(t.Boolean({ description: 'Make this the status new posts get (the previous default stops being one)' })),
}, { additionalProperties: false, $id: 'StatusCreate', examples: [{ name: 'Planned', kind: 'planned', color: '#3b82f6' }] })

export const StatusUpdate = t.Object({
  name: t.Optional(Name),
  kind: t.Optional(StatusKind),
  color: t.Optional(HexColor),
  position: t.Optional(Position),
  is_default: t.Optional(t.Boolean({ description: '`true` makes this the default; `false` on the default is 409 (make another status the default instead)' })),
}, { additionalProperties: false, $id: 'StatusUpdate', examples: [{ name: 'Up next', position: 2 }] })

export const StatusParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, status_id: t.String({ maxLength: 64, examples: ['sts_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })
export const DeleteStatusQuery = t.Object({
  move_to: t.Optional(t.String({ maxLength: 64, description: 'Id of another status of the workspace to move the posts to; needed when the status still has posts' })),
})

export const StatusResponse = t.Object({
  id: t.String({ examples: ['sts_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  name: t.String(),
  kind: StatusKind,
  color: t.String(),
  position: Integer(),
  is_default: t.Boolean(),
  post_count: Integer({ description: 'Posts with this status, not counting posts merged into others' }),
  created_at: Timestamp,
}, { $id: 'Status', examples: [{ id: 'sts_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'Planned', kind: 'planned', color: '#3b82f6', position: 1, is_default: false, post_count: 7, created_at: '2026-11-22T09:30:00.000Z' }] })

export type StatusRow = typeof statuses.$inferSelect & { postCount: number }

export const toStatusResponse = (status: StatusRow) => ({
  id: status.id,
  name: status.name,
  kind: status.kind,
  color: status.color,
  position: status.position,
  is_default: status.isDefault,
  post_count: status.postCount,
  created_at: status.createdAt.toISOString(),
})
