import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { deleteGrant, listGrants } from './grants.ts'
import { ConsentDecision, ConsentParams, ConsentRequestResponse, ConsentResult, GrantParams, GrantsQuery, OAuthGrantResponse } from './model.ts'
import { decideConsent, describeConsent } from './service.ts'

const tags = ['OAuth consent and grants']

/** The dashboard's side of the authorization server: answering consent requests, listing and revoking grants. */
export const oauthApiModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/oauth' })
    .use(authPlugin(ctx))
    .get('/consent/:request_id', ({ user, params }) => describeConsent(ctx, user.id, params.request_id), {
      user: true,
      params: ConsentParams,
      response: { 200: ConsentRequestResponse },
      detail: {
        operationId: 'getConsentRequest', tags, summary: 'What an app asks for',
        description: 'The consent request the authorize endpoint created (`ocr_...`): the client (its name is self-asserted, so `client_verified` is false), where the browser goes afterwards, each requested scope in words, and the workspaces the user may grant (admin or owner). Only the user who started it sees it (404 otherwise); it expires after 10 minutes (404) and is single use (409 once answered).',
      },
    })
    .post('/consent/:request_id', async ({ user, params, body }) => ({ redirect_to: await decideConsent(ctx, user.id, params.request_id, body) }), {
      user: true,
      params: ConsentParams,
      body: ConsentDecision,
      response: { 200: ConsentResult },
      detail: {
        operationId: 'decideConsentRequest', tags, summary: 'Approve or deny an app',
        description: 'Approving returns the client redirect URI with a 60-second single-use `code`, the `state` and `iss`; denying returns it with `error=access_denied`. `scopes` may narrow the request, never widen it (422). The workspace must be one where the user is admin or owner (403 for a member, 404 for a stranger). A request is answered once (409 afterwards).',
      },
    })
    .get('/grants', ({ user, query }) => listGrants(ctx.db, user.id, query.workspace_id), {
      user: true,
      query: GrantsQuery,
      response: { 200: t.Array(OAuthGrantResponse) },
      detail: {
        operationId: 'listOAuthGrants', tags, summary: 'Apps connected to a workspace',
        description: 'Each grant is one refresh-token family of one app. Admins and the owner see every grant of the workspace; members see the ones they made. 404 when the user is not a member.',
      },
    })
    .delete('/grants/:family_id', async ({ user, params, set }) => {
      await deleteGrant(ctx.db, user.id, params.family_id)
      set.status = 204
    }, {
      user: true,
      params: GrantParams,
      response: { 204: t.Void() },
      detail: {
        operationId: 'deleteOAuthGrant', tags, summary: 'Disconnect an app',
        description: 'Revokes the family: its access and refresh tokens are refused from the next request on (401 with `WWW-Authenticate: Bearer error="invalid_token"`). Idempotent. The grant\'s own user and the workspace\'s admins may delete it; anyone else gets 404.',
      },
    })
