import type { Config } from '../config.ts'

/**
 * Headers every response carries: no MIME sniffing; HSTS when the public URL is https; and
 * `Cache-Control: no-store` when the request carries credentials, so no shared cache keeps a
 * caller's data (routes that are public set their own caching).
 */
export function setSecurityHeaders(headers: Record<string, string | number>, config: Pick<Config, 'baseUrl'>, request: Request) {
  headers['x-content-type-options'] = 'nosniff'
  if (config.baseUrl.startsWith('https:')) headers['strict-transport-security'] = 'max-age=31536000; includeSubDomains'
  if (carriesCredentialHeader(request.headers) || carriesSessionCookie(request.headers)) {
    headers['cache-control'] = 'no-store'
  }
}

/**
 * Whether the request sends a credential header (`Authorization` of any scheme, or `X-API-Key`): such a
 * request carries no ambient authority and its answer is the caller's own.
 */
export const carriesCredentialHeader = (headers: Headers) => headers.has('authorization') || headers.has('x-api-key')

const SESSION_COOKIE = /(?:^|;\s*)(access_token|refresh_token)=/

/** Whether the request carries a dashboard session cookie (access or refresh token). */
export const carriesSessionCookie = (headers: Headers) => SESSION_COOKIE.test(headers.get('cookie') ?? '')

/**
 * One cookie's value from the Cookie header, percent-decoded (the first one of that name, as browsers
 * send the most specific path first). Read where it is needed, so requests that carry an API key never
 * have their cookies parsed.
 */
export function cookieValue(headers: Headers, name: string): string | undefined {
  const header = headers.get('cookie')
  if (!header) return undefined
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=')
    if (equals === -1 || pair.slice(0, equals).trim() !== name) continue
    let value = pair.slice(equals + 1).trim()
    if (value.length > 1 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    try {
      return decodeURIComponent(value)
    } catch {
      return value
    }
  }
  return undefined
}

export interface HtmlPolicy {
  /** Script origins beyond none (inline scripts are never allowed). */
  scripts?: string[]
  /** Style origins; `'unsafe-inline'` where a page's library injects style attributes. */
  styles?: string[]
  /** Where the page may fetch from besides its own origin. */
  connect?: string[]
  /** Image and font origins besides its own origin and data: URLs. */
  media?: string[]
  /** Where forms may go besides this origin (a form whose answer redirects to an OAuth provider's authorize page). */
  forms?: string[]
}

/**
 * The one way to answer with an HTML page: a strict Content-Security-Policy (nothing but what the
 * page names, no framing, no <base>, forms only to us), frame-ancestors and X-Frame-Options.
 */
export function htmlResponse(html: string | Blob, policy: HtmlPolicy | string = {}, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers)
  headers.set('content-type', 'text/html; charset=utf-8')
  headers.set('content-security-policy', typeof policy === 'string' ? policy : contentSecurityPolicy(policy))
  headers.set('x-frame-options', 'DENY')
  headers.set('referrer-policy', 'no-referrer')
  headers.set('x-content-type-options', 'nosniff')
  return new Response(html, { ...init, headers })
}

/** The Content-Security-Policy an HTML page gets for `policy`; a page answered many times (the public cache's) builds it once and passes the string to htmlResponse. */
export function contentSecurityPolicy(policy: HtmlPolicy): string {
  return [
    "default-src 'none'",
    `script-src ${policy.scripts?.join(' ') || "'none'"}`,
    `style-src ${['\'self\'', ...(policy.styles ?? [])].join(' ')}`,
    `connect-src ${['\'self\'', ...(policy.connect ?? [])].join(' ')}`,
    `img-src ${['\'self\'', 'data:', ...(policy.media ?? [])].join(' ')}`,
    `font-src ${['\'self\'', 'data:', ...(policy.media ?? [])].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    `form-action ${['\'self\'', ...(policy.forms ?? [])].join(' ')}`,
  ].join('; ')
}
