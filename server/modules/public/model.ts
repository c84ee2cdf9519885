import { t } from 'elysia'
import { Enum, Timestamp } from '../../lib/schema.ts'
import { CommentResponse, commentExample } from '../comments/model.ts'
import { PostResponse, postExample } from '../posts/model.ts'


export const PublicStatus = t.Object({
  id: t.String(),
  name: t.String(),
  kind: Enum(['open', 'planned', 'in_progress', 'complete', 'closed']),
  color: t.String(),
  position: t.Integer(),
}, { $id: 'PublicStatus', examples: [{ id: 'sts_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'Planned', kind: 'planned', color: '#3b82f6', position: 1 }] })

export const PublicBoard = t.Object({
  id: t.String(),
  slug: t.String(),
  name: t.String(),
  description: t.Nullable(t.String()),
  post_count: t.Integer({ description: 'Posts on the board, merged ones left out' }),
}, { $id: 'PublicBoard', examples: [{ id: 'brd_0mi9x2k3aq1b2c3d4e5f6g7h8', slug: 'ideas', name: 'Ideas', description: 'What should we build next?', post_count: 42 }] })

export const PublicWorkspaceResponse = t.Object({
  workspace: t.Object({
    slug: t.String(),
    name: t.String(),
    logo_url: t.Nullable(t.String()),
    favicon_url: t.Nullable(t.String()),
    settings: t.Object({
      allow_anonymous: t.Boolean({ description: 'Anonymous visitors may post and vote with an e-mail address' }),
      brand_color: t.Nullable(t.String()),
      accent_color: t.Nullable(t.String({ description: "The widget's and portal's accent colour (`#rrggbb`): the workspace's `settings.brand_color`, or null for the default" })),
      default_board: t.Nullable(t.String({ description: "The board the widget opens on: `settings.default_board` when it names a public board, else the oldest public board; null without public boards" })),
      proof_of_work: t.Boolean({ description: 'Anonymous and unconfirmed writers send a solved ALTCHA challenge (GET /contact/challenge) as `challenge` with a post (docs/moderation.md#proof-of-work)' }),
    }),
  }),
  boards: t.Array(PublicBoard, { description: 'Public boards only' }),
  statuses: t.Array(PublicStatus, { description: 'In workflow order' }),
}, { $id: 'PublicWorkspace', examples: [{ workspace: { slug: 'acme', name: 'Acme', logo_url: null, favicon_url: null, settings: { allow_anonymous: true, brand_color: '#8b5cf6', accent_color: '#8b5cf6', default_board: 'ideas', proof_of_work: false } }, boards: [{ id: 'brd_0mi9x2k3aq1b2c3d4e5f6g7h8', slug: 'ideas', name: 'Ideas', description: null, post_count: 42 }], statuses: [{ id: 'sts_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'Planned', kind: 'planned', color: '#3b82f6', position: 1 }] }] })

export const PublicStatusChange = t.Object({
  status: t.String({ description: 'The status the post moved to' }),
  status_kind: Enum(['open', 'planned', 'in_progress', 'complete', 'closed']),
  changed_at: Timestamp,
}, { $id: 'PublicStatusChange', examples: [{ status: 'Planned', status_kind: 'planned', changed_at: '2026-11-22T09:30:00.000Z' }] })

export const PublicPostResponse = t.Object({
  ...PostResponse.properties,
  comments: t.Array(CommentResponse, { description: 'The first 100 public comments, oldest first; `comment_count` tells whether there are more' }),
  status_history: t.Array(PublicStatusChange, { description: 'Every status the post has had, oldest first (the first is the status it was created in); who changed it is not public' }),
}, { $id: 'PublicPost', examples: [{ ...postExample, author: { ...postExample.author, email: null }, owner_user_id: null, comments: [{ ...commentExample, author: { ...commentExample.author, email: null } }], status_history: [{ status: 'Open', status_kind: 'open', changed_at: '2026-11-22T09:30:00.000Z' }] }] })

export const ROADMAP_KINDS = ['planned', 'in_progress', 'complete'] as const

export const RoadmapResponse = t.Object({
  groups: t.Array(t.Object({
    status_kind: Enum(ROADMAP_KINDS),
    statuses: t.Array(t.String(), { description: 'Names of the statuses of this kind, in workflow order' }),
    total: t.Integer({ description: 'Public posts in this group; `items` holds at most 50' }),
    items: t.Array(PostResponse, { description: 'Top 50 by votes, newest first on ties' }),
  }), { description: 'Always the three groups planned, in_progress, complete, in that order' }),
}, { $id: 'Roadmap', examples: [{ groups: [{ status_kind: 'planned', statuses: ['Planned'], items: [{ ...postExample, author: { ...postExample.author, email: null }, owner_user_id: null }], total: 1 }, { status_kind: 'in_progress', statuses: ['In progress'], items: [], total: 0 }, { status_kind: 'complete', statuses: ['Done'], items: [], total: 0 }] }] })

/** Documents the conditional GET; the body is empty. */
export const NotModified = t.Void({ description: 'Not modified: If-None-Match matched the current ETag' })
