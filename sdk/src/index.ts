export { Chorus, type CallSpec, type ChorusOptions } from './client.js'
export type * from './api-types.js'
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
  type ApiErrorCode,
  type ErrorCode,
  type SdkErrorCode,
  type ValidationIssue,
} from './core/errors.js'
export { PagePromise, type Page } from './core/pagination.js'
export type { FetchLike, HttpMethod, RequestOptions, RequestSpec, ResponseMeta, WithResponse } from './core/request.js'
export type { components, operations, paths, webhooks } from './generated/openapi.js'
export { VERSION } from './version.js'
export { ROUTES, type DocumentedRoute, type RouteName } from './routes.js'
export { verifyWebhook, type VerifyWebhookOptions, type WebhookHeaders } from './verify-webhook.js'
