import { t } from 'elysia'
import { Enum } from '../../lib/schema.ts'
import { Email } from '../auth/model.ts'
import { PagingQuery, pageEnvelope } from '../feedback/paging.ts'
import { Timestamp } from '../user/model.ts'

export const AuthorResponse = t.Object({
  type: Enum(['member', 'end_user', 'api_key', 'deleted']),
  id: t.Nullable(t.String()),
  name: t.String(),
  email: t.Nullable(t.String({ description: 'Hidden (null) on public routes' })),
})

const onBehalf = {
  email: t.Optional(Email),
  end_user_id: t.Optional(t.String({ maxLength: 64, description: 'Act for this end user; with `email` instead, an unknown address creates the end user' })),
}

export const StatusRef = t.String({ minLength: 1, maxLength: 64, description: 'A status name (case-insensitive) or id' })
const LabelSlugs = t.Array(t.String({ minLength: 1, maxLength: 48 }), { maxItems: 20, uniqueItems: true, description: 'Label slugs' })

export const PostCreate = t.Object({
  title: t.String({ minLength: 1, maxLength: 200 }),
  body: t.Optional(t.String({ maxLength: 20_000 })),
  labels: t.Optional(LabelSlugs),
  status: t.Optional(StatusRef),
  ...onBehalf,
}, { additionalProperties: false, description: 'PostCreate' })

export const PostUpdate = t.Object({
  title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  body: t.Optional(t.String({ maxLength: 20_000 })),
  status: t.Optional(StatusRef),
  labels: t.Optional(LabelSlugs),
  board: t.Optional(t.String({ minLength: 2, maxLength: 48, description: 'Move the post to this board (slug)' })),
  owner_user_id: t.Optional(t.Nullable(t.String({ maxLength: 64, description: 'The member responsible for the post, or null' }))),
}, { additionalProperties: false, minProperties: 1, description: 'PostUpdate' })

export const PostMerge = t.Object({ into_post_id: t.String({ maxLength: 64 }) }, { additionalProperties: false, description: 'PostMerge' })

export const PostResponse = t.Object({
  id: t.String(),
  board: t.String({ description: 'Board slug' }),
  board_id: t.String(),
  title: t.String(),
  body: t.String(),
  status: t.String({ description: 'Status name' }),
  status_id: t.String(),
  status_kind: Enum(['open', 'planned', 'in_progress', 'complete', 'closed']),
  labels: t.Array(t.String(), { description: 'Label slugs' }),
  votes: t.Integer(),
  comment_count: t.Integer({ description: 'Public comments; internal notes are not counted' }),
  author: AuthorResponse,
  owner_user_id: t.Nullable(t.String(), { description: 'The member responsible for the post; hidden (null) on public routes' }),
  merged_into: t.Nullable(t.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { description: 'PostResponse' })

export const PostListQuery = t.Object({
  ...PagingQuery,
  status: t.Optional(StatusRef),
  label: t.Optional(t.String({ maxLength: 48, description: 'Label slug' })),
  q: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Full-text search over title and body' })),
  sort: t.Optional(Enum(['top', 'new', 'trending'], {
    description: '`new` (default): newest first. `top`: most votes. `trending`: votes / (age in hours + 2)^1.5, newest first on ties',
  })),
}, { additionalProperties: false })

export const PostListResponse = pageEnvelope(PostResponse, 'PostListResponse')
export const PostIdParams = t.Object({ post_id: t.String({ maxLength: 64 }) })
export const BoardPostsParams = t.Object({ board_slug: t.String({ maxLength: 64 }) })
