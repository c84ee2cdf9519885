import { t } from 'elysia'
import type { boards } from '../../db/schema/index.ts'
import { Integer, Slug, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'

const Name = t.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const Description = t.Nullable(t.String({ maxLength: 2000 }))
const IsPrivate = t.Boolean({ description: 'Private boards are hidden from the public portal and widget; members and API keys still see them' })

export const BoardCreate = t.Object({
  name: Name,
  slug: Slug,
  description: t.Optional(Description),
  is_private: t.Optional(IsPrivate),
}, { additionalProperties: false, $id: 'BoardCreate', examples: [{ name: 'Ideas', slug: 'ideas', description: 'What should we build next?', is_private: false }] })

export const BoardUpdate = t.Object({
  name: t.Optional(Name),
  slug: t.Optional(Slug),
  description: t.Optional(Description),
  is_private: t.Optional(IsPrivate),
}, { additionalProperties: false, $id: 'BoardUpdate', examples: [{ name: 'Feature ideas', is_private: true }] })

const BoardSlug = t.String({ maxLength: 64, examples: ['ideas'] })
export const BoardSlugParams = t.Object({ board_slug: BoardSlug })
export const WorkspaceBoardParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, board_slug: BoardSlug })

export const BoardResponse = t.Object({
  id: t.String({ examples: ['brd_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  slug: t.String(),
  name: t.String(),
  description: t.Nullable(t.String()),
  is_private: t.Boolean(),
  post_count: Integer({ description: 'Posts on the board, not counting posts merged into others' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Board', examples: [{ id: 'brd_0mi9x2k3aq1b2c3d4e5f6g7h8', slug: 'ideas', name: 'Ideas', description: 'What should we build next?', is_private: false, post_count: 42, created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-23T14:05:12.345Z' }] })

export type BoardRow = typeof boards.$inferSelect & { postCount: number }

export const toBoardResponse = (board: BoardRow) => ({
  id: board.id,
  slug: board.slug,
  name: board.name,
  description: board.description,
  is_private: board.isPrivate,
  post_count: board.postCount,
  created_at: board.createdAt.toISOString(),
  updated_at: board.updatedAt.toISOString(),
})
