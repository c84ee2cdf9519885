// One enum of error codes, one status each (docs/api.md#errors). Routes throw ApiError; the error plugin renders it.
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  INVALID_API_KEY: 401,
  INSUFFICIENT_SCOPE: 403,
  DASHBOARD_ONLY: 403,
  SUBSCRIPTION_INACTIVE: 403,
  FORBIDDEN: 403,
  OWNER_ONLY: 403,
  PLAN_REQUIRED: 403,
  CSRF_REJECTED: 403,
  WRITER_BLOCKED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SLUG_TAKEN: 409,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  IDEMPOTENCY_MISMATCH: 422,
  CHALLENGE_FAILED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export interface ValidationIssue {
  loc: (string | number)[]
  msg: string
  type: string
}

export class ApiError extends Error {
  readonly status: number
  /** Set on VALIDATION_ERROR raised by service rules, rendered as the 422 `detail` list. */
  issues?: ValidationIssue[]
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra top-level fields of the error body, e.g. `required_scope`. */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.status = ERROR_STATUS[code]
  }
}

export const notFound = (what: string) => new ApiError('NOT_FOUND', `${what} not found`)

export const conflict = (message: string) => new ApiError('CONFLICT', message)

export const slugTaken = (slug: string) => new ApiError('SLUG_TAKEN', `The slug "${slug}" is already taken`)

/** A chat, tracker or identity provider refused or failed; its own error goes in `detail`. */
export const upstreamError = (provider: string, detail: string) =>
  new ApiError('UPSTREAM_ERROR', `The ${provider} provider refused or failed`, { detail })

export const forbidden = (message = 'Your role does not allow this') => new ApiError('FORBIDDEN', message)

/** The codes of a 422 whose `detail` lists issues. */
export const ISSUE_CODES = ['VALIDATION_ERROR', 'IDEMPOTENCY_MISMATCH', 'CHALLENGE_FAILED'] as const satisfies readonly ErrorCode[]

/** A 422 for rules that a schema cannot express (e.g. "one of a or b"), in the HTTPValidationError shape. */
export function invalid(loc: (string | number)[], msg: string, type = 'value_error', code: (typeof ISSUE_CODES)[number] = 'VALIDATION_ERROR'): ApiError {
  const error = new ApiError(code, msg)
  error.issues = [{ loc, msg, type }]
  return error
}

export function errorBody(code: ErrorCode | string, message: string, requestId: string, detail: unknown = message, extra: Record<string, unknown> = {}) {
  return { code, message, detail, request_id: requestId, ...extra }
}
