import { ValueErrorType } from '@sinclair/typebox/errors'
import { Elysia, ValidationError } from 'elysia'
import type { AppContext } from '../context.ts'
import { ApiError, errorBody, type ErrorCode, type ValidationIssue } from '../errors.ts'
import { describeError, isConnectionError } from '../db/errors.ts'
import { setSecurityHeaders } from '../lib/http-headers.ts'
import { mailFailureError } from '../lib/mail.ts'
import { allowedMethods, pathOf, requestIdOf } from './request.ts'

const LOCATION: Record<string, string> = { body: 'body', query: 'query', params: 'path', headers: 'header', cookie: 'cookie' }

const snake = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase()

/**
 * Elysia coerces numeric query parameters one by one and reports a failure there as type "property",
 * without the name. The name is the query parameter whose text is the rejected value.
 */
function coercedQueryLoc(error: ValidationError, request?: Request): (string | number)[] {
  const query = request ? new URL(request.url).searchParams : undefined
  const names = query ? [...query.keys()].filter((name) => query.getAll(name).some((raw) => raw === String(error.value))) : []
  return names.length === 1 ? ['query', names[0]!] : ['query']
}

/** The allowed values when the failing schema is a union of string literals (our Enum). */
function literalOptions(schema: unknown): string[] | undefined {
  const anyOf = (schema as { anyOf?: { const?: unknown }[] })?.anyOf
  if (!anyOf?.length || !anyOf.every((option) => typeof option.const === 'string')) return undefined
  return anyOf.map((option) => option.const as string)
}

/** Elysia's validation error as the FastAPI-style HTTPValidationError list. */
export function validationIssues(error: ValidationError, request?: Request): ValidationIssue[] {
  const where = LOCATION[error.type] ?? error.type
  return error.all.map((issue) => {
    const path = 'path' in issue && typeof issue.path === 'string' ? issue.path.split('/').filter(Boolean) : []
    const loc = error.type === 'property' ? coercedQueryLoc(error, request) : [where, ...path.map((part) => (/^\d+$/.test(part) ? Number(part) : part))]
    const kind = 'type' in issue && typeof issue.type === 'number' ? ValueErrorType[issue.type] : undefined
    const options = 'schema' in issue ? literalOptions(issue.schema) : undefined
    const msg = options ? `Expected one of: ${options.join(', ')}` : 'summary' in issue && issue.summary ? issue.summary : issue.message
    return { loc, msg, type: options ? 'enum' : kind ? snake(kind) : 'value_error' }
  })
}

function json(status: number, body: unknown, headers: Record<string, string>) {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
}

/** The single place errors become responses: every 4xx/5xx carries the common body (docs/api.md#errors) and X-Request-Id. */
export function errorHandler(ctx: AppContext) {
  return new Elysia({ name: 'errors' }).onError({ as: 'global' }, ({ code, error: raised, request, set }) => {
    // Elysia wraps whatever the body parser throws; our parser's refusals (415, 422) are ApiErrors.
    const unwrapped = code === 'PARSE' && (raised as Error).cause instanceof ApiError ? ((raised as Error).cause as ApiError) : raised
    const requestId = requestIdOf(request)
    // The request's e-mail (a sign-in link, an invitation) did not go out: answered as the ApiError it maps to (lib/mail.ts),
    // 503 when asking again later may work, 502 when the mail server refused it. Before the database's check below:
    // a mail server's ETIMEDOUT is no database's.
    const mailError = mailFailureError(unwrapped)
    if (mailError) ctx.log.warn('e-mail not sent', { request_id: requestId, error: describeError(unwrapped) })
    const error = mailError ?? unwrapped
    const headers: Record<string, string> = { 'x-request-id': requestId }
    setSecurityHeaders(headers, ctx.config, request)
    // Rate-limit headers, and CORS headers on public routes so a cross-origin widget can read its errors.
    for (const [name, value] of Object.entries(set.headers)) if (/^(ratelimit-|access-control-)/i.test(name)) headers[name] = String(value)
    const reply = (status: number, errorCode: ErrorCode, message: string, detail: unknown = message, extra = {}) => {
      set.status = status
      return json(status, errorBody(errorCode, message, requestId, detail, extra), headers)
    }

    if (error instanceof ApiError) {
      Object.assign(headers, error.headers)
      if (error.issues) return reply(422, error.code, error.message, error.issues, error.extra)
      return reply(error.status, error.code, error.message, error.message, error.extra)
    }
    if (error instanceof ValidationError) {
      if (error.type === 'response') {
        ctx.log.error('response does not match its schema', { request_id: requestId, path: new URL(request.url).pathname, issues: validationIssues(error, request) })
        return reply(500, 'INTERNAL', 'Internal server error')
      }
      const issues = validationIssues(error, request)
      return reply(422, 'VALIDATION_ERROR', issues[0] ? `${issues[0].loc.join('.')}: ${issues[0].msg}` : 'Request validation failed', issues)
    }
    switch (code) {
      case 'NOT_FOUND': {
        // The path exists with other methods: 405 naming them, not a 404 that says it does not exist.
        const allow = allowedMethods(ctx, pathOf(request.url))
        if (!allow.length) return reply(404, 'NOT_FOUND', 'Route not found')
        headers.allow = allow.join(', ')
        return reply(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed here; this address takes ${headers.allow}`)
      }
      case 'PARSE':
        return reply(400, 'BAD_REQUEST', 'The request body could not be parsed')
      case 'INVALID_COOKIE_SIGNATURE':
        return reply(401, 'UNAUTHENTICATED', 'Invalid cookie')
    }
    // The database went away (restart, failover): the request may be retried once it is back.
    if (isConnectionError(error)) {
      ctx.log.warn('database unavailable', { request_id: requestId, error: describeError(error) })
      headers['retry-after'] = '1'
      return reply(503, 'SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly')
    }
    ctx.log.error('unhandled error', { request_id: requestId, error: describeError(error) })
    return reply(500, 'INTERNAL', 'Internal server error')
  })
}
