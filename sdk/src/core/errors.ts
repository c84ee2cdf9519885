import type { components } from '../generated/openapi.js'

/** The API's error codes, generated from the server's enum (OpenAPI component `ErrorCode`). */
export type ApiErrorCode = components['schemas']['ErrorCode']

/**
 * Codes the SDK sets itself when no error body says otherwise: no response (`TIMEOUT`,
 * `CONNECTION_ERROR`), a body without a code (`HTTP_<status>`), `WORKSPACE_UNKNOWN`, and
 * `WEBHOOK_VERIFICATION_FAILED`.
 */
export type SdkErrorCode = 'TIMEOUT' | 'CONNECTION_ERROR' | 'WORKSPACE_UNKNOWN' | 'WEBHOOK_VERIFICATION_FAILED' | `HTTP_${number}`

export type ErrorCode = ApiErrorCode | SdkErrorCode

/** One issue of a 422 VALIDATION_ERROR (FastAPI's HTTPValidationError item). */
export type ValidationIssue = components['schemas']['ValidationIssue']

export interface ChorusErrorInit {
  status?: number | null
  code: ErrorCode
  requestId?: string | null
  detail?: unknown
  headers?: Headers | null
  body?: unknown
  cause?: unknown
}

/** Base of every error the SDK throws; `instanceof ChorusError` catches them all. */
export class ChorusError extends Error {
  override readonly name: string = 'ChorusError'
  /** HTTP status, or null when no response arrived (network failure, webhook verification). */
  readonly status: number | null
  /** The API's machine-readable code (`NOT_FOUND`, `INSUFFICIENT_SCOPE`, ...), or the SDK's own for local failures. */
  readonly code: ErrorCode
  /** `request_id` of the error body (or the `X-Request-Id` header): quote it when asking for support. */
  readonly requestId: string | null
  readonly detail: unknown
  readonly headers: Headers | null
  /** The parsed error body as the server sent it, extra fields included. */
  readonly body: unknown

  constructor(message: string, init: ChorusErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    this.status = init.status ?? null
    this.code = init.code
    this.requestId = init.requestId ?? null
    this.detail = init.detail ?? message
    this.headers = init.headers ?? null
    this.body = init.body ?? null
  }
}

/** 400, 413, 415 and any other 4xx without a class of its own. */
export class BadRequestError extends ChorusError {
  override readonly name: string = 'BadRequestError'
}

/** 401: the API key is missing, unknown, malformed or revoked. */
export class AuthenticationError extends ChorusError {
  override readonly name: string = 'AuthenticationError'
}

/** 403: missing scope, dashboard-only area, inactive subscription or role. */
export class PermissionError extends ChorusError {
  override readonly name: string = 'PermissionError'
  /** Set on `INSUFFICIENT_SCOPE`: the scope the key lacks. */
  readonly requiredScope: string | null

  constructor(message: string, init: ChorusErrorInit) {
    super(message, init)
    const scope = (init.body as { required_scope?: unknown } | null)?.required_scope
    this.requiredScope = typeof scope === 'string' ? scope : null
  }
}

export class NotFoundError extends ChorusError {
  override readonly name: string = 'NotFoundError'
}

/** 409: `SLUG_TAKEN`, or `CONFLICT` (also a duplicate request while the first with its Idempotency-Key still runs). */
export class ConflictError extends ChorusError {
  override readonly name: string = 'ConflictError'
}

/** 422: `VALIDATION_ERROR` (with `issues`) or `IDEMPOTENCY_MISMATCH`. */
export class ValidationError extends ChorusError {
  override readonly name: string = 'ValidationError'
  /** The `detail` list; empty when the server explained in prose (e.g. IDEMPOTENCY_MISMATCH). */
  readonly issues: ValidationIssue[]

  constructor(message: string, init: ChorusErrorInit) {
    super(message, init)
    this.issues = Array.isArray(init.detail) ? (init.detail as ValidationIssue[]) : []
  }
}

/** 429, after the SDK's own retries ran out or the wait asked for was too long. */
export class RateLimitError extends ChorusError {
  override readonly name: string = 'RateLimitError'
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | null

  constructor(message: string, init: ChorusErrorInit & { retryAfter: number | null }) {
    super(message, init)
    this.retryAfter = init.retryAfter
  }
}

/** 5xx: the server failed; retried automatically before it reaches you. */
export class APIError extends ChorusError {
  override readonly name: string = 'APIError'
}

/** No response: DNS, refused or dropped connection, or the `timeoutMs` budget (code `TIMEOUT`). */
export class ConnectionError extends ChorusError {
  override readonly name: string = 'ConnectionError'
}

/** `verifyWebhook` refused a delivery: do not trust its body. */
export class WebhookVerificationError extends ChorusError {
  override readonly name: string = 'WebhookVerificationError'

  constructor(message: string) {
    super(message, { code: 'WEBHOOK_VERIFICATION_FAILED' })
  }
}

/**
 * Seconds from a `Retry-After` header: delay-seconds or an HTTP date. Fractions are accepted so
 * test servers can ask for short waits; anything unreadable or negative is ignored.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null
  const seconds = Number(value)
  if (value.trim() !== '' && Number.isFinite(seconds)) return seconds >= 0 ? seconds : null
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, (date - now) / 1000)
}

/** The typed error for a non-2xx response whose body was already read (`body` is the parsed JSON, or the text). */
export function errorFromResponse(response: Response, body: unknown): ChorusError {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  const message = typeof fields.message === 'string' ? fields.message : `HTTP ${response.status}${typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''}`
  const init: ChorusErrorInit = {
    status: response.status,
    // A server newer than this SDK may send a code the union lacks; it is passed through as sent.
    code: typeof fields.code === 'string' ? (fields.code as ErrorCode) : `HTTP_${response.status}`,
    requestId: typeof fields.request_id === 'string' ? fields.request_id : response.headers.get('x-request-id'),
    detail: 'detail' in fields ? fields.detail : message,
    headers: response.headers,
    body,
  }
  switch (response.status) {
    case 401: return new AuthenticationError(message, init)
    case 403: return new PermissionError(message, init)
    case 404: return new NotFoundError(message, init)
    case 409: return new ConflictError(message, init)
    case 422: return new ValidationError(message, init)
    case 429: return new RateLimitError(message, { ...init, retryAfter: parseRetryAfter(response.headers.get('retry-after')) })
  }
  return response.status >= 500 ? new APIError(message, init) : new BadRequestError(message, init)
}
