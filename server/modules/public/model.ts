import { t } from 'elysia'
import { Enum } from '../../lib/schema.ts'
import { CommentResponse } from '../comments/model.ts'
import { PostResponse } from '../posts/model.ts'

export const PublicWorkspaceParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }) })
export const PublicBoardParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }), board_slug: t.String({ maxLength: 64 }) })
export const PublicPostParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }), post_id: t.String({ maxLength: 64 }) })

export const PublicStatus = t.Object({
  id: t.String(),
  name: t.String(),
  kind: Enum(['open', 'planned', 'in_progress', 'complete', 'closed']),
  color: t.String(),
  position: t.Integer(),
}, { description: 'PublicStatus' })

export const PublicBoard = t.Object({
  id: t.String(),
  slug: t.String(),
  name: t.String(),
  description: t.Nullable(t.String()),
  post_count: t.Integer({ description: 'Posts on the board, merged ones left out' }),
}, { description: 'PublicBoard' })

export const PublicWorkspaceResponse = t.Object({
  workspace: t.Object({
    slug: t.String(),
    name: t.String(),
    logo_url: t.Nullable(t.String()),
    favicon_url: t.Nullable(t.String()),
    settings: t.Object({
      allow_anonymous: t.Boolean({ description: 'Anonymous visitors may post and vote with an e-mail address' }),
      brand_color: t.Nullable(t.String()),
    }),
  }),
  boards: t.Array(PublicBoard, { description: 'Public boards only' }),
  statuses: t.Array(PublicStatus, { description: 'In workflow order' }),
}, { description: 'PublicWorkspaceResponse' })

export const PublicPostResponse = t.Object({
  ...PostResponse.properties,
  comments: t.Array(CommentResponse, { description: 'The first 100 public comments, oldest first; `comment_count` tells whether there are more' }),
}, { description: 'PublicPostResponse' })

export const ROADMAP_KINDS = ['planned', 'in_progress', 'complete'] as const

export const RoadmapResponse = t.Object({
  groups: t.Array(t.Object({
    status_kind: Enum(ROADMAP_KINDS),
    statuses: t.Array(t.String(), { description: 'Names of the statuses of this kind, in workflow order' }),
    total: t.Integer({ description: 'Public posts in this group; `items` holds at most 50' }),
    items: t.Array(PostResponse, { description: 'Top 50 by votes, newest first on ties' }),
  }), { description: 'Always the three groups planned, in_progress, complete, in that order' }),
}, { description: 'RoadmapResponse' })

/** Documents the conditional GET; the body is empty. */
export const NotModified = t.Void({ description: 'Not modified: If-None-Match matched the current ETag' })
