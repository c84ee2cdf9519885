import { errorBody, type ErrorCode } from '../../errors.ts'

/**
 * An error of the OAuth protocol endpoints. Its body carries the RFC fields (`error`,
 * `error_description`) that OAuth clients read, and the service's common error fields beside them.
 */
export class OAuthError extends Error {
  constructor(readonly error: string, readonly description: string, readonly status = 400) {
    super(description)
  }
}

const CODE_FOR_STATUS: Record<number, ErrorCode> = { 400: 'BAD_REQUEST', 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND' }

export function oauthErrorResponse(error: OAuthError, requestId: string): Response {
  const code = CODE_FOR_STATUS[error.status] ?? 'BAD_REQUEST'
  const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-request-id': requestId }
  if (error.status === 401) headers['www-authenticate'] = 'Basic realm="chorus"'
  return new Response(JSON.stringify({ error: error.error, error_description: error.description, ...errorBody(code, error.description, requestId) }), { status: error.status, headers })
}
