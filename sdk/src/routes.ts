import type { ContractOperations } from './contract-types.js'

/**
 * Every operation the SDK calls, as `METHOD /path` relative to `baseUrl` (CONTRACT §7, SPEC §4).
 * The types of each come from the generated OpenAPI types when the server documents this exact
 * method and path (parameter names included), and from `ContractOperations` until then.
 * To add an operation: a line here, its entry in ContractOperations, a method on a resource.
 */
export const ROUTES = {
  getHealth: 'GET /health',

  listWorkspaces: 'GET /workspaces',
  getWorkspace: 'GET /workspaces/{workspace_slug}',

  listBoards: 'GET /boards',
  getBoard: 'GET /boards/{board_slug}',
  listStatuses: 'GET /statuses',
  listLabels: 'GET /labels',
  createLabel: 'POST /labels',
  updateLabel: 'PATCH /labels/{label_id}',
  deleteLabel: 'DELETE /labels/{label_id}',

  listPosts: 'GET /boards/{board_slug}/posts',
  createPost: 'POST /boards/{board_slug}/posts',
  getPost: 'GET /posts/{post_id}',
  updatePost: 'PATCH /posts/{post_id}',
  deletePost: 'DELETE /posts/{post_id}',
  mergePost: 'POST /posts/{post_id}/merge',

  listComments: 'GET /posts/{post_id}/comments',
  createComment: 'POST /posts/{post_id}/comments',
  getComment: 'GET /comments/{comment_id}',
  updateComment: 'PATCH /comments/{comment_id}',
  deleteComment: 'DELETE /comments/{comment_id}',

  listVotes: 'GET /posts/{post_id}/votes',
  toggleVote: 'POST /posts/{post_id}/votes',

  listWebhooks: 'GET /workspaces/{workspace_slug}/webhooks',
  createWebhook: 'POST /workspaces/{workspace_slug}/webhooks',
  updateWebhook: 'PATCH /workspaces/{workspace_slug}/webhooks/{webhook_id}',
  deleteWebhook: 'DELETE /workspaces/{workspace_slug}/webhooks/{webhook_id}',
  listWebhookLogs: 'GET /workspaces/{workspace_slug}/webhooks/{webhook_id}/logs',
  retryWebhookDelivery: 'POST /workspaces/{workspace_slug}/webhooks/logs/{log_id}/retry',
} as const satisfies { [Name in keyof ContractOperations]: `${'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'} /${string}` }

export type RouteName = keyof typeof ROUTES
