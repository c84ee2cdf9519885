import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { invalid } from '../../errors.ts'
import { setSessionCookies } from '../auth/cookies.ts'
import { IdpCallbackQuery, IdpLoginQuery, IdpStateCookie, Redirect } from './model.ts'
import { IdpError } from './oidc.ts'
import { finishLogin, startLogin, STATE_COOKIE, STATE_SECONDS } from './service.ts'

const tags = ['Auth']

const ERRORS_DOC = 'Failures redirect to `{DASHBOARD_URL}/signin?error=<reason>` with one of `access_denied`, `idp_error`, `missing_state`, `state_mismatch`, `expired`, `issuer_mismatch`, `token_exchange_failed`, `invalid_id_token`, `idp_unavailable`, `email_unverified`, `email_missing` (or `server_error`); they never set a session.'

export const idpModule = (ctx: AppContext) => {
  // The state cookie is read by the callback under either API prefix, and by nothing else.
  const stateCookie = { httpOnly: true, sameSite: 'lax' as const, secure: ctx.config.secureCookies, path: '/api' }
  const dashboard = (path: string) => {
    const url = new URL(path, `${ctx.config.dashboardUrl}/`)
    // The schema admits relative paths only; this keeps any path that still resolves elsewhere at home.
    return url.origin === new URL(ctx.config.dashboardUrl).origin ? url.toString() : `${ctx.config.dashboardUrl}/dashboard`
  }
  // A browser mid-login gets a page it can act on, never a JSON 500: unexpected faults are logged and redirected too.
  const reasonOf = (error: unknown, message: string) => {
    if (error instanceof IdpError) {
      ctx.log.warn(message, { reason: error.reason, detail: error.message })
      return error.reason
    }
    ctx.log.error(message, { error: error instanceof Error ? error.message : String(error) })
    return 'server_error'
  }
  const failed = (reason: string) => `${ctx.config.dashboardUrl}/signin?error=${encodeURIComponent(reason)}`

  return new Elysia({ prefix: '/auth/idp' })
    .get('/login', async ({ query, cookie, set }) => {
      const region = query.data_region ?? 'US'
      const issuer = ctx.config.idpIssuers[region]
      if (!issuer || !ctx.config.idpClientId) throw invalid(['query', 'data_region'], `No identity provider is configured for the ${region} region`)
      set.status = 302
      try {
        const { location, cookie: sealed } = await startLogin(ctx, issuer, { region, redirect_to: query.redirect_to ?? '/dashboard', locale: query.locale ?? 'en' })
        cookie[STATE_COOKIE]!.set({ ...stateCookie, value: sealed, maxAge: STATE_SECONDS })
        set.headers.location = location
      } catch (error) {
        set.headers.location = failed(reasonOf(error, 'identity-provider login could not start'))
      }
    }, {
      query: IdpLoginQuery,
      cookie: IdpStateCookie,
      response: { 302: Redirect },
      detail: {
        operationId: 'startIdpLogin', tags, security: [], summary: 'Sign in with the identity provider of a data region',
        description: 'Redirects to the region\'s OpenID provider (authorization code with PKCE S256, `state` and `nonce`, query response mode). The login is sealed into the HttpOnly `idp_oauth_state` cookie (10 minutes). A region without a configured issuer, or a `redirect_to` that is not a relative path, is 422. A provider that cannot be reached redirects to `/signin?error=idp_unavailable`.',
      },
    })
    .get('/callback', async ({ query, cookie, set, request }) => {
      const sealed = cookie[STATE_COOKIE]?.value as string | undefined
      // Whatever happens next, this login's state is spent.
      cookie[STATE_COOKIE]!.set({ ...stateCookie, value: '', maxAge: 0, expires: new Date(0) })
      set.status = 302
      try {
        const { session, redirectTo } = await finishLogin(ctx, { ...query, cookie: sealed }, request.headers.get('user-agent'))
        setSessionCookies(cookie, session, ctx.config)
        set.headers.location = dashboard(redirectTo)
      } catch (error) {
        set.headers.location = failed(reasonOf(error, 'identity-provider login failed'))
      }
    }, {
      query: IdpCallbackQuery,
      cookie: IdpStateCookie,
      response: { 302: Redirect },
      detail: {
        operationId: 'finishIdpLogin', tags, security: [], summary: 'Where the identity provider sends the browser back',
        description: `Checks \`state\` against the \`idp_oauth_state\` cookie (then deletes it), the RFC 9207 \`iss\` parameter when present, exchanges the code at the issuer the login went to, and validates the ID token against that issuer's JWKS (\`iss\` exactly, \`aud\`, \`nonce\`, \`exp\`). The identity (issuer, sub) signs in its user; a first login links to the account with the same address only when the provider says \`email_verified: true\`, and creates the account when there is none. Success sets the session cookies and redirects to \`redirect_to\` on the dashboard. ${ERRORS_DOC}`,
      },
    })
}
