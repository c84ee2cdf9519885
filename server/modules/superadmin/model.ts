import { t } from 'elysia'
import { Plan, SubscriptionStatus } from '../workspaces/model.ts'
import { Timestamp } from '../../lib/schema.ts'

export const SubscriptionUpdate = t.Object({
  plan: t.Optional(Plan),
  subscription_status: t.Optional(SubscriptionStatus),
  comped: t.Optional(t.Boolean()),
  past_due_since: t.Optional(t.Nullable(t.String({ format: 'date-time' }))),
  current_period_end: t.Optional(t.Nullable(t.String({ format: 'date-time' }))),
}, { additionalProperties: false, minProperties: 1, $id: 'WorkspaceSubscriptionUpdate', examples: [{ plan: 'scale', subscription_status: 'active', comped: false }] })

export const ImpersonationTokenResponse = t.Object({
  token: t.String({ description: 'A JWT with `act_as` and `actor` claims; single use, valid 5 minutes' }),
  expires_at: Timestamp,
}, { $id: 'ImpersonationToken', examples: [{ token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfLi4uIn0.c2lnbmF0dXJl', expires_at: '2026-11-23T14:05:12.345Z' }] })

export const ImpersonateApplyRequest = t.Object({ token: t.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false, $id: 'ImpersonateApplyRequest', examples: [{ token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfLi4uIn0.c2lnbmF0dXJl' }] })
