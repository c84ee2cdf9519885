import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import type { SafeHtml } from '../../lib/html.ts'
import { cookieValue } from '../../lib/http-headers.ts'
import { endUserWriter } from '../../plugins/end-user-writer.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { commentAsEndUser, postAsEndUser, voteAsEndUser } from '../end-users/write-service.ts'
import { ASSETS, serveAsset, type AssetName } from './assets.ts'
import { checkForm, formErrorOf, readForm, type FormName } from './forms.ts'
import { bareNotFound, type PageContext } from './layout.ts'
import * as pages from './service.ts'
import { portalBoardPath, portalPath, portalPostPath } from './links.ts'
import { formAllowed, SESSION_COOKIE, sessionCookie, signInWithToken, visitorOf } from './session.ts'
import { htmlPage, portalReturnTo, preparePage, seeOther, sendPage, withDone, type Doc, type HeaderMap, type PreparedPage } from './respond.ts'
import type { Loaded } from '../../lib/public-cache.ts'
import { keptBytes, publicAnswers } from '../public/cache.ts'
import { robotsTxt, sitemapXml } from './seo.ts'
import { notFoundPage } from './views.ts'
import { afterAnonymousWrite, sessionIdOf } from '../visitors/service.ts'

const NOTICES: Record<string, string> = {
  posted: 'Thank you! Your idea is posted.',
  held: 'Thank you! Your idea is awaiting review: it appears here once the team approves it.',
  voted: 'Your vote is counted.',
  unvoted: 'Your vote is taken back.',
  commented: 'Your comment is posted.',
  signedout: 'You are signed out.',
}
// An anonymous visitor's address is unconfirmed until they click the link in the e-mail their first write sent.
const CONFIRM_EMAIL = 'We sent you an e-mail: click its link to confirm your address, so your feedback counts as yours.'
const SSO_FAILED = 'That sign-in link is invalid or has expired, so you are not signed in. Open the portal again from the product, or take part with your e-mail address.'

const hidden = { detail: { hide: true } }
/** Query parameters that put a message on the page for the visitor who was sent there: such a page is theirs. */
const PERSONAL_PARAMS = ['done', 'confirm', 'sso']

/** `path?query#hash` with one more query parameter, before the fragment. */
function withParam(location: string, name: string, value: string) {
  const [path, hash] = location.split('#', 2)
  return `${path}${path!.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}${hash !== undefined ? `#${hash}` : ''}`
}
const Form = { parse: 'urlencoded' as const, body: t.Record(t.String(), t.Unknown()), ...hidden }

/**
 * The public portal: server-rendered pages under `/portal/{workspace_slug}` that read through the public
 * services and write through the end-user write path, with plain forms (docs/portal.md).
 */
export const portalModule = (ctx: AppContext) => {
  const respond = (request: Request, doc: Doc | SafeHtml, status: number, extra: HeaderMap = {}, personal = false) => htmlPage(ctx, request, doc, status, extra, personal)

  /** Who is looking and the workspace's portal, or the plain 404 of a workspace that does not exist. */
  async function context(request: Request, slug: string): Promise<PageContext | null> {
    let found
    try {
      found = await pages.loadPortal(ctx, slug)
    } catch (error) {
      if (error instanceof ApiError && error.code === 'NOT_FOUND') return null
      throw error
    }
    const done = new URL(request.url).searchParams
    return {
      baseUrl: ctx.config.baseUrl,
      workspaceId: found.workspaceId,
      portal: found.portal,
      visitor: await visitorOf(ctx, slug, request),
      notice: [NOTICES[done.get('done') ?? ''], done.get('confirm') === 'email' ? CONFIRM_EMAIL : undefined].filter(Boolean).join(' ') || undefined,
      error: done.get('sso') === 'failed' ? SSO_FAILED : undefined,
    }
  }

  /**
   * A GET page: `?sso_token=` first (identify, cookie, the same URL without it), then the page or its 404.
   * With `shared` (what besides the workspace changes the page's bytes), a visitor without a portal session
   * and without a notice to see gets the page everyone else gets, from the public cache.
   */
  async function page(request: Request, slug: string, clientIp: string, build: (page: PageContext) => Promise<Doc | { redirect: string }>, shared?: string) {
    const url = new URL(request.url)
    const token = url.searchParams.get('sso_token')
    if (token !== null) return ssoSignIn(url, slug, token, clientIp)
    if (shared !== undefined && !cookieValue(request.headers, SESSION_COOKIE) && !PERSONAL_PARAMS.some((name) => url.searchParams.has(name))) {
      const answer = await publicAnswers(ctx).through(`page\n${slug}\n${shared}`, () => sharedPage(request, slug, build))
      return 'redirect' in answer ? new Response(null, { status: 301, headers: { location: answer.redirect } }) : sendPage(ctx, request, answer)
    }
    const pc = await context(request, slug)
    if (!pc) return respond(request, bareNotFound('There is no feedback portal at this address.'), 404)
    const stale: HeaderMap = !pc.visitor && cookieValue(request.headers, SESSION_COOKIE) ? { 'set-cookie': sessionCookie(ctx, slug, null) } : {}
    try {
      const doc = await build(pc)
      if ('redirect' in doc) return new Response(null, { status: 301, headers: { location: doc.redirect, ...stale } })
      return respond(request, doc, 200, stale, pc.visitor !== null)
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'NOT_FOUND') throw error
      return respond(request, notFoundPage(pc, `${error.message}: it may have been removed, or it is not public.`), 404, stale, pc.visitor !== null)
    }
  }

  /** The page anyone without a session sees; kept when it is the plain page (no 404, no message about the query). */
  async function sharedPage(request: Request, slug: string, build: (page: PageContext) => Promise<Doc | { redirect: string }>): Promise<Loaded<PreparedPage | { redirect: string }>> {
    const pc = await context(request, slug)
    if (!pc) return { value: await preparePage(bareNotFound('There is no feedback portal at this address.'), 404) }
    try {
      const doc = await build(pc)
      if ('redirect' in doc) return { value: doc }
      const prepared = await preparePage(doc, 200)
      return { value: prepared, keep: pc.error || pc.notice ? undefined : { workspaceId: pc.workspaceId, bytes: keptBytes(prepared.body) } }
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'NOT_FOUND') throw error
      return { value: await preparePage(notFoundPage(pc, `${error.message}: it may have been removed, or it is not public.`), 404) }
    }
  }

  async function ssoSignIn(url: URL, slug: string, token: string, clientIp: string) {
    url.searchParams.delete('sso_token')
    const headers: HeaderMap = {}
    try {
      const session = await signInWithToken(ctx, slug, token.slice(0, 8192), clientIp, headers)
      return seeOther(`${url.pathname}${url.search}`, { ...headers, 'set-cookie': sessionCookie(ctx, slug, session) })
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      if (error.code === 'NOT_FOUND') return seeOther(url.pathname)
      url.searchParams.set('sso', 'failed')
      return seeOther(`${url.pathname}${url.search}`, headers)
    }
  }

  /**
   * A form POST: CSRF check, field check, the end-user write path (the widget's gate and rate limits), then
   * Post/Redirect/Get; a refusal re-renders the form's page with the message and the status it earned.
   */
  async function submit(request: Request, slug: string, clientIp: string, form: FormName, body: Record<string, unknown>, write: (writer: Awaited<ReturnType<typeof endUserWriter>>, input: Record<string, string>) => Promise<string | { json: unknown; location: string }>, rerender: (page: PageContext, state: { form: FormName; values: Record<string, string>; field?: string }) => Promise<Doc | { redirect: string }>) {
    const pc = await context(request, slug)
    if (!pc) return respond(request, bareNotFound('There is no feedback portal at this address.'), 404)
    const wantsJson = (request.headers.get('accept') ?? '').includes('application/json')
    const values = readForm(form, body, pc.visitor !== null)
    const headers: HeaderMap = {}
    try {
      if (!formAllowed(ctx, request, pc.visitor, body.csrf)) throw new ApiError('CSRF_REJECTED', 'This form expired or was sent from another site. Reload the page and try again.')
      const input = checkForm(form, values, pc.visitor !== null)
      const credentials = new Headers(pc.visitor ? { authorization: `Bearer ${pc.visitor.token}` } : {})
      const writer = await endUserWriter(ctx, { headers: credentials }, slug, pc.visitor ? undefined : input.email, clientIp, headers)
      const outcome = await write(writer, input)
      let location = typeof outcome === 'string' ? outcome : outcome.location
      if (writer.anonymous) {
        // The visitor keeps a session for the (still unconfirmed) address they wrote as, like the widget's header.
        // Whether the address was confirmed before (then the writer is a stand-in) changes nothing the visitor sees.
        const session = await afterAnonymousWrite(ctx, writer.workspace, writer.anonymous, sessionIdOf(writer))
        headers['set-cookie'] = sessionCookie(ctx, slug, session.sessionToken)
        location = withParam(location, 'confirm', 'email')
      }
      if (typeof outcome !== 'string') return wantsJson ? Response.json(outcome.json, { headers: { 'cache-control': 'no-store', ...headers } }) : seeOther(location, headers)
      return seeOther(location, headers)
    } catch (raised) {
      const error = formErrorOf(raised)
      Object.assign(headers, error.headers)
      for (const [name, value] of Object.entries(headers)) headers[name] = String(value)
      if (wantsJson) return Response.json({ message: error.message }, { status: error.status, headers: { 'cache-control': 'no-store', ...headers } })
      if (error.status === 404) return respond(request, notFoundPage(pc, 'This page does not exist, or it is not public.'), 404, headers, true)
      pc.notice = undefined
      pc.error = error.message
      const doc = await rerender(pc, { form, values, field: error.field })
      if ('redirect' in doc) return seeOther(doc.redirect, headers)
      return respond(request, doc, error.status, headers, true)
    }
  }

  return new Elysia({ prefix: '/portal' })
    .use(requestPlugin(ctx))
    .get('/_/:asset', ({ params, request }) => (params.asset in ASSETS ? serveAsset(params.asset as AssetName, request) : new Response('Not found', { status: 404 })), hidden)
    .get('/:workspace_slug', ({ params, request, clientIp }) => page(request, params.workspace_slug, clientIp, (pc) => pages.home(ctx, pc)), hidden)
    .get('/:workspace_slug/boards/:board_slug', ({ params, request, query, clientIp }) => page(request, params.workspace_slug, clientIp, (pc) => pages.board(ctx, pc, params.board_slug, query),
      JSON.stringify([params.board_slug, query.q, query.status, query.sort, query.page])), hidden)
    .get('/:workspace_slug/posts/:post_id', ({ params, request, clientIp }) => page(request, params.workspace_slug, clientIp, (pc) => pages.post(ctx, pc, params.post_id)), hidden)
    .get('/:workspace_slug/roadmap', ({ params, request, clientIp }) => page(request, params.workspace_slug, clientIp, (pc) => pages.roadmap(ctx, pc)), hidden)
    .get('/:workspace_slug/changelog', ({ params, request, query, clientIp }) => page(request, params.workspace_slug, clientIp, (pc) => pages.changelog(ctx, pc, query)), hidden)
    .get('/:workspace_slug/sitemap.xml', ({ params }) => sitemapXml(ctx, params.workspace_slug), hidden)
    .get('/:workspace_slug/robots.txt', ({ params }) => robotsTxt(ctx, params.workspace_slug), hidden)
    .post('/:workspace_slug/boards/:board_slug/posts', ({ params, request, body, clientIp }) => submit(request, params.workspace_slug, clientIp, 'post', body,
      async (writer, input) => {
        const post = await postAsEndUser(ctx, writer, params.board_slug, { title: input.title!, body: input.body })
        // A held post has no page yet: back to its board, saying it awaits review.
        return post.moderation === 'held' ? withDone(portalBoardPath(params.workspace_slug, params.board_slug), 'held') : withDone(portalPostPath(params.workspace_slug, post.id), 'posted')
      },
      (pc, state) => pages.board(ctx, pc, params.board_slug, {}, state)), Form)
    .post('/:workspace_slug/posts/:post_id/vote', ({ params, request, body, clientIp }) => submit(request, params.workspace_slug, clientIp, 'vote', body,
      async (writer) => {
        const result = await voteAsEndUser(ctx.db, writer, params.post_id)
        const back = portalReturnTo(params.workspace_slug, body.return_to, portalPostPath(params.workspace_slug, params.post_id))
        return { json: result, location: withDone(back, result.voted ? 'voted' : 'unvoted') }
      },
      (pc, state) => pages.post(ctx, pc, params.post_id, state)), Form)
    .post('/:workspace_slug/posts/:post_id/comments', ({ params, request, body, clientIp }) => submit(request, params.workspace_slug, clientIp, 'comment', body,
      async (writer, input) => {
        await commentAsEndUser(ctx, writer, params.post_id, { body: input.body! })
        return `${withDone(portalPostPath(params.workspace_slug, params.post_id), 'commented')}#comments`
      },
      (pc, state) => pages.post(ctx, pc, params.post_id, state)), Form)
    .post('/:workspace_slug/signout', async ({ params, request, body }) => {
      const visitor = await visitorOf(ctx, params.workspace_slug, request)
      if (!formAllowed(ctx, request, visitor, body.csrf)) return new Response('This form expired or was sent from another site.', { status: 403, headers: { 'content-type': 'text/plain; charset=utf-8' } })
      return seeOther(`${portalPath(params.workspace_slug)}?done=signedout`, { 'set-cookie': sessionCookie(ctx, params.workspace_slug, null) })
    }, Form)
    // Anything else under a portal: its 404 page, branded when the workspace exists.
    .get('/*', async ({ request }) => {
      const slug = new URL(request.url).pathname.split('/')[2] ?? ''
      const pc = /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(slug) ? await context(request, slug) : null
      return pc ? respond(request, notFoundPage(pc, 'There is no page at this address.'), 404) : respond(request, bareNotFound('There is no feedback portal at this address.'), 404)
    }, hidden)
}
