import { t } from 'elysia'
import { Enum, Integer, Timestamp } from '../../lib/schema.ts'
import { PagingQuery, pageEnvelope } from '../../lib/paging-schema.ts'
import { PostResponse, StatusRef, postExample } from '../posts/model.ts'

const Bool = Enum(['true', 'false'])

/** The inbox's filters and sort: the query of GET …/inbox, and what a saved view keeps. */
export const inboxFilterFields = {
  board: t.Optional(t.String({ minLength: 1, maxLength: 48, description: 'Only this board (slug)' })),
  status: t.Optional(StatusRef),
  label: t.Optional(t.String({ minLength: 1, maxLength: 48, description: 'Label slug' })),
  owner: t.Optional(t.String({ minLength: 1, maxLength: 64, description: '`me` (the signed-in member; not for API keys), `unassigned`, or a member\'s user id' })),
  unanswered: t.Optional(Bool),
  stale_days: t.Optional(t.Integer({ minimum: 1, maximum: 3650, description: 'Only posts with no change and no comment for at least this many days' })),
  verified: t.Optional(Bool),
  q: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Full-text search over title and body (websearch syntax)' })),
  sort: t.Optional(Enum(['new', 'top', 'trending', 'oldest_unanswered'], {
    description: '`new` (default): newest first. `top`: most votes. `trending`: votes halved per day of age. `oldest_unanswered`: posts the team has not answered in public, oldest first',
  })),
}

export const InboxQuery = t.Object({ ...PagingQuery, ...inboxFilterFields }, { additionalProperties: false })

export const InboxPost = t.Object({
  ...PostResponse.properties,
  unread: t.Nullable(t.Boolean({ description: 'For a member (session or OAuth token): true when the post is new to them or changed or got a comment since they last read it. Null for API keys' })),
}, { $id: 'InboxPost', examples: [{ ...postExample, unread: true }] })

export const InboxPage = pageEnvelope(InboxPost, 'InboxPage', [{ items: [{ ...postExample, unread: true }], page: 1, per_page: 20, total: 1, total_pages: 1 }])

// ----- Saved views

/** The filters a view keeps: the inbox query's names and types (strings, as in the query). */
export const ViewFilters = t.Object({
  ...inboxFilterFields,
  stale_days: t.Optional(Integer({ minimum: 1, maximum: 3650 })),
}, { additionalProperties: false, description: 'Query parameters of GET /workspaces/{workspace_slug}/inbox', $id: 'InboxFilters', examples: [{ status: 'Open', owner: 'unassigned', sort: 'oldest_unanswered' }] })

const viewExample = { id: 'view_0mi9x2k3aq1b2c3d4e5f6g7h8', name: 'Unanswered bugs', filters: { board: 'bugs', unanswered: 'true', sort: 'oldest_unanswered' }, shared: true, owner_user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-22T09:30:00.000Z' }

export const SavedView = t.Object({
  id: t.String(),
  name: t.String(),
  filters: ViewFilters,
  shared: t.Boolean({ description: 'Shared views are seen by every member (and keys); the others only by their owner' }),
  owner_user_id: t.Nullable(t.String({ description: 'The member who made it; null for views made with an API key' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'SavedView', examples: [viewExample] })

export const SavedViewList = t.Object({ items: t.Array(SavedView) }, { $id: 'SavedViewList', examples: [{ items: [viewExample] }] })

export const SavedViewCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 80 }),
  filters: t.Optional(ViewFilters),
  shared: t.Optional(t.Boolean({ description: 'Default false for members; views made with an API key are always shared' })),
}, { additionalProperties: false, $id: 'SavedViewCreate', examples: [{ name: 'Unanswered bugs', filters: { board: 'bugs', unanswered: 'true', sort: 'oldest_unanswered' }, shared: true }] })

export const SavedViewUpdate = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 80 })),
  filters: t.Optional(ViewFilters),
  shared: t.Optional(t.Boolean()),
}, { additionalProperties: false, minProperties: 1, $id: 'SavedViewUpdate', examples: [{ shared: false }] })

export const ViewParams = t.Object({ workspace_slug: t.String({ maxLength: 64, examples: ['acme'] }), view_id: t.String({ maxLength: 64, examples: ['view_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

// ----- Read state

export const ReadStateUpdate = t.Object({
  post_ids: t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: 500, uniqueItems: true }),
  read: t.Boolean({ description: 'true marks the posts read now; false marks them unread' }),
}, { additionalProperties: false, $id: 'ReadStateUpdate', examples: [{ post_ids: ['post_0mi9x2k3aq1b2c3d4e5f6g7h8'], read: true }] })

export const ReadStateResult = t.Object({
  items: t.Array(t.Object({ post_id: t.String(), unread: t.Boolean() })),
}, { $id: 'ReadStateResult', examples: [{ items: [{ post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', unread: false }] }] })

// ----- Bulk

export const MAX_BULK_POSTS = 500

export const BulkRequest = t.Object({
  post_ids: t.Array(t.String({ maxLength: 64 }), { minItems: 1, maxItems: MAX_BULK_POSTS, uniqueItems: true, description: `1 to ${MAX_BULK_POSTS} posts of the workspace` }),
  status: t.Optional(StatusRef),
  status_message: t.Optional(t.String({ minLength: 1, maxLength: 5000, description: "Sent with the status change to the posts' voters (needs `status`)" })),
  add_labels: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 48 }), { maxItems: 20, uniqueItems: true, description: 'Label slugs to add' })),
  remove_labels: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 48 }), { maxItems: 20, uniqueItems: true, description: 'Label slugs to remove' })),
  owner_user_id: t.Optional(t.Nullable(t.String({ maxLength: 64, description: 'An active member, or null to unassign' }))),
  board_slug: t.Optional(t.String({ minLength: 2, maxLength: 48, description: 'Move the posts to this board' })),
  merge_into_post_id: t.Optional(t.String({ maxLength: 64, description: 'Merge every post into this one (it must not be among post_ids); alone, no other action' })),
  delete: t.Optional(t.Literal(true, { description: 'Delete the posts; alone, no other action' })),
}, { additionalProperties: false, $id: 'BulkPostsRequest', examples: [{ post_ids: ['post_0mi9x2k3aq1b2c3d4e5f6g7h8', 'post_0mi9x2k3aq9z8y7x6w5v4u3t2'], status: 'Planned', status_message: 'On the roadmap for Q1', add_labels: ['mobile'] }] })

const BulkItem = t.Object({
  post_id: t.String(),
  ok: t.Boolean(),
  error: t.Nullable(t.Object({ code: t.String(), message: t.String() })),
})

export const BulkResult = t.Object({ results: t.Array(BulkItem) }, {
  $id: 'BulkPostsResult',
  examples: [{ results: [{ post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', ok: true, error: null }, { post_id: 'post_0mi9x2k3aq9z8y7x6w5v4u3t2', ok: true, error: null }] }],
})
