import type { paths } from './generated/openapi.js'

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'

/** Every `METHOD /path` the server documents (generated from its routes by `npm run openapi`). */
export type DocumentedRoute = {
  [P in keyof paths]: { [M in Method]: [NonNullable<paths[P][M]>] extends [never] ? never : `${Uppercase<M>} ${P & string}` }[Method]
}[keyof paths]

/**
 * Every operation the SDK calls, as `METHOD /path` relative to `baseUrl`. Each must be a route of the
 * generated document, method, path and parameter names exactly, or this file does not compile: all
 * of the SDK's request and response types come from that document (see api-types.ts).
 * To add an operation: a line here, a method on a resource.
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
  createTrackerIssue: 'POST /posts/{post_id}/tracker-issue',

  listInbox: 'GET /workspaces/{workspace_slug}/inbox',
  setInboxReadState: 'POST /workspaces/{workspace_slug}/inbox/read',
  bulkUpdatePosts: 'POST /workspaces/{workspace_slug}/posts/bulk',
  listSavedViews: 'GET /workspaces/{workspace_slug}/views',
  createSavedView: 'POST /workspaces/{workspace_slug}/views',
  getSavedView: 'GET /workspaces/{workspace_slug}/views/{view_id}',
  updateSavedView: 'PATCH /workspaces/{workspace_slug}/views/{view_id}',
  deleteSavedView: 'DELETE /workspaces/{workspace_slug}/views/{view_id}',
  listHeldPosts: 'GET /workspaces/{workspace_slug}/moderation',
  approveHeldPost: 'POST /workspaces/{workspace_slug}/moderation/{post_id}/approve',
  rejectHeldPost: 'POST /workspaces/{workspace_slug}/moderation/{post_id}/reject',
  listBlocks: 'GET /workspaces/{workspace_slug}/moderation/blocks',
  createBlock: 'POST /workspaces/{workspace_slug}/moderation/blocks',
  deleteBlock: 'DELETE /workspaces/{workspace_slug}/moderation/blocks/{block_id}',
  listCompanies: 'GET /workspaces/{workspace_slug}/companies',
  getCompany: 'GET /workspaces/{workspace_slug}/companies/{company_id}',
  createImport: 'POST /workspaces/{workspace_slug}/imports',
  listImports: 'GET /workspaces/{workspace_slug}/imports',
  getImport: 'GET /workspaces/{workspace_slug}/imports/{import_id}',
  putCompany: 'PUT /workspaces/{workspace_slug}/companies/{company_id}',
  deleteCompany: 'DELETE /workspaces/{workspace_slug}/companies/{company_id}',
  linkCompanyUser: 'PUT /workspaces/{workspace_slug}/companies/{company_id}/users/{end_user_id}',
  unlinkCompanyUser: 'DELETE /workspaces/{workspace_slug}/companies/{company_id}/users/{end_user_id}',
  getDemandSettings: 'GET /workspaces/{workspace_slug}/demand-settings',
  getScoring: 'GET /workspaces/{workspace_slug}/scoring',
  putScoring: 'PUT /workspaces/{workspace_slug}/scoring',
  getScoreHistory: 'GET /posts/{post_id}/score-history',
  getEndUser: 'GET /workspaces/{workspace_slug}/end-users/{end_user_id}',
  exportEndUser: 'GET /workspaces/{workspace_slug}/end-users/{end_user_id}/export',
  eraseEndUser: 'DELETE /workspaces/{workspace_slug}/end-users/{end_user_id}',
  updateDemandSettings: 'PATCH /workspaces/{workspace_slug}/demand-settings',

  listChangelogEntries: 'GET /changelog',
  createChangelogEntry: 'POST /changelog',
  getChangelogEntry: 'GET /changelog/{entry_id}',
  updateChangelogEntry: 'PATCH /changelog/{entry_id}',
  deleteChangelogEntry: 'DELETE /changelog/{entry_id}',

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
  sendWebhookTestEvent: 'POST /workspaces/{workspace_slug}/webhooks/{webhook_id}/test',

  listOAuthGrants: 'GET /oauth/grants',
  deleteOAuthGrant: 'DELETE /oauth/grants/{family_id}',
} as const satisfies Record<string, DocumentedRoute>

export type RouteName = keyof typeof ROUTES
