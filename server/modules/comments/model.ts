import { t } from 'elysia'
import { Email } from '../auth/model.ts'
import { PagingQuery, pageEnvelope } from '../../lib/paging-schema.ts'
import { AuthorResponse } from '../posts/model.ts'
import { Timestamp } from '../../lib/schema.ts'

/** The example of the `Comment` component, reused by the schemas that embed it. */
export const commentExample = {
  id: 'cmt_0mi9x2k3aq1b2c3d4e5f6g7h8', post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', parent_id: null, body: 'We need this for our EU rollout.', internal: false,
  author: { type: 'end_user' as const, id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'Grace Hopper', email: 'grace@customer.example' }, created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-22T09:30:00.000Z',
}

export const CommentCreate = t.Object({
  body: t.String({ minLength: 1, maxLength: 10_000 }),
  internal: t.Optional(t.Boolean({ description: 'A team-only note: needs the comments:internal scope with a key; never shown publicly' })),
  parent_id: t.Optional(t.String({ maxLength: 64, description: 'Reply to this comment of the same post' })),
  email: t.Optional(Email),
  end_user_id: t.Optional(t.String({ maxLength: 64 })),
}, { additionalProperties: false, $id: 'CommentCreate', examples: [{ body: 'We need this for our EU rollout.', email: 'grace@customer.example' }] })

export const CommentUpdate = t.Object({ body: t.String({ minLength: 1, maxLength: 10_000 }) }, { additionalProperties: false, $id: 'CommentUpdate', examples: [{ body: 'We need this for our EU and US rollout.' }] })

export const CommentResponse = t.Object({
  id: t.String(),
  post_id: t.String(),
  parent_id: t.Nullable(t.String()),
  body: t.String(),
  internal: t.Boolean(),
  author: AuthorResponse,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Comment', examples: [commentExample] })

export const CommentListResponse = pageEnvelope(CommentResponse, 'CommentPage', [{ items: [commentExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const CommentListQuery = t.Object({ ...PagingQuery }, { additionalProperties: false })
export const CommentIdParams = t.Object({ comment_id: t.String({ maxLength: 64, examples: ['cmt_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })
