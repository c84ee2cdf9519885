// The error body as OpenAPI components (Error, ErrorCode, HTTPValidationError, ValidationIssue), built from
// server/errors.ts. Apart from it so that code which only throws errors
// (services, the delivery loop) does not load Elysia's schema builder.
import { t } from 'elysia'
import { ERROR_STATUS, ISSUE_CODES, type ErrorCode } from '../../errors.ts'
import { Integer } from '../../lib/schema.ts'

/**
 * The error code as the OpenAPI component `ErrorCode`: built from ERROR_STATUS, so a new code reaches
 * the document and the SDK's `ChorusError.code` union with nothing else to edit. Documentation only:
 * error bodies are rendered by the error plugin, never validated against it.
 */
const ErrorCodeSchema = t.Unsafe<ErrorCode>({
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
