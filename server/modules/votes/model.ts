import { t } from 'elysia'
import { Enum, Timestamp } from '../../lib/schema.ts'
import { Email } from '../auth/model.ts'
import { PagingQuery, pageEnvelope } from '../../lib/paging-schema.ts'
import { VerifiedFilter } from '../posts/model.ts'

/** The example of the `Vote` component, reused by the schemas that embed it. */
export const voteExample = { id: 'vote_0mi9x2k3aq1b2c3d4e5f6g7h8', post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', voter: { type: 'end_user' as const, id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'Grace Hopper', email: 'grace@customer.example', verified: true }, verified: true, created_at: '2026-11-22T09:30:00.000Z' }

export const VoteToggle = t.Object({
  email: t.Optional(Email),
  end_user_id: t.Optional(t.String({ maxLength: 64 })),
}, { additionalProperties: false, $id: 'VoteToggle', examples: [{ email: 'grace@customer.example' }], description: 'With a key, name the end user; with a session, leave both out to vote as yourself' })

const VERIFIED = 'False while the voter is an anonymous visitor who has not confirmed their e-mail address (true for members and identified end users); it turns true for all their votes when they confirm'

export const VoteToggleResponse = t.Object({
  voted: t.Boolean({ description: 'Whether the voter now has a vote on the post' }),
  votes: t.Integer(),
  verified: t.Boolean({ description: VERIFIED }),
}, { $id: 'VoteToggleResult', examples: [{ voted: true, votes: 13, verified: true }] })

export const VoteResponse = t.Object({
  id: t.String(),
  post_id: t.String(),
  voter: t.Object({ type: Enum(['member', 'end_user']), id: t.String(), name: t.Nullable(t.String()), email: t.Nullable(t.String()), verified: t.Boolean({ description: VERIFIED }) }),
  verified: t.Boolean({ description: `The voter's state: ${VERIFIED}` }),
  created_at: Timestamp,
}, { $id: 'Vote', examples: [voteExample] })

export const VoteListResponse = pageEnvelope(VoteResponse, 'VotePage', [{ items: [voteExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const VoteListQuery = t.Object({ ...PagingQuery, verified: t.Optional(VerifiedFilter) }, { additionalProperties: false })
