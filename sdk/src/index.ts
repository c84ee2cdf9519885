export { Chorus, type CallSpec, type ChorusOptions } from './client.js'
export type * from './api-types.js'
export type { PostSort, Plan, Role, SubscriptionStatus, WebhookEventType } from './contract-types.js'
export {
  APIError,
  AuthenticationError,
  BadRequestError,
  ChorusError,
  ConflictError,
  ConnectionError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ValidationError,
  WebhookVerificationError,
  type ValidationIssue,
} from './core/errors.js'
export { PagePromise, type Page } from './core/pagination.js'
export type { FetchLike, HttpMethod, RequestOptions, RequestSpec } from './core/request.js'
export type { components, operations, paths } from './generated/openapi.js'
export { ROUTES, type RouteName } from './routes.js'
export { verifyWebhook, type VerifyWebhookOptions, type WebhookEvent, type WebhookHeaders } from './verify-webhook.js'
