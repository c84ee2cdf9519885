import { t } from 'elysia'
import { Enum, Integer, Timestamp } from '../../lib/schema.ts'
import { Email } from '../auth/model.ts'
import { PagingQuery, pageEnvelope } from '../../lib/paging-schema.ts'
import { TITLE_TEXT_RULE } from '../../lib/text.ts'
import { LANGUAGES } from '../../lib/language.ts'

const TITLE_DESCRIPTION = `The post's heading. ${TITLE_TEXT_RULE}`

/** The example of the `Post` component, reused by the schemas that embed it. */
export const postExample = {
  id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', board: 'ideas', board_id: 'brd_0mi9x2k3aq1b2c3d4e5f6g7h8', title: 'Dark mode', body: 'Our support team works nights.',
  status: 'Planned', status_id: 'sts_0mi9x2k3aq1b2c3d4e5f6g7h8', status_kind: 'planned' as const, labels: ['ui'], votes: 12, comment_count: 3,
  author: { type: 'end_user' as const, id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'Grace Hopper', email: 'grace@customer.example' }, verified: true,
  owner_user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', merged_into: null, tracker_issue: null, language: 'en' as const, created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-23T14:05:12.345Z',
  demand: { voters: 12, verified_voters: 10, companies: 4, mrr: 1250000, weighted: 23 }, score: 42.5, factors: { reach: 500, impact: 2, confidence: 0.85, effort: 20 },
}

export const AuthorResponse = t.Object({
  type: Enum(['member', 'end_user', 'api_key', 'team', 'deleted'], { description: '`team`: a comment written by a member (their name) or by an API key for the team (the workspace\'s name; a key\'s own name is never shown). Shown with a team badge in the widget, portal and e-mail' }),
  id: t.Nullable(t.String()),
  name: t.String(),
  email: t.Nullable(t.String({ description: 'Hidden (null) on public routes' })),
}, { $id: 'Author', examples: [{ type: 'end_user', id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'Grace Hopper', email: 'grace@customer.example' }] })

const onBehalf = {
  email: t.Optional(Email),
  end_user_id: t.Optional(t.String({ maxLength: 64, description: 'Act for this end user; with `email` instead, an unknown address creates the end user' })),
}

export const StatusRef = t.String({ minLength: 1, maxLength: 64, description: 'A status name (case-insensitive) or id' })
const LabelSlugs = t.Array(t.String({ minLength: 1, maxLength: 48 }), { maxItems: 20, uniqueItems: true, description: 'Label slugs' })

/** The language a post is indexed in (docs/duplicates.md#languages). */
export const PostLanguage = Enum([...LANGUAGES], { description: 'The language the post is written in, which decides how it is searched (stemming, stop words): en, de, fr, es; ja, ar and he are matched word by word (Japanese by character pairs)' })
/** A writer's BCP 47 tag (`de`, `de-CH`); one not ours is ignored and the language is detected. */
export const Locale = t.String({ minLength: 1, maxLength: 35, description: "The writer's language (BCP 47, e.g. the widget's locale `de` or `de-CH`): the post's `language` when it is one of en, de, fr, es, ja, ar, he. Without it, the request's `Content-Language`, else detected from the text" })

export const PostCreate = t.Object({
  title: t.String({ minLength: 1, maxLength: 200, description: TITLE_DESCRIPTION }),
  body: t.Optional(t.String({ maxLength: 20_000 })),
  labels: t.Optional(LabelSlugs),
  status: t.Optional(StatusRef),
  locale: t.Optional(Locale),
  ...onBehalf,
}, { additionalProperties: false, $id: 'PostCreate', examples: [{ title: 'Dark mode', body: 'Our support team works nights.', labels: ['ui'], email: 'grace@customer.example' }] })

export const PostUpdate = t.Object({
  title: t.Optional(t.String({ minLength: 1, maxLength: 200, description: TITLE_DESCRIPTION })),
  body: t.Optional(t.String({ maxLength: 20_000 })),
  status: t.Optional(StatusRef),
  labels: t.Optional(LabelSlugs),
  board: t.Optional(t.String({ minLength: 2, maxLength: 48, description: 'Move the post to this board (slug)' })),
  owner_user_id: t.Optional(t.Nullable(t.String({ maxLength: 64, description: 'The member responsible for the post, or null' }))),
  status_message: t.Optional(t.String({ minLength: 1, maxLength: 5000, description: "With `status`: the team's word to the post's subscribers, carried by `status.changed` and its e-mail. Ignored when the status does not change" })),
  factors: t.Optional(t.Record(t.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' }), t.Nullable(t.Number({ minimum: -1e12, maximum: 1e12 })), {
    maxProperties: 20, description: 'Scoring inputs to set (a number) or clear (null); the others stay. Recomputes `score`, keeps a history and raises `score.changed` when it changes',
  })),
  language: t.Optional(PostLanguage),
}, { additionalProperties: false, minProperties: 1, $id: 'PostUpdate', examples: [{ status: 'Planned', labels: ['ui', 'mobile'], status_message: 'Scheduled for the March release.' }] })

export const PostMerge = t.Object({ into_post_id: t.String({ maxLength: 64 }) }, { additionalProperties: false, $id: 'PostMerge', examples: [{ into_post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8' }] })

export const TrackerIssueResponse = t.Object({
  id: t.String({ description: "The tracker's issue id" }),
  identifier: t.String({ description: 'The human-readable key, e.g. ENG-42' }),
  url: t.String({ description: 'The issue in the tracker' }),
}, { $id: 'TrackerIssue', examples: [{ id: '9cfb482a-81e3-4154-b5b9-2c805e70a02d', identifier: 'ENG-42', url: 'https://linear.app/acme/issue/ENG-42' }] })

export const DemandResponse = t.Object({
  voters: Integer({ description: 'Every vote (the same as `votes`)' }),
  verified_voters: Integer({ description: 'Votes of members, keys\' named end users, identified end users and confirmed e-mail addresses' }),
  companies: Integer({ description: 'Distinct companies among the verified voters' }),
  mrr: t.Nullable(Integer({ description: "The sum of those companies' MRR in minor units of the workspace's revenue currency, each company once; null for a member when the workspace shows revenue to admins only" })),
  weighted: t.Number({ description: 'Verified votes weighed by plan (settings `plan_weights`, default weight 1)' }),
}, { $id: 'Demand', description: 'Who wants the post, from verified votes only (docs/demand.md). Team reads only: absent on public routes', examples: [postExample.demand] })

export const Factors = t.Record(t.String({ pattern: '^[a-z][a-z0-9_]{0,31}$' }), t.Number({ minimum: -1e12, maximum: 1e12 }), {
  maxProperties: 20, $id: 'Factors', description: 'Scoring inputs: `reach`, `impact`, `confidence`, `effort` (RICE), `value` (value/effort) and any names a custom formula uses', examples: [postExample.factors],
})

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
  votes: Integer(),
  comment_count: Integer({ description: 'Public comments; internal notes are not counted' }),
  author: AuthorResponse,
  verified: t.Boolean({ description: "False while the author is an anonymous visitor who has not confirmed their e-mail address (it turns true for all their posts when they do); posts by members, keys and identified end users are true" }),
  voted: t.Optional(t.Boolean({ description: 'Public reads with an end-user session (`Authorization: Bearer`) only: whether that end user has voted for the post. Absent without a session and on the other routes' })),
  owner_user_id: t.Nullable(t.String(), { description: 'The member responsible for the post; hidden (null) on public routes' }),
  merged_into: t.Nullable(t.String()),
  language: PostLanguage,
  tracker_issue: t.Nullable(TrackerIssueResponse, { description: 'The issue made from this post in the connected tracker (POST /posts/{post_id}/tracker-issue); null before, and on public routes' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  demand: t.Optional(DemandResponse),
  score: t.Optional(t.Nullable(t.Number({ description: "The workspace's scoring model over `factors` and `demand` (team reads only); null until the factors it needs are set" }))),
  moderation: t.Optional(t.Nullable(t.Literal('held', { description: '`held`: waiting in the moderation queue (docs/moderation.md), on no public read and announced by no event until approved; null once published. Team reads, and the answer to the write that was held ("awaiting review"); absent from other public reads' }))),
  factors: t.Optional(Factors),
}, { $id: 'Post', examples: [postExample] })

/** `verified=true|false` on lists: what (un)confirmed anonymous e-mail identities wrote or cast. */
export const VerifiedFilter = Enum(['true', 'false'], { description: '`false`: only what unconfirmed anonymous visitors wrote; `true`: everything else' })
export const verifiedFilter = (value: 'true' | 'false' | undefined) => (value === undefined ? undefined : value === 'true')

export const PostListQuery = t.Object({
  ...PagingQuery,
  status: t.Optional(StatusRef),
  label: t.Optional(t.String({ maxLength: 48, description: 'Label slug' })),
  q: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Full-text search over title and body' })),
  sort: t.Optional(Enum(['top', 'new', 'trending'], {
    description: '`new` (default; with `q`, the 500 newest matches by relevance first): newest first. `top`: most votes. `trending`: votes halved per day of the post\'s age (votes × 2^(−age in days)), newest first on ties',
  })),
  verified: t.Optional(VerifiedFilter),
}, { additionalProperties: false })

const TEAM_SORTS = '`mrr`: the most revenue (`demand.mrr`) first; `companies`: the most companies first; `score`: the highest score first, unscored last'
/** The team's list: the public one's query plus the demand sorts and filters. */
export const TeamPostListQuery = t.Object({
  ...PostListQuery.properties,
  sort: t.Optional(Enum(['top', 'new', 'trending', 'mrr', 'companies', 'score'], { description: `${PostListQuery.properties.sort.description}. ${TEAM_SORTS}` })),
  company: t.Optional(t.String({ minLength: 1, maxLength: 128, description: 'Only posts this company (external id or `co_` id) voted for with a verified vote' })),
  min_mrr: t.Optional(t.Integer({ minimum: 0, maximum: 10_000_000_000_000, description: 'Only posts whose `demand.mrr` is at least this (minor units)' })),
}, { additionalProperties: false })

export const PostMergeResult = t.Object({ post: PostResponse, into: PostResponse }, { $id: 'PostMergeResult', examples: [{ post: { ...postExample, id: 'post_0mi9x2k3aq9z8y7x6w5v4u3t2', votes: 0, merged_into: postExample.id }, into: postExample }] })

export const PostListResponse = pageEnvelope(PostResponse, 'PostPage', [{ items: [postExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const PostIdParams = t.Object({ post_id: t.String({ maxLength: 64, examples: ['post_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })
export const BoardPostsParams = t.Object({ board_slug: t.String({ maxLength: 64, examples: ['ideas'] }) })
