import { eq, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { billingEvents, PLANS, workspaces, type Plan, type SubscriptionStatus } from '../../db/schema/index.ts'
import { ApiError } from '../../errors.ts'
import { toHex, timingSafeEqual } from '../../lib/secrets.ts'

const TOLERANCE_SECONDS = 300

/** Verifies a Stripe-format `Stripe-Signature: t=...,v1=...` header over the raw body. */
export async function verifyBillingSignature(payload: string, header: string | null, secret: string, now = Date.now()) {
  const parts = (header ?? '').split(',').map((part) => part.trim().split('='))
  const timestamp = Number(parts.find(([k]) => k === 't')?.[1])
  const signatures = parts.filter(([k]) => k === 'v1').map(([, v]) => v ?? '')
  const bad = (why: string) => new ApiError('BAD_REQUEST', `Billing webhook signature rejected: ${why}`)
  if (!Number.isFinite(timestamp) || signatures.length === 0) throw bad('malformed header')
  if (Math.abs(now / 1000 - timestamp) > TOLERANCE_SECONDS) throw bad('timestamp outside the tolerance')
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const expected = toHex(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${timestamp}.${payload}`)))
  if (!signatures.some((signature) => timingSafeEqual(signature, expected))) throw bad('no matching signature')
}

const STATUS: Record<string, SubscriptionStatus> = {
  active: 'active', trialing: 'trialing', past_due: 'past_due', canceled: 'canceled', unpaid: 'unpaid',
  incomplete: 'incomplete', incomplete_expired: 'incomplete', paused: 'unpaid',
}

type StripeObject = Record<string, any>
export interface BillingEvent { id: string; type: string; created: number; data: { object: StripeObject } }

const unix = (seconds: unknown) => (typeof seconds === 'number' ? new Date(seconds * 1000) : undefined)

function planOf(subscription: StripeObject): Plan | undefined {
  const item = subscription.items?.data?.[0]
  const candidate = subscription.metadata?.plan ?? item?.price?.lookup_key ?? item?.price?.metadata?.plan
  return PLANS.includes(candidate) ? candidate : undefined
}

/** The workspace an event is about: metadata.workspace_id when the checkout set it, else the billing customer. */
function target(object: StripeObject) {
  const workspaceId = object.metadata?.workspace_id ?? object.subscription_details?.metadata?.workspace_id ?? object.parent?.subscription_details?.metadata?.workspace_id
  if (typeof workspaceId === 'string') return eq(workspaces.id, workspaceId)
  return typeof object.customer === 'string' ? eq(workspaces.billingCustomerId, object.customer) : undefined
}

/** Applies one event once (redeliveries are recorded and ignored). Unknown types are acknowledged and skipped. */
export async function applyBillingEvent(ctx: AppContext, event: BillingEvent): Promise<'applied' | 'duplicate' | 'ignored'> {
  const object = event.data?.object ?? {}
  const where = target(object)
  // Raw SQL parameters go as ISO text with an explicit type: drivers disagree on binding a Date.
  const at = sql`${new Date(event.created * 1000).toISOString()}::timestamptz`
  return ctx.db.transaction(async (tx) => {
    const [fresh] = await tx.insert(billingEvents).values({ id: event.id, type: event.type }).onConflictDoNothing().returning()
    if (!fresh) return 'duplicate'
    if (!where) return 'ignored'
    const customer = typeof object.customer === 'string' ? { billingCustomerId: object.customer } : {}
    switch (event.type) {
      case 'customer.subscription.created':
      case 'customer.subscription.updated': {
        const status = STATUS[object.status] ?? 'incomplete'
        const periodEnd = unix(object.current_period_end ?? object.items?.data?.[0]?.current_period_end)
        const plan = planOf(object)
        await tx.update(workspaces).set({
          ...customer,
          billingSubscriptionId: object.id,
          subscriptionStatus: status,
          ...(plan && { plan }),
          ...(periodEnd && { currentPeriodEnd: periodEnd }),
          // The grace window starts at the first failure and is not moved by later ones.
          pastDueSince: status === 'past_due' ? sql`coalesce(${workspaces.pastDueSince}, ${at})` : null,
          updatedAt: sql`now()`,
        }).where(where)
        return 'applied'
      }
      case 'customer.subscription.deleted':
        await tx.update(workspaces).set({ subscriptionStatus: 'canceled', pastDueSince: null, updatedAt: sql`now()` }).where(where)
        return 'applied'
      case 'invoice.payment_failed':
        await tx.update(workspaces).set({ ...customer, subscriptionStatus: 'past_due', pastDueSince: sql`coalesce(${workspaces.pastDueSince}, ${at})`, updatedAt: sql`now()` }).where(where)
        return 'applied'
      case 'invoice.paid':
      case 'invoice.payment_succeeded': {
        const periodEnd = unix(object.lines?.data?.[0]?.period?.end ?? object.period_end)
        await tx.update(workspaces).set({ ...customer, subscriptionStatus: 'active', pastDueSince: null, ...(periodEnd && { currentPeriodEnd: periodEnd }), updatedAt: sql`now()` }).where(where)
        return 'applied'
      }
      default:
        return 'ignored'
    }
  })
}
