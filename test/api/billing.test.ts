import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import Stripe from 'stripe'
import { billingEvents, workspaces } from '../../server/db/schema/index.ts'
import { setSubscription, workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

const SECRET = 'whsec_test_billing_secret_0123456789'
const stripe = new Stripe('sk_test_not_used_for_network')
let h: Harness
beforeAll(async () => (h = await startHarness({ BILLING_WEBHOOK_SECRET: SECRET })), 60_000)
afterAll(() => h.close())

let sequence = 0
function event(type: string, object: Record<string, unknown>, created = Math.floor(Date.now() / 1000)) {
  return { id: `evt_test_${Date.now()}_${++sequence}`, object: 'event', type, created, data: { object } }
}

async function send(payload: object, secret = SECRET) {
  const body = JSON.stringify(payload)
  const signature = await stripe.webhooks.generateTestHeaderStringAsync({ payload: body, secret })
  return h.client().call('POST', '/api/v1/billing/webhook', { raw: body, headers: { 'content-type': 'application/json', 'stripe-signature': signature } })
}

const row = async (id: string) => (await h.db.select().from(workspaces).where(eq(workspaces.id, id)))[0]!

describe('billing webhook: happy paths', () => {
  test('subscription updated sets plan, status, period end and the customer', async () => {
    const ws = await workspaceFixture(h)
    const periodEnd = Math.floor(Date.now() / 1000) + 30 * 86400
    const res = await send(event('customer.subscription.updated', {
      id: 'sub_1', customer: 'cus_1', status: 'active', metadata: { workspace_id: ws.id, plan: 'scale' },
      items: { data: [{ current_period_end: periodEnd, price: { lookup_key: 'scale' } }] },
    }))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ received: true, outcome: 'applied' })
    expect(await row(ws.id)).toMatchObject({ plan: 'scale', subscriptionStatus: 'active', billingCustomerId: 'cus_1', billingSubscriptionId: 'sub_1', pastDueSince: null })
    expect((await row(ws.id)).currentPeriodEnd?.getTime()).toBe(periodEnd * 1000)
  })

  test('past_due_since is the first failed renewal and later failures do not move it; payment clears it', async () => {
    const ws = await workspaceFixture(h)
    await setSubscription(h, ws.id, { billingCustomerId: `cus_${ws.id}`, subscriptionStatus: 'active' })
    const first = Math.floor(Date.now() / 1000) - 3 * 86400
    expect((await send(event('invoice.payment_failed', { customer: `cus_${ws.id}` }, first))).status).toBe(200)
    expect(await row(ws.id)).toMatchObject({ subscriptionStatus: 'past_due' })
    expect((await row(ws.id)).pastDueSince?.getTime()).toBe(first * 1000)
    await send(event('invoice.payment_failed', { customer: `cus_${ws.id}` }))
    await send(event('customer.subscription.updated', { id: 'sub_2', customer: `cus_${ws.id}`, status: 'past_due', current_period_end: first + 40 * 86400 }))
    expect((await row(ws.id)).pastDueSince?.getTime()).toBe(first * 1000)

    const end = Math.floor(Date.now() / 1000) + 30 * 86400
    await send(event('invoice.paid', { customer: `cus_${ws.id}`, lines: { data: [{ period: { end } }] } }))
    expect(await row(ws.id)).toMatchObject({ subscriptionStatus: 'active', pastDueSince: null })
    expect((await row(ws.id)).currentPeriodEnd?.getTime()).toBe(end * 1000)
  })

  test('subscription deleted cancels; a redelivered event is applied once', async () => {
    const ws = await workspaceFixture(h)
    const deleted = event('customer.subscription.deleted', { id: 'sub_3', customer: 'cus_3', status: 'canceled', metadata: { workspace_id: ws.id } })
    expect((await send(deleted)).body.outcome).toBe('applied')
    expect((await row(ws.id)).subscriptionStatus).toBe('canceled')
    expect((await send(deleted)).body.outcome).toBe('duplicate')
    expect(await h.db.select().from(billingEvents).where(eq(billingEvents.id, deleted.id))).toHaveLength(1)
  })

  test('unknown event types are acknowledged and ignored', async () => {
    const res = await send(event('customer.created', { id: 'cus_x' }))
    expect(res.status).toBe(200)
    expect(res.body.outcome).toBe('ignored')
  })
})

describe('billing webhook: errors', () => {
  async function sendRaw(body: string) {
    const signature = await stripe.webhooks.generateTestHeaderStringAsync({ payload: body, secret: SECRET })
    return h.client().call('POST', '/api/v1/billing/webhook', { raw: body, headers: { 'content-type': 'application/json', 'stripe-signature': signature } })
  }

  test('a signed body that is not JSON, or an event without id or type, is 400 and records nothing', async () => {
    const before = (await h.db.select().from(billingEvents)).length
    for (const body of ['not json', JSON.stringify({ type: 'invoice.paid' }), JSON.stringify({ id: 'evt_no_type' }), JSON.stringify({ id: 7, type: 'invoice.paid' })]) {
      const res = await sendRaw(body)
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'BAD_REQUEST' })
    }
    expect(await h.db.select().from(billingEvents)).toHaveLength(before)
  })

  test('an event about a workspace the service does not know is acknowledged and changes no workspace', async () => {
    const unknown = event('customer.subscription.updated', { id: 'sub_9', customer: 'cus_nobody', status: 'active', metadata: { workspace_id: 'ws_0000000000000000000000000' } })
    const res = await send(unknown)
    expect(res.status).toBe(200)
    expect(res.body.received).toBe(true)
    expect(await h.db.select().from(workspaces).where(eq(workspaces.billingSubscriptionId, 'sub_9'))).toHaveLength(0)
  })

  test('without BILLING_WEBHOOK_SECRET the route is 404', async () => {
    const bare = await startHarness()
    try {
      const res = await bare.client().call('POST', '/api/v1/billing/webhook', { raw: '{}', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=x' } })
      expect(res.status).toBe(404)
      expect(res.body.code).toBe('NOT_FOUND')
    } finally {
      await bare.close()
    }
  }, 60_000)
})

describe('billing webhook: security', () => {
  test('a wrong secret, a tampered body, a stale timestamp and no header are 400 and change nothing', async () => {
    const ws = await workspaceFixture(h)
    const payload = event('customer.subscription.deleted', { id: 'sub_4', customer: 'cus_4', metadata: { workspace_id: ws.id } })
    expect((await send(payload, 'whsec_wrong')).status).toBe(400)

    const body = JSON.stringify(payload)
    const signature = await stripe.webhooks.generateTestHeaderStringAsync({ payload: body, secret: SECRET })
    const tampered = await h.client().call('POST', '/api/v1/billing/webhook', { raw: body.replace('sub_4', 'sub_5'), headers: { 'content-type': 'application/json', 'stripe-signature': signature } })
    expect(tampered.status).toBe(400)
    const stale = await stripe.webhooks.generateTestHeaderStringAsync({ payload: body, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 3600 })
    expect((await h.client().call('POST', '/api/v1/billing/webhook', { raw: body, headers: { 'content-type': 'application/json', 'stripe-signature': stale } })).status).toBe(400)
    const none = await h.client().call('POST', '/api/v1/billing/webhook', { raw: body, headers: { 'content-type': 'application/json' } })
    expect(none.status).toBe(400)
    expect(none.body.code).toBe('BAD_REQUEST')
    expect((await row(ws.id)).subscriptionStatus).toBe('trialing')
  })
})
