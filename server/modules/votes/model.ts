import { t } from 'elysia'
import { Enum } from '../../lib/schema.ts'
import { Email } from '../auth/model.ts'
import { PagingQuery, pageEnvelope } from '../feedback/paging.ts'
import { Timestamp } from '../user/model.ts'

export const VoteToggle = t.Object({
  email: t.Optional(Email),
  end_user_id: t.Optional(t.String({ maxLength: 64 })),
}, { additionalProperties: false, description: 'VoteToggle: with a key, name the end user; with a session, leave both out to vote as yourself' })

export const VoteToggleResponse = t.Object({ voted: t.Boolean({ description: 'Whether the voter now has a vote on the post' }), votes: t.Integer() }, { description: 'VoteToggleResponse' })

export const VoteResponse = t.Object({
  id: t.String(),
  post_id: t.String(),
  voter: t.Object({ type: Enum(['member', 'end_user']), id: t.String(), name: t.Nullable(t.String()), email: t.Nullable(t.String()) }),
  created_at: Timestamp,
}, { description: 'VoteResponse' })

export const VoteListResponse = pageEnvelope(VoteResponse, 'VoteListResponse')
export const VoteListQuery = t.Object({ ...PagingQuery }, { additionalProperties: false })
