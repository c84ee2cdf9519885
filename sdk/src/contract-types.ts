// Hand-written from CONTRACT §6–§8 and §14 for the routes the server does not document yet.
// Nothing imports these directly but api-types.ts: each operation switches to the generated
// types as soon as `npm run openapi` finds its route in the server's document.
import type { Page } from './core/pagination.js'

type Timestamp = string

export type Plan = 'free' | 'startup' | 'scale' | 'business'
export type SubscriptionStatus = 'active' | 'trialing' | 'past_due' | 'canceled' | 'unpaid' | 'incomplete' | 'none'
export type Role = 'owner' | 'admin' | 'member'
export type PostSort = 'top' | 'new' | 'trending'
export type WebhookEventType =
  | 'post.created' | 'post.updated' | 'post.deleted' | 'post.merged' | 'status.changed'
  | 'comment.created' | 'comment.deleted' | 'vote.created' | 'vote.deleted'

export interface Workspace {
  id: string
  slug: string
  name: string
  logo_url: string | null
  favicon_url: string | null
  plan: Plan
  subscription_status: SubscriptionStatus
  comped: boolean
  past_due_since: Timestamp | null
  current_period_end: Timestamp | null
  /** The caller's role; null for API keys. */
  role: Role | null
  created_at: Timestamp
}

// Board, status, label, comment and vote responses are not spelled out by the contract beyond their
// request fields; these carry those plus the id, and are widened once the server documents them.
export interface Board {
  id: string
  slug: string
  name: string
  description: string | null
  is_private: boolean
}

export interface Status {
  id: string
  name: string
}

export interface Label {
  id: string
  slug: string
  name: string
  color: string | null
}

export interface Post {
  id: string
  board: string
  title: string
  body: string | null
  /** The status name. */
  status: string | null
  labels: string[]
  votes: number
  comment_count: number
  author: unknown
  merged_into: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

/** With an API key, `email` or `end_user_id` posts on behalf of that end user; without, the key is the author. */
export interface PostCreate {
  title: string
  body?: string
  labels?: string[]
  status?: string
  email?: string
  end_user_id?: string
}

export type PostUpdate = Partial<Pick<PostCreate, 'title' | 'body' | 'labels' | 'status'>>

export interface PageQuery {
  page?: number
  /** 1–100, default 20. */
  per_page?: number
}

export interface PostListQuery extends PageQuery {
  status?: string
  label?: string
  /** Full-text search. */
  q?: string
  sort?: PostSort
}

export interface PostMerge {
  into_post_id: string
}

export interface Comment {
  id: string
  body: string
  internal: boolean
  parent_id: string | null
  author: unknown
  created_at: Timestamp
}

export interface CommentCreate {
  body: string
  internal?: boolean
  parent_id?: string
  email?: string
  end_user_id?: string
}

export type CommentUpdate = Partial<Pick<CommentCreate, 'body' | 'internal'>>

export interface Vote {
  id: string
  created_at: Timestamp
}

/** With an API key a vote needs one of them; an unknown e-mail creates the end user. */
export interface VoteToggle {
  email?: string
  end_user_id?: string
}

export interface VoteToggleResult {
  voted: boolean
  votes: number
}

export interface LabelCreate {
  name: string
  slug?: string
  color?: string
}

export interface Webhook {
  id: string
  url: string
  events: WebhookEventType[]
  description: string | null
  enabled: boolean
  created_at: Timestamp
}

/** Returned once, at creation: keep `secret` for `verifyWebhook`. */
export interface WebhookCreated extends Webhook {
  secret: string
}

export interface WebhookCreate {
  url: string
  events: WebhookEventType[]
  description?: string
}

export type WebhookUpdate = Partial<WebhookCreate> & { enabled?: boolean }

export interface WebhookLogQuery {
  /** 1–100, default 50. */
  limit?: number
  offset?: number
  success?: boolean
}

export interface WebhookDeliveryLog {
  id: string
  webhook_id: string
  event_id: string
  event_type: WebhookEventType
  attempt: number
  success: boolean
  response_status: number | null
  /** The first 4 KiB. */
  response_body: string | null
  error: string | null
  duration_ms: number
  created_at: Timestamp
}

export interface Health {
  status: 'ok' | 'degraded'
  version: string
  database: 'ok' | 'unavailable'
}

/** Fallback `query`, `body` and `response` of every operation in ROUTES, by the same name. */
export interface ContractOperations {
  getHealth: { response: Health }
  listWorkspaces: { response: Workspace[] }
  getWorkspace: { response: Workspace }
  listBoards: { response: Board[] }
  getBoard: { response: Board }
  listStatuses: { response: Status[] }
  listLabels: { response: Label[] }
  createLabel: { body: LabelCreate; response: Label }
  updateLabel: { body: Partial<LabelCreate>; response: Label }
  deleteLabel: { response: undefined }
  listPosts: { query: PostListQuery; response: Page<Post> }
  createPost: { body: PostCreate; response: Post }
  getPost: { response: Post }
  updatePost: { body: PostUpdate; response: Post }
  deletePost: { response: undefined }
  mergePost: { body: PostMerge; response: Post }
  listComments: { query: PageQuery; response: Page<Comment> }
  createComment: { body: CommentCreate; response: Comment }
  getComment: { response: Comment }
  updateComment: { body: CommentUpdate; response: Comment }
  deleteComment: { response: undefined }
  listVotes: { query: PageQuery; response: Page<Vote> }
  toggleVote: { body: VoteToggle; response: VoteToggleResult }
  listWebhooks: { response: Webhook[] }
  createWebhook: { body: WebhookCreate; response: WebhookCreated }
  updateWebhook: { body: WebhookUpdate; response: Webhook }
  deleteWebhook: { response: undefined }
  listWebhookLogs: { query: WebhookLogQuery; response: WebhookDeliveryLog[] }
  retryWebhookDelivery: { response: { status: 'queued'; log_id: string } }
}
