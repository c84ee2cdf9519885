import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { timingSafeEqual, toBase64Url } from '../../lib/secrets.ts'
import { SCOPES } from '../../plugins/auth.ts'
import { accessCookie, sharedCredentialResolvers } from '../../plugins/credentials.ts'
import { enforceRateLimit } from '../../plugins/rate-limit.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { authenticateClient, registerClient } from './clients.ts'
import { authorizeDoc, metadataDoc, registerDoc, revokeDoc, tokenDoc } from './docs.ts'
import { OAuthError, oauthErrorResponse } from './errors.ts'
import { consentPage, errorPage } from './page.ts'
import { AuthorizePageError, AuthorizeRedirectError, checkAuthorizeRequest, createConsentRequest, decideConsent, describeConsent } from './service.ts'
import { exchangeCode, refresh, revokeToken } from './tokens.ts'

const FORM_BODY_LIMIT = 16 * 1024

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' } })

const redirect = (location: string, status = 302) => new Response(null, { status, headers: { location, 'cache-control': 'no-store' } })

/** These routes read their body as text (`parse: 'text'`): OAuth speaks form bodies and its own error objects. */
function readForm(request: Request, text: unknown): URLSearchParams {
  if (!request.headers.get('content-type')?.toLowerCase().startsWith('application/x-www-form-urlencoded') || typeof text !== 'string') {
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded')
  }
  if (text.length > FORM_BODY_LIMIT) throw new OAuthError('invalid_request', 'The body is too large')
  const form = new URLSearchParams(text)
  for (const name of new Set(form.keys())) if (form.getAll(name).length > 1 && name !== 'scope') throw new OAuthError('invalid_request', `${name} appears more than once`)
  return form
}

/** RFC 8414 metadata: the issuer is BASE_URL itself, so the document sits at the root well-known path without a suffix. */
export function serverMetadata(baseUrl: string) {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/oauth/token`,
    registration_endpoint: `${baseUrl}/oauth/register`,
    revocation_endpoint: `${baseUrl}/oauth/revoke`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${baseUrl}/docs`,
  }
}

/**
 * The authorization server's protocol endpoints (outside `/api`, where OAuth clients look for them)
 * and the server-rendered consent page used when no separate dashboard is configured.
 */
export const oauthServerModule = (ctx: AppContext) => {
  const resolve = sharedCredentialResolvers(ctx)
  const formKey = ctx.secrets.deriveKey('oauth-consent-form')
  const base = ctx.config.baseUrl
  const separateDashboard = ctx.config.dashboardUrl !== base

  /** The consent form's CSRF token: bound to the session and the request, so it cannot be replayed elsewhere. */
  async function formToken(sessionId: string, requestId: string) {
    const key = await crypto.subtle.importKey('raw', new Uint8Array(await formKey), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    return toBase64Url(new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${sessionId}:${requestId}`))))
  }

  const signInUrl = (returnTo: string) =>
    separateDashboard ? `${ctx.config.dashboardUrl}/signin?return_to=${encodeURIComponent(`${base}${returnTo}`)}` : `${base}/signin?return_to=${encodeURIComponent(returnTo)}`

  const protocolError = (error: unknown, requestId: string) => {
    if (error instanceof OAuthError) return oauthErrorResponse(error, requestId)
    throw error
  }

  return new Elysia()
    .use(requestPlugin(ctx))
    .get('/.well-known/oauth-authorization-server', () => json(serverMetadata(base)), {
      detail: metadataDoc,
    })
    .post('/oauth/register', async ({ body: text, clientIp, set, requestId }) => {
      await enforceRateLimit(ctx, set.headers, `oauth-register:${clientIp}`, ctx.config.rateLimitPerIp)
      let body: unknown
      try {
        if (typeof text !== 'string') throw new OAuthError('invalid_client_metadata', 'The body must be JSON')
        if (text.length > FORM_BODY_LIMIT) throw new OAuthError('invalid_client_metadata', 'The body is too large')
        body = JSON.parse(text)
      } catch (error) {
        return protocolError(error instanceof OAuthError ? error : new OAuthError('invalid_client_metadata', 'The body must be JSON'), requestId)
      }
      try {
        return json(await registerClient(ctx, body, clientIp), 201)
      } catch (error) {
        return protocolError(error, requestId)
      }
    }, {
      parse: 'text',
      detail: registerDoc,
    })
    .get('/oauth/authorize', async ({ request }) => {
      const url = new URL(request.url)
      let checked
      try {
        checked = await checkAuthorizeRequest(ctx, url.searchParams)
      } catch (error) {
        if (error instanceof AuthorizePageError) return errorPage(error.message)
        if (error instanceof AuthorizeRedirectError) return redirect(error.location)
        throw error
      }
      const session = await resolve.session(accessCookie(request))
      if (!session) return redirect(signInUrl(`${url.pathname}${url.search}`))
      const requestId = await createConsentRequest(ctx, session.user.id, checked)
      return redirect(`${ctx.config.dashboardUrl}/oauth/consent/${requestId}`)
    }, {
      detail: authorizeDoc,
    })
    .get('/oauth/consent/:request_id', async ({ params, request }) => {
      const session = await resolve.session(accessCookie(request))
      if (!session) return redirect(signInUrl(new URL(request.url).pathname))
      try {
        const view = await describeConsent(ctx, session.user.id, params.request_id)
        return consentPage({
          requestId: view.request_id, clientName: view.client_name, verified: view.client_verified, redirectHost: new URL(view.redirect_uri).host,
          scopes: view.scopes, workspaces: view.workspaces, csrf: await formToken(session.sessionId, view.request_id), userEmail: session.user.email,
        })
      } catch (error) {
        if (error instanceof ApiError) return errorPage(error.message, error.status)
        throw error
      }
    }, {
      params: t.Object({ request_id: t.String({ maxLength: 64 }) }),
      detail: { hide: true },
    })
    .post('/oauth/consent/:request_id', async ({ params, request, body }) => {
      const session = await resolve.session(accessCookie(request))
      if (!session) return errorPage('Your session has ended; sign in and start again from the app', 401)
      let form: URLSearchParams
      try {
        form = readForm(request, body)
      } catch {
        return errorPage('The form could not be read')
      }
      if (!timingSafeEqual(form.get('csrf') ?? '', await formToken(session.sessionId, params.request_id))) {
        return errorPage('The form has expired or did not come from this page; reload it and try again', 403)
      }
      try {
        const decision = form.get('decision')
        if (decision !== 'approve' && decision !== 'deny') return errorPage('Choose Allow or Deny')
        const scopes = form.getAll('scope')
        if (decision === 'approve' && scopes.length === 0) return errorPage('Tick at least one permission, or choose Deny')
        const location = await decideConsent(ctx, session.user.id, params.request_id, {
          approve: decision === 'approve', workspace_id: form.get('workspace_id') ?? '', ...(decision === 'approve' ? { scopes } : {}),
        })
        return redirect(location, 303)
      } catch (error) {
        if (error instanceof ApiError) return errorPage(error.issues?.[0]?.msg ?? error.message, error.status)
        throw error
      }
    }, {
      parse: 'text',
      params: t.Object({ request_id: t.String({ maxLength: 64 }) }),
      detail: { hide: true },
    })
    .post('/oauth/token', async ({ request, body, requestId, set, clientIp }) => {
      try {
        const form = readForm(request, body)
        const client = await authenticateClient(ctx, request.headers, form)
        // Per client and address: every install of a metadata-document client shares one client_id.
        await enforceRateLimit(ctx, set.headers, `oauth-token:${client.id}:${clientIp}`, ctx.config.rateLimitPerKey)
        const grantType = form.get('grant_type')
        if (grantType === 'authorization_code') return json(await exchangeCode(ctx, client, form))
        if (grantType === 'refresh_token') return json(await refresh(ctx, client, form))
        throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token')
      } catch (error) {
        return protocolError(error, requestId)
      }
    }, {
      parse: 'text',
      detail: tokenDoc,
    })
    .post('/oauth/revoke', async ({ request, body, requestId }) => {
      try {
        const form = readForm(request, body)
        const client = await authenticateClient(ctx, request.headers, form)
        const token = form.get('token')
        if (!token) throw new OAuthError('invalid_request', 'token is required')
        await revokeToken(ctx, client, token)
        return new Response(null, { status: 200, headers: { 'cache-control': 'no-store' } })
      } catch (error) {
        return protocolError(error, requestId)
      }
    }, {
      parse: 'text',
      detail: revokeDoc,
    })
}
