import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import type { RateRule } from '../../plugins/rate-limit.ts'
import { htmlResponse, simplePage } from '../oauth/page.ts'
import { VisitorClaim, VisitorClaimConfirmed, VisitorClaimParams, VisitorClaimPending, VisitorClaimRequest, VisitorConfirmQuery } from './model.ts'
import { confirmVisitor, pollClaim, startClaim } from './service.ts'
import { PublicWorkspaceParams } from '../../lib/schema.ts'

const tags = ['Public']
const address = (body: unknown) => String((body as { email?: string }).email ?? '').trim().toLowerCase()
const CLAIM_LIMITS: RateRule[] = [
  { name: 'visitor-claim:ip', by: ({ clientIp }) => clientIp, limit: 10, windowSeconds: 3600 },
  { name: 'visitor-claim:email', by: ({ body }) => address(body), limit: 3, windowSeconds: 3600 },
]
const POLL_LIMITS: RateRule[] = [{ name: 'visitor-poll:ip', by: ({ clientIp }) => clientIp, limit: 120 }]
const CONFIRM_LIMITS: RateRule[] = [{ name: 'visitor-confirm:ip', by: ({ clientIp }) => clientIp }]

/** Anonymous widget visitors confirming their e-mail address (docs/widget.md). */
export const visitorsModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/public/:workspace_slug/visitors' })
    .use(authPlugin(ctx))
    .post('', async ({ params, body, set }) => {
      set.status = 202
      return startClaim(ctx, params.workspace_slug, body.email)
    }, {
      rateLimit: CLAIM_LIMITS,
      params: PublicWorkspaceParams,
      body: VisitorClaimRequest,
      response: { 202: VisitorClaim },
      detail: {
        operationId: 'claimVisitorIdentity',
        tags,
        security: [],
        summary: 'Ask for a one-click link that proves an e-mail address',
        description: [
          'For an anonymous visitor whose address is confirmed and who wants to act as themselves on this device (an anonymous write naming it without its session writes as an address-less stand-in), or whose unconfirmed session ended because the address was confirmed elsewhere. Anonymous writes start the same kind of claim themselves (`Chorus-Claim-Id`).',
          'Sends an e-mail with a one-click link (valid 7 days, single use) and answers 202 with a secret `claim_id` to poll for one hour with GET /public/{workspace_slug}/visitors/{claim_id}.',
          'An unknown address creates the (unverified) identity. The answer is the same whatever the address, so it tells nothing about who wrote before. When the e-mail does not go out no link stays live: an address the mail server refuses is 422 `value_error.email_refused` on `body.email`, a refused message 502 UPSTREAM_ERROR, a mail server that does not answer 503.',
          'Limited to 10 an hour per IP and 3 an hour per address (429 with Retry-After). CORS: any origin.',
        ].join(' '),
      },
    })
    .get('/confirm', async ({ params, query }) => {
      const confirmed = await confirmVisitor(ctx, params.workspace_slug, query.token)
      if (!confirmed) return htmlResponse(simplePage('Link expired', 'This link cannot be used', 'It is unknown, expired or was already used. Ask for a new one from the feedback panel.'), 400)
      return htmlResponse(simplePage('E-mail confirmed', 'Your e-mail is confirmed', `Thank you. Your feedback to ${confirmed.workspace.name} now shows as verified. You can close this page and return to the feedback panel.`))
    }, {
      rateLimit: CONFIRM_LIMITS,
      params: PublicWorkspaceParams,
      query: VisitorConfirmQuery,
      // An HTML page for people, like the sign-in and consent pages: documented in docs/widget.md, not in the API reference.
      detail: { hide: true },
    })
    .get('/:claim_id', async ({ params, set }) => {
      set.headers['cache-control'] = 'no-store'
      const outcome = await pollClaim(ctx, params.workspace_slug, params.claim_id)
      if (outcome.status === 'pending') set.status = 202
      return outcome
    }, {
      rateLimit: POLL_LIMITS,
      params: VisitorClaimParams,
      response: { 200: VisitorClaimConfirmed, 202: VisitorClaimPending },
      detail: {
        operationId: 'pollVisitorClaim',
        tags,
        security: [],
        summary: 'Collect the session of a claim once its link is clicked',
        description: '202 `{status: "pending"}` until the link in the e-mail is clicked, then 200 `{status: "confirmed", session_token, session_expires_at, end_user}` exactly once. An unknown, expired (one hour), used or foreign-workspace claim is 404. Poll every few seconds; limited to 120 a minute per IP. Never cached. CORS: any origin.',
      },
    })
