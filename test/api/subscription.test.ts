import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { setSubscription, workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let unbilled: Harness
beforeAll(async () => {
  h = await startHarness()
  unbilled = await startHarness({ BILLING: 'off' })
}, 60_000)
afterAll(async () => {
  await h.close()
  await unbilled.close()
})

const DAY = 86_400_000
const readWith = (harness: Harness, key: string, slug: string) => harness.client().get(`/api/v1/workspaces/${slug}`, { headers: { authorization: `Bearer ${key}` } })

describe('subscription gate for API keys', () => {
  test('canceled, unpaid, incomplete and never-paid lock every key call, GET included', async () => {
    for (const status of ['canceled', 'unpaid', 'incomplete', 'none'] as const) {
      const ws = await workspaceFixture(h)
      const key = await ws.key(['workspace:read'])
      await setSubscription(h, ws.id, { subscriptionStatus: status })
      const res = await readWith(h, key, ws.slug)
      expect(`${status} ${res.status} ${res.body.code}`).toBe(`${status} 403 SUBSCRIPTION_INACTIVE`)
    }
  })

  test('active and unexpired trial pass; an expired trial locks', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['workspace:read'])
    expect((await readWith(h, key, ws.slug)).status).toBe(200)
    await setSubscription(h, ws.id, { subscriptionStatus: 'active' })
    expect((await readWith(h, key, ws.slug)).status).toBe(200)
    await setSubscription(h, ws.id, { subscriptionStatus: 'trialing', currentPeriodEnd: new Date(Date.now() - 1000) })
    expect((await readWith(h, key, ws.slug)).status).toBe(403)
  })

  test('the free plan has no API access', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['workspace:read'])
    await setSubscription(h, ws.id, { plan: 'free', subscriptionStatus: 'active' })
    const res = await readWith(h, key, ws.slug)
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('SUBSCRIPTION_INACTIVE')
  })

  test('past_due: reads stay open on day 2 and day 8, even with a renewed period end', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['workspace:read'])
    await setSubscription(h, ws.id, { subscriptionStatus: 'past_due', pastDueSince: new Date(Date.now() - 2 * DAY) })
    expect((await readWith(h, key, ws.slug)).status).toBe(200)
    await setSubscription(h, ws.id, { pastDueSince: new Date(Date.now() - 8 * DAY), currentPeriodEnd: new Date(Date.now() + 30 * DAY) })
    expect((await readWith(h, key, ws.slug)).status).toBe(200)
  })

  test('past_due: label writes work on day 2, are 403 on day 8 even with a renewed period end, while reads stay open', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['labels:read', 'labels:write'])
    const headers = { authorization: `Bearer ${key}` }
    await setSubscription(h, ws.id, { subscriptionStatus: 'past_due', pastDueSince: new Date(Date.now() - 2 * DAY) })
    expect((await h.client().post('/api/v1/labels', { name: 'Day two' }, { headers })).status).toBe(201)
    await setSubscription(h, ws.id, { pastDueSince: new Date(Date.now() - 8 * DAY), currentPeriodEnd: new Date(Date.now() + 30 * DAY) })
    const late = await h.client().post('/api/v1/labels', { name: 'Day eight' }, { headers })
    expect(late.status).toBe(403)
    expect(late.body.code).toBe('SUBSCRIPTION_INACTIVE')
    const read = await h.client().get('/api/v1/labels', { headers })
    expect(read.status).toBe(200)
    expect(read.body.map((label: any) => label.name)).toEqual(['Day two'])
  })

  test('comped never locks; BILLING=off comps every workspace', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key(['workspace:read'])
    await setSubscription(h, ws.id, { subscriptionStatus: 'canceled', plan: 'free', comped: true })
    expect((await readWith(h, key, ws.slug)).status).toBe(200)

    const selfHosted = await workspaceFixture(unbilled)
    const selfHostedKey = await selfHosted.key(['workspace:read'])
    await setSubscription(unbilled, selfHosted.id, { subscriptionStatus: 'canceled', plan: 'free' })
    expect((await readWith(unbilled, selfHostedKey, selfHosted.slug)).status).toBe(200)
  })
})

describe('dashboard sessions on a lapsed subscription', () => {
  test('canceled: reads work, writes are 403 SUBSCRIPTION_INACTIVE, the owner can still delete', async () => {
    const ws = await workspaceFixture(h)
    await setSubscription(h, ws.id, { subscriptionStatus: 'canceled' })
    expect((await ws.owner.get(`/api/v1/workspaces/${ws.slug}`)).status).toBe(200)
    expect((await ws.owner.get(`/api/v1/workspaces/${ws.slug}/members`)).status).toBe(200)
    const write = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { name: 'Still mine' })
    expect(write.status).toBe(403)
    expect(write.body.code).toBe('SUBSCRIPTION_INACTIVE')
    expect((await ws.owner.delete(`/api/v1/workspaces/${ws.slug}`)).status).toBe(200)
  })

  test('past_due within the grace window keeps the dashboard writable; after it, read-only', async () => {
    const ws = await workspaceFixture(h)
    await setSubscription(h, ws.id, { subscriptionStatus: 'past_due', pastDueSince: new Date(Date.now() - 2 * DAY) })
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { name: 'Day two' })).status).toBe(200)
    await setSubscription(h, ws.id, { pastDueSince: new Date(Date.now() - 8 * DAY) })
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { name: 'Day eight' })).status).toBe(403)
  })
})
