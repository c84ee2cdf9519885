import type { AppContext } from '../../context.ts'
import { carriesSessionCookie, contentSecurityPolicy, htmlResponse } from '../../lib/http-headers.ts'
import type { SafeHtml } from '../../lib/html.ts'
import { sha256Hex } from '../../lib/secrets.ts'
import { PUBLIC_CACHE_CONTROL } from '../public/cache.ts'
import { portalPath } from './links.ts'

export type Doc = { body: SafeHtml; style: string }
export type HeaderMap = Record<string, string>

const sameTag = (candidate: string, etag: string) => candidate.trim().replace(/^W\//, '') === etag.replace(/^W\//, '')

/** A page rendered, encoded and hashed, ready to send to whoever asks (the public cache keeps these). */
export interface PreparedPage {
  /** A Blob, so each response shares the bytes instead of copying them (as public/cache.ts's JsonAnswer). */
  body: Blob
  status: number
  styles: string[]
  headers: HeaderMap
  etag?: string
  personal: boolean
  /** Its Content-Security-Policy, built by the first sendPage: a kept page is sent many times. */
  csp?: string
}

/** Renders what every request for the page shares: its bytes, the hash of its one inline style, its ETag. */
export async function preparePage(doc: Doc | SafeHtml, status: number, extra: HeaderMap = {}, personal = false): Promise<PreparedPage> {
  const body = 'style' in doc ? doc.body.value : doc.value
  const styles = 'style' in doc ? [`'sha256-${Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(doc.style))).toString('base64')}'`] : []
  return { body: new Blob([body]), status, styles, headers: extra, personal, etag: status === 200 ? `W/"${sha256Hex(body).slice(0, 32)}"` : undefined }
}

/**
 * An HTML answer: strict CSP (our stylesheet and script, the page's one inline style by its hash), a weak
 * ETag with 304 on a match, and caching by who asks: a signed-in visitor's page is theirs alone, anyone
 * else's is the same for everybody for 30 s.
 */
export function sendPage(ctx: AppContext, request: Request, page: PreparedPage) {
  const headers: HeaderMap = { vary: 'Cookie', ...page.headers }
  const shared = !page.personal && !carriesSessionCookie(request.headers)
  headers['cache-control'] = shared && page.status === 200 ? PUBLIC_CACHE_CONTROL : 'private, no-store'
  if (page.etag && (request.method === 'GET' || request.method === 'HEAD')) {
    headers.etag = page.etag
    if (request.headers.get('if-none-match')?.split(',').some((tag) => sameTag(tag, page.etag!))) return new Response(null, { status: 304, headers })
  }
  page.csp ??= contentSecurityPolicy({ scripts: ["'self'"], styles: page.styles, media: [new URL(ctx.config.baseUrl).origin] })
  return htmlResponse(page.body, page.csp, { status: page.status, headers })
}

export const htmlPage = async (ctx: AppContext, request: Request, doc: Doc | SafeHtml, status: number, extra: HeaderMap = {}, personal = false) =>
  sendPage(ctx, request, await preparePage(doc, status, extra, personal))

/** Post/Redirect/Get: never cached. */
export const seeOther = (location: string, headers: HeaderMap = {}) => new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store', ...headers } })

/** The relative portal URL a form came from, else the fallback: redirects never leave this portal. */
export const portalReturnTo = (slug: string, value: unknown, fallback: string) =>
  typeof value === 'string' && value.length <= 2048 && (value === portalPath(slug) || value.startsWith(`${portalPath(slug)}/`) || value.startsWith(`${portalPath(slug)}?`)) && !/[\\\s]|\/\//.test(value) ? value : fallback

/** The same address with `done=` saying what just happened (the page shows it as a notice). */
export function withDone(location: string, done: string) {
  const [path, query = ''] = location.split('?')
  const search = new URLSearchParams(query)
  search.set('done', done)
  return `${path}?${search}`
}
