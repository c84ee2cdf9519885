import { t } from 'elysia'
import { Email } from '../auth/model.ts'
import { Timestamp } from '../../lib/schema.ts'
import { EndUserResponse, endUserExample } from '../end-users/model.ts'

export const VisitorClaimRequest = t.Object({
  email: Email,
}, { additionalProperties: false, $id: 'VisitorClaimRequest', examples: [{ email: 'grace@customer.example' }] })

export const VisitorClaim = t.Object({
  claim_id: t.String({ description: 'A secret: whoever holds it receives the session once the link is clicked. Keep it in the browser that asked, send it nowhere else' }),
  expires_at: Timestamp,
}, { $id: 'VisitorClaim', examples: [{ claim_id: 'pZ3Qm1nV8cKx0T4bLr7sYwE2hJ6dFgA9uC5iN0oPqRs', expires_at: '2026-11-23T15:05:12.345Z' }], description: 'A pending claim of an e-mail identity; poll GET /public/{workspace_slug}/visitors/{claim_id}' })

export const VisitorClaimPending = t.Object({ status: t.Literal('pending') }, { $id: 'VisitorClaimPending', examples: [{ status: 'pending' }], description: 'The link in the e-mail has not been clicked yet: poll again in a few seconds' })

export const VisitorClaimConfirmed = t.Object({
  status: t.Literal('confirmed'),
  session_token: t.String({ description: 'Send as `Authorization: Bearer` on the public routes; answered once per claim' }),
  session_expires_at: Timestamp,
  end_user: EndUserResponse,
}, { $id: 'VisitorClaimConfirmed', examples: [{ status: 'confirmed', session_token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJldV8uLi4ifQ.c2lnbmF0dXJl', session_expires_at: '2026-11-23T14:05:12.345Z', end_user: { ...endUserExample, external_id: null } }] })

export const VisitorClaimParams = t.Object({ workspace_slug: t.String({ maxLength: 64, examples: ['acme'] }), claim_id: t.String({ maxLength: 128, examples: ['pZ3Qm1nV8cKx0T4bLr7sYwE2hJ6dFgA9uC5iN0oPqRs'] }) })
export const VisitorConfirmQuery = t.Object({ token: t.String({ maxLength: 128, description: 'The token of the link in the confirmation e-mail', examples: ['q8Vn2xY0kLm4Rt7Wz1Bc5Df9Gh3Jk6Np0Qs2Tv4Xy8'] }) })
