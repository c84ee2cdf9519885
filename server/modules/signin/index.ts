import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { htmlResponse } from '../../lib/http-headers.ts'
import { EMAIL_REFUSED, mailFailureError } from '../../lib/mail.ts'
import { randomToken, timingSafeEqual } from '../../lib/secrets.ts'
import { accessCookie, sharedCredentialResolvers } from '../../plugins/credentials.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { setSessionCookies } from '../auth/cookies.ts'
import { sendMagicLink } from '../auth/index.ts'
import { RedirectPath } from '../auth/model.ts'
import { verifyMagicLink } from '../auth/service.ts'
import { acceptInviteToken } from '../members/service.ts'
import { acceptInvitePage, magicLinkPage, signInPage, STYLE } from './page.ts'

const CSRF_COOKIE = 'chorus_csrf'
const RELATIVE = new RegExp(RedirectPath.pattern!)
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/
const slugOf = (value: unknown) => (typeof value === 'string' && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(value) && value.length <= 48 ? value : '')

const Form = (fields: Record<string, ReturnType<typeof t.String>>) => t.Object(fields, { additionalProperties: true })
const hidden = { detail: { hide: true } }

/**
 * The built-in sign-in pages, served when no separate dashboard is configured (DASHBOARD_URL unset): `/signin`
 * (e-mail link, and the identity provider of each configured region) and `/auth/magic-link`, where the
 * e-mailed link lands. They work without JavaScript; forms carry a double-submit CSRF token (a SameSite=Strict
 * cookie and a hidden field). `return_to` (a relative path) is where the browser goes once signed in, e.g. the
 * OAuth authorize URL that sent it here. `/accept-invite` is where an e-mailed invitation lands: the invitee gives
 * a name and is signed in as an active member (members/service.ts acceptInviteToken, as POST /auth/accept-invite).
 */
export const signInModule = (ctx: AppContext) => {
  if (ctx.config.dashboardUrl !== ctx.config.baseUrl) return new Elysia({ name: 'signin-pages-off' })
  const sessions = sharedCredentialResolvers(ctx)
  const styleHash = crypto.subtle.digest('SHA-256', new TextEncoder().encode(STYLE)).then((digest) => `'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`)
  const csrfCookie = (value: string) => `${CSRF_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600${ctx.config.secureCookies ? '; Secure' : ''}`
  const returnTo = (value: unknown) => (typeof value === 'string' && value.length <= 2048 && RELATIVE.test(value) ? value : '/dashboard')
  const providers = (target: string) => (['US', 'EU'] as const)
    .filter((region) => ctx.config.idpIssuers[region] && ctx.config.idpClientId)
    .map((region) => ({ region, href: `/api/v1/auth/idp/login?${new URLSearchParams({ data_region: region, redirect_to: target })}` }))

  async function page(html: (csrf: string) => string, status = 200) {
    const csrf = randomToken()
    return htmlResponse(html(csrf), { styles: [await styleHash] }, { status, headers: { 'set-cookie': csrfCookie(csrf), 'cache-control': 'no-store' } })
  }
  const csrfValid = (cookie: unknown, field: unknown) => typeof cookie === 'string' && typeof field === 'string' && cookie.length > 0 && timingSafeEqual(cookie, field)
  const redirect = (set: { status?: number | string; headers: Record<string, string | number> }, location: string) => {
    set.status = 303
    set.headers.location = location
  }

  return new Elysia()
    .use(requestPlugin(ctx))
    .get('/signin', async ({ query, request, set }) => {
      const target = returnTo(query.return_to)
      // Already signed in: straight on (the OAuth authorize URL, for instance).
      if (await sessions.session(accessCookie(request))) return redirect(set, target)
      return page((csrf) => signInPage({ csrf, returnTo: target, error: query.error, sent: query.sent === '1', providers: providers(target) }))
    }, hidden)
    .post('/signin', async ({ body, cookie, set, clientIp }) => {
      const target = returnTo(body.return_to)
      const email = typeof body.email === 'string' ? body.email.trim() : ''
      const again = (error: string, status: number) => page((csrf) => signInPage({ csrf, returnTo: target, error, email, providers: providers(target) }), status)
      if (!csrfValid(cookie[CSRF_COOKIE]?.value, body.csrf)) return again('invalid_form', 403)
      if (email.length > 254 || !EMAIL.test(email)) return again('invalid_email', 422)
      try {
        await sendMagicLink(ctx, set.headers as Record<string, string | number>, clientIp, { email, redirect_to: target })
      } catch (error) {
        if (error instanceof ApiError && error.code === 'RATE_LIMITED') return again('rate_limited', 429)
        // The form says what went wrong with the e-mail, as the API does (docs/api.md#errors), instead of a JSON error page.
        if (error instanceof ApiError && error.issues?.[0]?.type === EMAIL_REFUSED) return again('email_refused', 422)
        const mailError = mailFailureError(error)
        if (mailError) return again(mailError.code === 'SERVICE_UNAVAILABLE' ? 'mail_unavailable' : 'mail_refused', mailError.status)
        throw error
      }
      return redirect(set, `/signin?${new URLSearchParams({ sent: '1', return_to: target })}`)
    }, { parse: 'urlencoded', body: Form({}), ...hidden })
    .get('/auth/magic-link', async ({ query }) => page((csrf) => magicLinkPage(csrf, typeof query.token === 'string' ? query.token.slice(0, 512) : '')), hidden)
    .post('/auth/magic-link', async ({ body, cookie, set, request }) => {
      if (!csrfValid(cookie[CSRF_COOKIE]?.value, body.csrf) || typeof body.token !== 'string') return page((csrf) => magicLinkPage(csrf, '', 'invalid_form'), 403)
      try {
        const { session, redirectTo } = await verifyMagicLink(ctx, body.token.slice(0, 512), request.headers.get('user-agent'))
        setSessionCookies(cookie, session, ctx.config)
        return redirect(set, returnTo(redirectTo))
      } catch (error) {
        if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') return page((csrf) => magicLinkPage(csrf, '', 'invalid_link'), 401)
        throw error
      }
    }, { parse: 'urlencoded', body: Form({}), ...hidden })
    .get('/accept-invite', async ({ query }) => page((csrf) => acceptInvitePage({ csrf, token: typeof query.token === 'string' ? query.token.slice(0, 512) : '', workspace: slugOf(query.workspace) })), hidden)
    .post('/accept-invite', async ({ body, cookie, set, request }) => {
      const workspace = slugOf(body.workspace)
      const token = typeof body.token === 'string' ? body.token.slice(0, 512) : ''
      const name = typeof body.name === 'string' ? body.name.trim() : ''
      const again = (error: string, status: number) => page((csrf) => acceptInvitePage({ csrf, token, workspace, name, error }), status)
      if (!csrfValid(cookie[CSRF_COOKIE]?.value, body.csrf) || !token) return again('invalid_form', 403)
      if (!name || name.length > 100) return again('invalid_name', 422)
      try {
        const { session } = await acceptInviteToken(ctx, token, name, request.headers.get('user-agent'))
        setSessionCookies(cookie, session, ctx.config)
        return redirect(set, workspace ? `/dashboard/${workspace}` : '/dashboard')
      } catch (error) {
        if (error instanceof ApiError && (error.code === 'UNAUTHENTICATED' || error.status === 404)) return again('invalid_invitation', 401)
        throw error
      }
    }, { parse: 'urlencoded', body: Form({}), ...hidden })
}
