import { t } from 'elysia'
import { Enum, Integer, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'
import { CommentResponse, commentExample } from '../comments/model.ts'
import { CONTENT_MODES } from '../erasure/end-user.ts'
import { PostResponse, postExample } from '../posts/model.ts'
import { EndUserResponse, endUserExample } from './model.ts'

export const EndUserParams = t.Object({
  ...WorkspaceSlugParams.properties,
  end_user_id: t.String({ minLength: 1, maxLength: 255, description: "The `eu_` id, or your own id for the person (the `sub` of your identify token)", examples: ['user-1234'] }),
})

export const EraseQuery = t.Object({
  content: t.Optional(Enum(CONTENT_MODES, { description: '`anonymise` (default): their posts and comments stay, by "Deleted user", with their address and name taken out of the text, so other people\'s votes and replies survive. `delete`: their posts (with everything on them) and comments go' })),
}, { additionalProperties: false })

const CompanyRef = t.Object({ id: t.String(), external_id: t.String(), name: t.String() })
const companyRefExample = { id: 'co_0mi9x2k3aq1b2c3d4e5f6g7h8', external_id: 'customer-inc', name: 'Customer Inc' }

const recordFields = {
  ...EndUserResponse.properties,
  company: t.Nullable(t.String({ description: 'The free-text `company` of the identify token, when it was a name' })),
  locale: t.Nullable(t.String({ description: 'The language of their e-mail (their last public write)' })),
  companies: t.Array(CompanyRef, { description: 'The companies they belong to' }),
  updated_at: Timestamp,
}
const recordExample = { ...endUserExample, company: null, locale: 'en', companies: [companyRefExample], updated_at: '2026-11-23T10:00:00.000Z' }

export const EndUserRecord = t.Object({
  ...recordFields,
  counts: t.Object({ posts: Integer({ minimum: 0 }), comments: Integer({ minimum: 0 }), votes: Integer({ minimum: 0 }) }),
}, { $id: 'EndUserRecord', description: 'One end user as the team sees them, with what they wrote and voted for counted', examples: [{ ...recordExample, counts: { posts: 2, comments: 5, votes: 9 } }] })

export const EndUserExport = t.Object({
  format: t.Literal('chorus-end-user-export'),
  version: Integer({ description: 'Export format version; 1 today' }),
  exported_at: Timestamp,
  end_user: t.Object({
    ...recordFields,
    verified_at: t.Nullable(Timestamp),
    confirmation_sent_at: t.Nullable(Timestamp),
    email_bounced_at: t.Nullable(Timestamp),
    notifications_off_at: t.Nullable(Timestamp),
    changelog_unsubscribed_at: t.Nullable(Timestamp),
  }),
  posts: t.Array(PostResponse, { description: 'Posts they wrote, merged ones included' }),
  comments: t.Array(CommentResponse, { description: 'Comments they wrote' }),
  votes: t.Array(t.Object({ post_id: t.String(), post_title: t.String(), created_at: Timestamp })),
  subscriptions: t.Array(t.Object({ post_id: t.String(), reason: t.String(), unsubscribed_at: t.Nullable(Timestamp), created_at: Timestamp }), { description: 'Posts whose updates they follow, and why' }),
  sessions: t.Array(t.Object({
    kind: t.Literal('email_confirmation'),
    created_at: Timestamp, expires_at: Timestamp, confirmed_at: t.Nullable(Timestamp), claimed_at: t.Nullable(Timestamp),
  }), { description: 'What is stored about their sign-ins: the e-mail confirmations they asked for. Widget sessions themselves are signed tokens that are not stored' }),
}, {
  $id: 'EndUserExport',
  description: 'Everything Chorus stores about one end user of the workspace',
  examples: [{
    format: 'chorus-end-user-export', version: 1, exported_at: '2026-11-28T10:00:00.000Z',
    end_user: { ...recordExample, verified_at: '2026-11-22T09:30:00.000Z', confirmation_sent_at: null, email_bounced_at: null, notifications_off_at: null, changelog_unsubscribed_at: null },
    posts: [postExample], comments: [commentExample], votes: [{ post_id: postExample.id, post_title: postExample.title, created_at: '2026-11-22T09:31:00.000Z' }],
    subscriptions: [{ post_id: postExample.id, reason: 'author', unsubscribed_at: null, created_at: '2026-11-22T09:30:00.000Z' }],
    sessions: [],
  }],
})

export const ErasureReceipt = t.Object({
  status: t.Literal('erased'),
  id: t.String(),
  content: Enum(CONTENT_MODES),
  votes: Integer({ minimum: 0, description: 'Votes removed (demand recomputed)' }),
  posts: Integer({ minimum: 0, description: 'Posts deleted, or kept without their name' }),
  comments: Integer({ minimum: 0, description: 'Comments deleted, or kept without their name' }),
}, { $id: 'EndUserErasure', examples: [{ status: 'erased', id: endUserExample.id, content: 'anonymise', votes: 9, posts: 2, comments: 5 }] })
