import { t } from 'elysia'
import { Integer } from './lib/schema.ts'

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
const ISSUE_CODES = ['VALIDATION_ERROR', 'IDEMPOTENCY_MISMATCH', 'CHALLENGE_FAILED'] as const satisfies readonly ErrorCode[]

/** A 422 for rules that a schema cannot express (e.g. "one of a or b"), in the HTTPValidationError shape. */
export function invalid(loc: (string | number)[], msg: string, type = 'value_error', code: (typeof ISSUE_CODES)[number] = 'VALIDATION_ERROR'): ApiError {
  const error = new ApiError(code, msg)
  error.issues = [{ loc, msg, type }]
  return error
}

export function errorBody(code: ErrorCode | string, message: string, requestId: string, detail: unknown = message, extra: Record<string, unknown> = {}) {
  return { code, message, detail, request_id: requestId, ...extra }
}

/**
 * The error code as the OpenAPI component `ErrorCode`: built from ERROR_STATUS, so a new code reaches
 * the document and the SDK's `ChorusError.code` union with nothing else to edit. Documentation only:
 * error bodies are rendered by the error plugin, never validated against it.
 */
export const ErrorCodeSchema = t.Unsafe<ErrorCode>({
  $id: 'ErrorCode',
  type: 'string',
  enum: Object.keys(ERROR_STATUS),
  description: `Stable machine-readable code; each has one HTTP status: ${Object.entries(ERROR_STATUS).map(([code, status]) => `${code} ${status}`).join(', ')}.`,
})

const ValidationIssueSchema = t.Object({
  loc: t.Array(t.Union([t.String(), Integer()]), { description: 'Where: `body`, `query`, `path` or `header`, then the field path', examples: [['body', 'title']] }),
  msg: t.String({ examples: ['Expected string'] }),
  type: t.String({ description: 'The kind of failure, e.g. `string`, `enum`, `missing`, `value_error`', examples: ['string'] }),
}, { $id: 'ValidationIssue' })

/** The body of every 4xx and 5xx (docs/api.md#errors). */
export const ErrorSchema = t.Object({
  code: ErrorCodeSchema,
  message: t.String({ description: 'For people; may change between versions' }),
  detail: t.Unknown({ description: 'The message again, or on 422 the list of validation issues' }),
  request_id: t.String({ description: 'Also sent as the X-Request-Id header; quote it when asking for support' }),
  required_scope: t.Optional(t.String({ description: 'Only on INSUFFICIENT_SCOPE: the scope the API key lacks' })),
}, {
  $id: 'Error',
  description: 'The body of every 4xx and 5xx response. `detail` repeats `message`, or on 422 lists the validation issues.',
  examples: [{ code: 'NOT_FOUND', message: 'Post not found', detail: 'Post not found', request_id: 'req_0mi9x2k3aq1b2c3d4e5f6g7h8' }],
})

/** 422: FastAPI's HTTPValidationError shape inside the common error body. */
export const ValidationErrorSchema = t.Object({
  code: t.Unsafe<(typeof ISSUE_CODES)[number]>({ type: 'string', enum: [...ISSUE_CODES] }),
  message: t.String(),
  detail: t.Array(ValidationIssueSchema),
  request_id: t.String(),
}, {
  $id: 'HTTPValidationError',
  description: 'HTTPValidationError: every 422 (VALIDATION_ERROR, IDEMPOTENCY_MISMATCH, CHALLENGE_FAILED) with the issues in `detail`',
  examples: [{ code: 'VALIDATION_ERROR', message: 'body.title: Expected string', detail: [{ loc: ['body', 'title'], msg: 'Expected string', type: 'string' }], request_id: 'req_0mi9x2k3aq1b2c3d4e5f6g7h8' }],
})
