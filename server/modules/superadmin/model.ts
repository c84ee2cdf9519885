import { t } from 'elysia'
import { Timestamp } from '../user/model.ts'
import { Plan, SubscriptionStatus } from '../workspaces/model.ts'

export const SubscriptionUpdate = t.Object({
  plan: t.Optional(Plan),
  subscription_status: t.Optional(SubscriptionStatus),
  comped: t.Optional(t.Boolean()),
  past_due_since: t.Optional(t.Nullable(t.String({ format: 'date-time' }))),
  current_period_end: t.Optional(t.Nullable(t.String({ format: 'date-time' }))),
}, { additionalProperties: false, minProperties: 1, description: 'SubscriptionUpdate' })

export const ImpersonationTokenResponse = t.Object({
  token: t.String({ description: 'A JWT with `act_as` and `actor` claims; single use, valid 5 minutes' }),
  expires_at: Timestamp,
}, { description: 'ImpersonationTokenResponse' })

export const ImpersonateApplyRequest = t.Object({ token: t.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false, description: 'ImpersonateApplyRequest' })
