import type { Plan, SubscriptionStatus } from '../db/schema/index.ts'

export const PAST_DUE_GRACE_MS = 7 * 24 * 3600 * 1000
const ENTITLED_PLANS: Plan[] = ['startup', 'scale', 'business']

export interface SubscriptionState {
  plan: Plan
  subscriptionStatus: SubscriptionStatus
  comped: boolean
  pastDueSince: Date | null
  currentPeriodEnd: Date | null
}

/** What an API key may do (docs/api.md#subscription-gate): everything, only reads, or nothing. */
export type Access = 'full' | 'read' | 'none'

export function apiKeyAccess(ws: SubscriptionState, now: Date, billingEnabled: boolean): Access {
  if (!billingEnabled || ws.comped) return 'full'
  if (!ENTITLED_PLANS.includes(ws.plan)) return 'none'
  return statusAccess(ws, now)
}

function statusAccess(ws: SubscriptionState, now: Date): Access {
  switch (ws.subscriptionStatus) {
    case 'active':
      return 'full'
    case 'trialing':
      return ws.currentPeriodEnd && ws.currentPeriodEnd > now ? 'full' : 'none'
    case 'past_due':
      // The window counts from the first failed renewal only; a renewed current_period_end does not extend it.
      if (!ws.pastDueSince) return 'full'
      return now.getTime() - ws.pastDueSince.getTime() <= PAST_DUE_GRACE_MS ? 'full' : 'read'
    default:
      return 'none'
  }
}

/**
 * Dashboard sessions never lose reads; they become read-only once the subscription has lapsed
 * (canceled, unpaid, incomplete, or past_due beyond the grace window). A free or never-paid workspace keeps its dashboard.
 */
export function dashboardAccess(ws: SubscriptionState, now: Date, billingEnabled: boolean): Access {
  if (!billingEnabled || ws.comped) return 'full'
  if (['canceled', 'unpaid', 'incomplete'].includes(ws.subscriptionStatus)) return 'read'
  if (ws.subscriptionStatus === 'past_due') return statusAccess(ws, now) === 'full' ? 'full' : 'read'
  return 'full'
}
