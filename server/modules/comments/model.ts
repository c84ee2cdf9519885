import { t } from 'elysia'
import { Email } from '../auth/model.ts'
import { PagingQuery, pageEnvelope } from '../feedback/paging.ts'
import { AuthorResponse } from '../posts/model.ts'
import { Timestamp } from '../user/model.ts'

export const CommentCreate = t.Object({
  body: t.String({ minLength: 1, maxLength: 10_000 }),
  internal: t.Optional(t.Boolean({ description: 'A team-only note: needs the comments:internal scope with a key; never shown publicly' })),
  parent_id: t.Optional(t.String({ maxLength: 64, description: 'Reply to this comment of the same post' })),
  email: t.Optional(Email),
  end_user_id: t.Optional(t.String({ maxLength: 64 })),
}, { additionalProperties: false, description: 'CommentCreate' })

export const CommentUpdate = t.Object({ body: t.String({ minLength: 1, maxLength: 10_000 }) }, { additionalProperties: false, description: 'CommentUpdate' })

export const CommentResponse = t.Object({
  id: t.String(),
  post_id: t.String(),
  parent_id: t.Nullable(t.String()),
  body: t.String(),
  internal: t.Boolean(),
  author: AuthorResponse,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { description: 'CommentResponse' })

export const CommentListResponse = pageEnvelope(CommentResponse, 'CommentListResponse')
export const CommentListQuery = t.Object({ ...PagingQuery }, { additionalProperties: false })
export const CommentIdParams = t.Object({ comment_id: t.String({ maxLength: 64 }) })
