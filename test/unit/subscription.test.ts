import { describe, expect, test } from 'bun:test'
import { apiKeyAccess, dashboardAccess, type SubscriptionState } from '../../server/lib/subscription.ts'

const now = new Date('2026-11-22T12:00:00.000Z')
const days = (n: number) => new Date(now.getTime() - n * 86_400_000)
const state = (over: Partial<SubscriptionState>): SubscriptionState => ({ plan: 'startup', subscriptionStatus: 'active', comped: false, pastDueSince: null, currentPeriodEnd: null, ...over })

describe('apiKeyAccess', () => {
  test('past_due grace is exactly 7 days from past_due_since', () => {
    expect(apiKeyAccess(state({ subscriptionStatus: 'past_due', pastDueSince: days(6.99) }), now, true)).toBe('full')
    expect(apiKeyAccess(state({ subscriptionStatus: 'past_due', pastDueSince: days(7) }), now, true)).toBe('full')
    expect(apiKeyAccess(state({ subscriptionStatus: 'past_due', pastDueSince: days(7.01) }), now, true)).toBe('read')
    // A renewed period end does not extend the window.
    expect(apiKeyAccess(state({ subscriptionStatus: 'past_due', pastDueSince: days(8), currentPeriodEnd: days(-30) }), now, true)).toBe('read')
  })

  test('plans: startup, scale and business are entitled; free is not', () => {
    for (const plan of ['startup', 'scale', 'business'] as const) expect(apiKeyAccess(state({ plan }), now, true)).toBe('full')
    expect(apiKeyAccess(state({ plan: 'free' }), now, true)).toBe('none')
  })

  test('locked statuses, comped and billing off', () => {
    for (const subscriptionStatus of ['canceled', 'unpaid', 'incomplete', 'none'] as const) {
      expect(apiKeyAccess(state({ subscriptionStatus }), now, true)).toBe('none')
      expect(apiKeyAccess(state({ subscriptionStatus, comped: true }), now, true)).toBe('full')
      expect(apiKeyAccess(state({ subscriptionStatus }), now, false)).toBe('full')
    }
  })
})

describe('dashboardAccess', () => {
  test('lapsed subscriptions are read-only; free and never-paid keep the dashboard', () => {
    expect(dashboardAccess(state({ subscriptionStatus: 'canceled' }), now, true)).toBe('read')
    expect(dashboardAccess(state({ subscriptionStatus: 'past_due', pastDueSince: days(8) }), now, true)).toBe('read')
    expect(dashboardAccess(state({ subscriptionStatus: 'past_due', pastDueSince: days(2) }), now, true)).toBe('full')
    expect(dashboardAccess(state({ plan: 'free', subscriptionStatus: 'none' }), now, true)).toBe('full')
  })
})
