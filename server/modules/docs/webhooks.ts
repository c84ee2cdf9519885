// The `webhooks` section of the OpenAPI document: one entry per event kind the server raises, each
// with the body a delivery carries. The kinds come from the outbox's list, so a new kind appears here
// (and in the SDK's event union) as soon as it is raised; a kind without a data schema below is
// documented with an open `data` object until it gets one.
import { toOpenAPISchema } from '@elysiajs/openapi'
import { Elysia, t, type TSchema } from 'elysia'
import { EVENT_TYPES, type EventType } from '../../events/outbox.ts'
import { Integer, Timestamp } from '../../lib/schema.ts'
import { ChangelogResponse, changelogExample } from '../changelog/model.ts'
import { CommentResponse, commentExample } from '../comments/model.ts'
import { PostResponse, postExample } from '../posts/model.ts'
import { SuggestionResponse, suggestionExample } from '../duplicates/model.ts'

const postId = postExample.id
const VoteData = t.Object({
  vote: t.Object({
    id: t.String(),
    post_id: t.String(),
    voter: t.Object({ type: t.Union([t.Literal('member'), t.Literal('end_user')]), id: t.String() }),
  }, { $id: 'VoteEventVote' }),
  votes: Integer({ description: "The post's vote count after the change" }),
})
const voteData = { vote: { id: 'vote_0mi9x2k3aq1b2c3d4e5f6g7h8', post_id: postId, voter: { type: 'end_user', id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8' } }, votes: 13 }
const CommentData = t.Object({ comment: CommentResponse, post_id: t.String() })
const TeamAuthor = t.Object({ type: t.Literal('team'), name: t.String({ description: "The member's name, or the workspace's for an API key" }) })
const PostRef = t.Object({ id: t.String(), title: t.String() })
const EndUserNotifiedData = t.Object({
  end_user: t.Object({ id: t.String(), external_id: t.Nullable(t.String()), email: t.Nullable(t.String()), locale: t.String({ description: 'The language the news is (or would be) written in' }) }),
  emailed: t.Boolean(),
  posts: t.Array(t.Object({
    post: PostRef,
    status: t.Nullable(t.Object({ from: t.String(), to: t.String(), message: t.Nullable(t.String()), author: t.Nullable(TeamAuthor) }), { description: 'The net status change of the batch' }),
    replies: t.Array(t.Object({ id: t.String(), body: t.String(), author: t.Nullable(t.Object({ type: t.String(), name: t.String() })) }), { description: 'Public team replies' }),
    merged_into: t.Nullable(PostRef, { description: 'The post was merged into this one, which they now follow' }),
  })),
})

/** What each kind carries in `data`, with an example, and when it is raised. */
const EVENTS: Partial<Record<EventType, { when: string; data: TSchema; example: unknown }>> = {
  'post.created': { when: 'A post was created, by a member, an API key or an end user.', data: t.Object({ post: PostResponse }), example: { post: postExample } },
  'post.updated': {
    when: 'A post was edited (title, body, status, board, labels or owner); `previous` is the post before the change.',
    data: t.Object({ post: PostResponse, previous: PostResponse }),
    example: { post: { ...postExample, title: 'Dark mode everywhere' }, previous: postExample },
  },
  'post.deleted': { when: 'A post was deleted; `post` is its last state.', data: t.Object({ post: PostResponse }), example: { post: postExample } },
  'post.merged': {
    when: '`post` was merged into `into`, which received its votes and comments.',
    data: t.Object({ post: PostResponse, into: PostResponse }),
    example: { post: { ...postExample, merged_into: 'post_0mi9x2k3aq1b2c3d4e5f6g7h9', votes: 0, comment_count: 0 }, into: { ...postExample, id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h9' } },
  },
  'status.changed': {
    when: "A post's status changed (raised beside `post.updated`).",
    data: t.Object({
      post: PostResponse,
      from_status: t.String({ description: 'Status name before' }),
      to_status: t.String({ description: 'Status name after' }),
      message: t.Optional(t.Nullable(t.String({ description: "The team's `status_message`, told to the post's subscribers" }))),
      author: t.Optional(t.Nullable(TeamAuthor)),
    }),
    example: { post: postExample, from_status: 'Open', to_status: 'Planned', message: 'Scheduled for March.', author: { type: 'team', name: 'Ada Lovelace' } },
  },
  'comment.created': { when: 'A comment or internal note was added to a post.', data: CommentData, example: { comment: commentExample, post_id: postId } },
  'comment.deleted': { when: 'A comment was deleted; `comment` is its last state.', data: CommentData, example: { comment: commentExample, post_id: postId } },
  'vote.created': { when: 'A vote was cast on a post.', data: VoteData, example: voteData },
  'vote.deleted': { when: 'A vote was taken back.', data: VoteData, example: { ...voteData, votes: 12 } },
  'end_user.notified': {
    when: "An end user was told what happened to posts they follow (one per e-mail batch, docs/notifications.md): `emailed` false when no e-mail went out (an identified user of a workspace that does not e-mail them, or an address that bounced), so your product can tell them itself. Updates that cancelled out (a status change undone within the batch) raise nothing.",
    data: EndUserNotifiedData,
    example: { end_user: { id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8', external_id: 'user-1234', email: 'grace@customer.example', locale: 'de' }, emailed: true, posts: [{ post: { id: postId, title: 'Dark mode' }, status: { from: 'Open', to: 'Planned', message: 'Scheduled for March.', author: { type: 'team', name: 'Acme' } }, replies: [], merged_into: null }] },
  },
  'end_user.erased': {
    when: 'An end user was erased (DELETE /workspaces/{workspace_slug}/end-users/{end_user_id}): the data carries their id and how their posts and comments were handled, nothing else, so your systems can forget them too. Earlier events that named them now carry the deleted author instead.',
    data: t.Object({ end_user: t.Object({ id: t.String() }), content: t.Union([t.Literal('anonymise'), t.Literal('delete')]) }),
    example: { end_user: { id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8' }, content: 'anonymise' },
  },
  'post.duplicate_suggested': {
    when: 'A new post looked like an existing one (score 0.4 or more): the suggestion is open in GET /workspaces/{workspace_slug}/duplicate-suggestions.',
    data: t.Object({ suggestion: SuggestionResponse }),
    example: { suggestion: suggestionExample },
  },
  'changelog.published': {
    when: 'A changelog entry was published; its linked posts were moved to the first `complete` status (each raising `status.changed`) in the same transaction.',
    data: t.Object({ entry: ChangelogResponse }),
    example: { entry: changelogExample },
  },
}

/** `post.created` → `PostCreatedEvent`. */
export const eventSchemaName = (type: string) => `${type.split(/[._-]/).map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}Event`

function eventSchema(type: EventType) {
  const known = EVENTS[type]
  const data = known?.data ?? t.Record(t.String(), t.Unknown(), { description: 'The affected resource' })
  const example = { id: 'evt_0mi9x2k3aq1b2c3d4e5f6g7h8', type, timestamp: '2026-11-22T09:30:00.000Z', workspace_id: 'ws_0mi9x2k3aq1b2c3d4e5f6g7h8', data: known?.example ?? {} }
  return t.Object({
    id: t.String({ description: 'The event id; the same on every attempt, and sent as `webhook-id`' }),
    type: t.Literal(type),
    timestamp: Timestamp,
    workspace_id: t.String(),
    data,
  }, { $id: eventSchemaName(type), examples: [example] })
}

const DELIVERY = 'Signed per Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` with the endpoint secret), plus `X-Chorus-Event`. Answer 2xx within 10 s; anything else is retried with backoff, and 410 disables the endpoint.'

/**
 * The `webhooks` map of the document: an operation per event kind, its body the delivered event. The
 * bodies go through the same generator as the routes' (as bodies of throwaway routes), so a schema
 * shared with a route, such as `Post`, comes out identical and is named once.
 */
export function webhookOperations() {
  const app = new Elysia()
  EVENT_TYPES.forEach((type, index) => app.post(`/event${index}`, () => null, { body: eventSchema(type) }))
  const generated = toOpenAPISchema(app, {}, undefined, undefined, '3.1.0').paths as Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>
  return Object.fromEntries(EVENT_TYPES.map((type, index) => [type, {
    post: {
      operationId: `webhook_${type.replace(/\W/g, '_')}`,
      tags: ['Webhook events'],
      summary: `${type} delivery`,
      description: `${EVENTS[type]?.when ?? `The \`${type}\` event.`} ${DELIVERY}`,
      requestBody: { required: true, content: { 'application/json': { schema: generated[`/event${index}`]!.post.requestBody.content['application/json']!.schema } } },
      responses: { '2XX': { description: 'Received; any 2xx counts' } },
    },
  }]))
}
