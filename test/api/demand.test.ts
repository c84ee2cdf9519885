import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { companies, endUserCompanies, endUsers, events, postCompanyVotes, posts } from '../../server/db/schema/index.ts'
import { configureHs256, customerToken, identify, nextIp } from '../helpers/end-users.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'

// The scenario of issue 37: two companies ($100 and $5,000 MRR), three verified voters and one
// unverified voter across two posts, then merges, MRR and plan changes, weights and visibility.
let h: Harness
let ws: WorkspaceFixture
let secret: string
let api: TestClient
const session: Record<string, string> = {}
const endUser: Record<string, string> = {}
let postA: string
let postB: string
let postC: string

const SMALL = 10_000 // $100.00
const BIG = 500_000 // $5,000.00

beforeAll(async () => {
  h = await startHarness({ TRUST_PROXY: 'true' })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  secret = await configureHs256(ws.owner, ws.slug)
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
}, 300_000)
afterAll(() => h.close())

const who = async (sub: string, claims: Record<string, unknown>) => {
  const res = await identify(h, ws.slug, await customerToken(secret, { claims: { sub, email: `${sub}@customer.example`, ...claims } }))
  expect(res.status).toBe(200)
  session[sub] = res.body.session_token
  endUser[sub] = res.body.id
  return res
}
const voteAs = async (sub: string, postId: string) => {
  const res = await h.client({ authorization: `Bearer ${session[sub]}` }).post(`/api/v1/public/${ws.slug}/posts/${postId}/votes`, {})
  expect(res.status).toBe(200)
  return res.body
}
const demandOf = async (postId: string, client = api) => (await client.get(`/api/v1/posts/${postId}`)).body.demand
const row = async (postId: string) => (await h.db.select().from(posts).where(eq(posts.id, postId)))[0]!

describe('companies', () => {
  test('PUT creates (201) then updates (200) by external id; GET, list and DELETE', async () => {
    const created = await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/small-co`, { body: { name: 'Small Co', mrr: SMALL, currency: 'USD', plan: 'starter', seats: 3, attributes: { region: 'EU' } } })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ external_id: 'small-co', name: 'Small Co', mrr: SMALL, currency: 'USD', plan: 'starter', seats: 3, attributes: { region: 'EU' }, users: 0 })
    expect(created.body.id).toMatch(/^co_/)
    const big = await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/big-co`, { body: { name: 'Big Co', mrr: BIG, plan: 'enterprise' } })
    expect(big.status).toBe(201)
    const again = await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/small-co`, { body: { seats: 4 } })
    expect(again.status).toBe(200)
    // Fields left out keep their values.
    expect(again.body).toMatchObject({ id: created.body.id, name: 'Small Co', mrr: SMALL, seats: 4, plan: 'starter' })

    const list = await api.get(`/api/v1/workspaces/${ws.slug}/companies`)
    expect(list.status).toBe(200)
    expect(list.body.items.map((c: any) => c.external_id)).toEqual(['big-co', 'small-co'])
    expect(list.body.total).toBe(2)
    expect((await api.get(`/api/v1/workspaces/${ws.slug}/companies/${created.body.id}`)).body.external_id).toBe('small-co')

    const temp = await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/temp`, { body: { name: 'Temp' } })
    expect((await api.delete(`/api/v1/workspaces/${ws.slug}/companies/temp`)).status).toBe(204)
    expect((await api.get(`/api/v1/workspaces/${ws.slug}/companies/temp`)).status).toBe(404)
    expect(await h.db.select().from(companies).where(eq(companies.id, temp.body.id))).toHaveLength(0)
  })

  test('bad input is 422 and writes nothing', async () => {
    const put = (body: unknown) => api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/bad-co`, { body })
    const cases: [unknown, string][] = [
      [{ name: 'Bad', mrr: -1 }, 'mrr'],
      [{ name: 'Bad', mrr: 10.5 }, 'mrr'],
      [{ name: 'Bad', mrr: '100' }, 'mrr'],
      [{ name: 'Bad', currency: 'XYZ' }, 'currency'],
      [{ name: 'Bad', currency: 'usd' }, 'currency'],
      [{ name: 'Bad', attributes: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])) }, 'attributes'],
      [{ name: 'Bad', attributes: { nested: { deeper: { deepest: 1 } } } }, 'attributes'],
      [{ name: 'Bad', unknown_field: 1 }, ''],
    ]
    for (const [body, field] of cases) {
      const res = await put(body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
      if (field) expect(JSON.stringify(res.body.detail)).toContain(field)
    }
    expect(await h.db.select().from(companies).where(and(eq(companies.workspaceId, ws.id), eq(companies.externalId, 'bad-co')))).toHaveLength(0)
  })

  test('scopes, roles and workspaces: companies:read/write, other workspaces 404, public routes never list them', async () => {
    const postsOnly = h.client({ authorization: `Bearer ${await ws.key(['posts:read', 'posts:write'])}` })
    expect((await postsOnly.get(`/api/v1/workspaces/${ws.slug}/companies`)).body.code).toBe('INSUFFICIENT_SCOPE')
    expect((await postsOnly.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/x`, { body: { name: 'X' } })).status).toBe(403)
    const readOnly = h.client({ authorization: `Bearer ${await ws.key(['companies:read'])}` })
    expect((await readOnly.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/x`, { body: { name: 'X' } })).status).toBe(403)
    const other = await workspaceFixture(h)
    const otherKey = h.client({ authorization: `Bearer ${await other.key()}` })
    expect((await otherKey.get(`/api/v1/workspaces/${other.slug}/companies/small-co`)).status).toBe(404)
    expect((await otherKey.get(`/api/v1/workspaces/${ws.slug}/companies`)).status).toBe(404)
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}/companies`)).status).toBe(401)
  })
})

describe('identify links end users to companies', () => {
  test('an object claim upserts and links; a companies array links several; bad entries are ignored, never fatal', async () => {
    await who('u1', { company: { id: 'small-co', name: 'Small Co' } })
    await who('u2', { company: { id: 'big-co', name: 'Big Co', mrr: BIG, currency: 'USD', plan: 'enterprise' } })
    await who('u3', { companies: [{ id: 'big-co' }, { id: 'bad', mrr: -5 }, 'not-an-object', 7] })
    const linksOf = async (sub: string) => (await h.db.select({ externalId: companies.externalId }).from(endUserCompanies)
      .innerJoin(companies, eq(companies.id, endUserCompanies.companyId)).where(eq(endUserCompanies.endUserId, endUser[sub]!))).map((r) => r.externalId).sort()
    expect(await linksOf('u1')).toEqual(['small-co'])
    expect(await linksOf('u2')).toEqual(['big-co'])
    expect(await linksOf('u3')).toEqual(['big-co'])
    // The invalid entry was not written.
    expect(await h.db.select().from(companies).where(and(eq(companies.workspaceId, ws.id), eq(companies.externalId, 'bad')))).toHaveLength(0)

    // Bad company claims: a number, a deeply nested object, an unknown currency; identify still answers 200 and links stay.
    for (const company of [42, { id: 'deep', attributes: { a: { b: { c: { d: 1 } } } } }, { id: 'cur', currency: 'ZZZ' }, [1, 2]]) {
      const res = await who('u1', { company })
      expect(res.status).toBe(200)
      expect(await linksOf('u1')).toEqual(['small-co'])
    }
    expect(await h.db.select().from(companies).where(and(eq(companies.workspaceId, ws.id), eq(companies.externalId, 'deep')))).toHaveLength(0)
    // A string is a label only.
    const labelled = await who('u4', { company: 'Some Startup' })
    expect(labelled.body.company).toBe('Some Startup')
    expect(await linksOf('u4')).toEqual([])
  })
})

describe('demand', () => {
  test('verified votes only; sort=mrr puts the $5,000 post first; filters company= and min_mrr=', async () => {
    postA = (await api.post('/api/v1/boards/ideas/posts', { title: 'Small ask' })).body.id
    postB = (await api.post('/api/v1/boards/ideas/posts', { title: 'Big ask' })).body.id
    await voteAs('u1', postA)
    // The unverified voter: an anonymous visitor who has not confirmed their address.
    const anon = await h.client({ 'x-forwarded-for': nextIp() }).post(`/api/v1/public/${ws.slug}/posts/${postA}/votes`, { email: 'anon@visitor.example' })
    expect(anon.status).toBe(200)
    await voteAs('u2', postB)
    await voteAs('u3', postB)

    expect(await demandOf(postA)).toEqual({ voters: 2, verified_voters: 1, companies: 1, mrr: SMALL, weighted: 1 })
    // Two voters of one company: it counts once.
    expect(await demandOf(postB)).toEqual({ voters: 2, verified_voters: 2, companies: 1, mrr: BIG, weighted: 2 })

    const byMrr = await api.get('/api/v1/boards/ideas/posts?sort=mrr')
    expect(byMrr.status).toBe(200)
    expect(byMrr.body.items.map((p: any) => p.id)).toEqual([postB, postA])
    expect((await api.get('/api/v1/boards/ideas/posts?sort=companies')).body.items.map((p: any) => p.id)).toEqual([postB, postA])
    const rich = await api.get(`/api/v1/boards/ideas/posts?min_mrr=${SMALL + 1}`)
    expect(rich.body.items.map((p: any) => p.id)).toEqual([postB])
    expect(rich.body.total).toBe(1)
    expect((await api.get('/api/v1/boards/ideas/posts?company=small-co')).body.items.map((p: any) => p.id)).toEqual([postA])
    expect((await api.get('/api/v1/boards/ideas/posts?company=nobody')).body.items).toEqual([])
    expect((await api.get('/api/v1/boards/ideas/posts?min_mrr=-1')).status).toBe(422)
    expect((await api.get('/api/v1/boards/ideas/posts?sort=revenue')).status).toBe(422)
  })

  test('unvoting takes the share off; confirming an address adds the voter', async () => {
    await voteAs('u3', postB)
    expect(await demandOf(postB)).toEqual({ voters: 1, verified_voters: 1, companies: 1, mrr: BIG, weighted: 1 })
    await voteAs('u3', postB)
    expect(await demandOf(postB)).toMatchObject({ verified_voters: 2, companies: 1, mrr: BIG })
    const [anon] = await h.db.select().from(endUsers).where(and(eq(endUsers.workspaceId, ws.id), eq(endUsers.email, 'anon@visitor.example')))
    await h.db.update(endUsers).set({ verifiedAt: new Date() }).where(eq(endUsers.id, anon!.id))
    expect(await demandOf(postA)).toEqual({ voters: 2, verified_voters: 2, companies: 1, mrr: SMALL, weighted: 2 })
    await h.db.update(endUsers).set({ verifiedAt: null }).where(eq(endUsers.id, anon!.id))
    expect(await demandOf(postA)).toEqual({ voters: 2, verified_voters: 1, companies: 1, mrr: SMALL, weighted: 1 })
  })

  test('an MRR change updates every post the company voted for', async () => {
    postC = (await api.post('/api/v1/boards/ideas/posts', { title: 'Another big ask' })).body.id
    await voteAs('u2', postC)
    const changed = await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/big-co`, { body: { mrr: 600_000 } })
    expect(changed.status).toBe(200)
    expect((await demandOf(postB)).mrr).toBe(600_000)
    expect((await demandOf(postC)).mrr).toBe(600_000)
    expect((await demandOf(postA)).mrr).toBe(SMALL)
    // Identify's claim changes it too.
    await who('u2', { company: { id: 'big-co', mrr: BIG } })
    expect((await demandOf(postB)).mrr).toBe(BIG)
    expect((await demandOf(postC)).mrr).toBe(BIG)
    // Another currency does not add to the workspace's USD total.
    await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/big-co`, { body: { currency: 'EUR' } })
    expect(await demandOf(postC)).toMatchObject({ companies: 1, mrr: 0 })
    await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/big-co`, { body: { currency: 'USD' } })
    expect((await demandOf(postC)).mrr).toBe(BIG)
  })

  test('a merge moves demand without double counting; the company page shows what it asked for and voted for', async () => {
    // C (u2 of big-co) into B (u2 and u3 of big-co): u2's vote is already there, big-co stays one company.
    const merged = await api.post(`/api/v1/posts/${postC}/merge`, { into_post_id: postB })
    expect(merged.status).toBe(200)
    expect(merged.body.into.demand).toEqual({ voters: 2, verified_voters: 2, companies: 1, mrr: BIG, weighted: 2 })
    expect(merged.body.post.demand).toEqual({ voters: 0, verified_voters: 0, companies: 0, mrr: 0, weighted: 0 })
    // A (u1 of small-co, the anonymous visitor) into B: both companies now.
    const again = await api.post(`/api/v1/posts/${postA}/merge`, { into_post_id: postB })
    expect(again.body.into.demand).toEqual({ voters: 4, verified_voters: 3, companies: 2, mrr: BIG + SMALL, weighted: 3 })
    expect(await h.db.select().from(postCompanyVotes).where(eq(postCompanyVotes.postId, postA))).toHaveLength(0)
    // The event carries the figures for webhooks.
    const [event] = await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'post.merged'))).orderBy(events.createdAt).limit(1)
    expect((event!.data as any).into.demand).toMatchObject({ companies: 1, mrr: BIG })

    const requestedPost = (await h.client({ authorization: `Bearer ${session.u1}` }).post(`/api/v1/public/${ws.slug}/boards/ideas/posts`, { title: 'From small co' })).body.id
    const page = await api.get(`/api/v1/workspaces/${ws.slug}/companies/small-co`)
    expect(page.status).toBe(200)
    expect(page.body).toMatchObject({ external_id: 'small-co', users: 1 })
    expect(page.body.requested.map((p: any) => p.id)).toEqual([requestedPost])
    // u1's own new post carries its author's first vote (docs/notifications.md), so it is among what the company voted for.
    expect(page.body.voted.map((p: any) => p.id).sort()).toEqual([postB, requestedPost].sort())
    expect(page.body.voted.find((p: any) => p.id === postB).demand.companies).toBe(2)
  })

  test('plan weights: settings recount, a plan change re-weighs, a deleted company leaves', async () => {
    const set = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/demand-settings`, { plan_weights: { enterprise: 5 }, default_weight: 1 }, { headers: { 'x-workspace': ws.slug } })
    expect(set.status).toBe(200)
    expect(set.body).toEqual({ currency: 'USD', plan_weights: { enterprise: 5 }, default_weight: 1, revenue_visible_to: 'member' })
    // B: u2 and u3 (enterprise, 5 each), u1 (starter, 1), the anonymous visitor (unverified, 0).
    expect((await demandOf(postB)).weighted).toBe(11)
    await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/small-co`, { body: { plan: 'enterprise' } })
    expect((await demandOf(postB)).weighted).toBe(15)
    await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/small-co`, { body: { plan: 'starter' } })
    expect((await demandOf(postB)).weighted).toBe(11)
    // A user moving companies moves their share.
    await who('u1', { companies: [] })
    expect(await demandOf(postB)).toMatchObject({ verified_voters: 3, companies: 1, mrr: BIG, weighted: 11 })
    await who('u1', { company: { id: 'small-co' } })
    expect(await demandOf(postB)).toMatchObject({ companies: 2, mrr: BIG + SMALL })

    const kept = { ...(await row(postB)) }
    expect((await api.delete(`/api/v1/workspaces/${ws.slug}/companies/small-co`)).status).toBe(204)
    expect(await demandOf(postB)).toEqual({ voters: 4, verified_voters: 3, companies: 1, mrr: BIG, weighted: 11 })
    // A full recount agrees with what the triggers kept.
    await h.db.execute(`select chorus_demand_recount('${ws.id}')` as never)
    const recounted = await row(postB)
    expect([recounted.demandCompanies, recounted.demandMrr, recounted.demandVerifiedVoters, recounted.demandWeighted]).toEqual([1, BIG, 3, 11])
    expect(kept.demandCompanies).toBe(2)

    const bad = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/demand-settings`, { currency: 'ABC' }, { headers: { 'x-workspace': ws.slug } })
    expect(bad.status).toBe(422)
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/demand-settings`, { default_weight: -1 }, { headers: { 'x-workspace': ws.slug } })).status).toBe(422)
  })

  test('revenue visibility: members and keys without companies:read see mrr null and cannot sort by it', async () => {
    const member = await addMember(h, ws, `member-${Date.now()}@example.com`, 'member')
    const asMember = (path: string) => member.client.get(path, { headers: { 'x-workspace': ws.slug } })
    expect((await asMember(`/api/v1/posts/${postB}`)).body.demand.mrr).toBe(BIG)
    expect((await member.client.patch(`/api/v1/workspaces/${ws.slug}/demand-settings`, { revenue_visible_to: 'admin' }, { headers: { 'x-workspace': ws.slug } })).status).toBe(403)
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/demand-settings`, { revenue_visible_to: 'admin' }, { headers: { 'x-workspace': ws.slug } })).status).toBe(200)
    const hidden = await asMember(`/api/v1/posts/${postB}`)
    expect(hidden.body.demand).toEqual({ voters: 4, verified_voters: 3, companies: 1, mrr: null, weighted: 11 })
    expect((await asMember('/api/v1/boards/ideas/posts')).body.items.every((p: any) => p.demand.mrr === null)).toBe(true)
    // The team inbox follows the same rule (it is built from the same post responses).
    const inbox = await asMember(`/api/v1/workspaces/${ws.slug}/inbox`)
    expect(inbox.status).toBe(200)
    expect(inbox.body.items.length).toBeGreaterThan(0)
    expect(inbox.body.items.every((p: any) => p.demand.mrr === null)).toBe(true)
    expect((await ws.owner.get(`/api/v1/workspaces/${ws.slug}/inbox`)).body.items.some((p: any) => p.demand.mrr === BIG)).toBe(true)
    expect((await asMember('/api/v1/boards/ideas/posts?sort=mrr')).status).toBe(403)
    expect((await asMember('/api/v1/boards/ideas/posts?min_mrr=1')).status).toBe(403)
    expect((await asMember(`/api/v1/workspaces/${ws.slug}/companies/big-co`)).body.mrr).toBeNull()
    expect((await ws.owner.get(`/api/v1/posts/${postB}`, { headers: { 'x-workspace': ws.slug } })).body.demand.mrr).toBe(BIG)
    const postsKey = h.client({ authorization: `Bearer ${await ws.key(['posts:read'])}` })
    expect((await postsKey.get(`/api/v1/posts/${postB}`)).body.demand.mrr).toBeNull()
    expect((await api.get(`/api/v1/posts/${postB}`)).body.demand.mrr).toBe(BIG)
  })

  test('portal and widget reads never carry companies, revenue or scores', async () => {
    const reads = [
      `/api/v1/public/${ws.slug}/boards/ideas/posts`,
      `/api/v1/public/${ws.slug}/posts/${postB}`,
      `/api/v1/public/${ws.slug}/posts`,
    ]
    for (const path of reads) {
      for (const client of [h.client(), h.client({ authorization: `Bearer ${session.u2}` })]) {
        const res = await client.get(path)
        expect(res.status).toBe(200)
        const text = JSON.stringify(res.body)
        for (const word of ['demand', 'mrr', 'score', 'factors', 'big-co', 'Big Co', 'weighted']) expect(text).not.toContain(word)
      }
    }
    expect((await h.client().get(`/api/v1/public/${ws.slug}/boards/ideas/posts?sort=mrr`)).status).toBe(422)
    expect((await h.client().get(`/api/v1/public/${ws.slug}/boards/ideas/posts?min_mrr=1`)).status).toBe(422)
    const portal = await h.client().get(`/portal/${ws.slug}/boards/ideas`)
    if (portal.status === 200) expect(String(portal.body)).not.toContain('Big Co')
  })
})

describe('scores', () => {
  const scoring = (body: unknown, client = ws.owner) => client.call('PUT', `/api/v1/workspaces/${ws.slug}/scoring`, { body, headers: { 'x-workspace': ws.slug } })
  test('RICE equals reach × impact × confidence / effort to 1e-9, with history, sort=score and score.changed', async () => {
    expect((await api.get(`/api/v1/workspaces/${ws.slug}/scoring`)).body).toEqual({ model: 'rice', formula: null, factors: [] })
    const factors = { reach: 1234, impact: 2.5, confidence: 0.8, effort: 3.7 }
    const res = await api.patch(`/api/v1/posts/${postB}`, { factors })
    expect(res.status).toBe(200)
    expect(Math.abs(res.body.score - (1234 * 2.5 * 0.8) / 3.7)).toBeLessThan(1e-9)
    expect(res.body.factors).toEqual(factors)
    const other = (await api.post('/api/v1/boards/ideas/posts', { title: 'Scored low' })).body.id
    await api.patch(`/api/v1/posts/${other}`, { factors: { reach: 1, impact: 1, confidence: 1, effort: 1 } })
    const sorted = (await api.get('/api/v1/boards/ideas/posts?sort=score')).body.items.map((p: any) => p.id)
    expect(sorted.slice(0, 2)).toEqual([postB, other])
    // Clearing a factor leaves the post unscored (last in sort=score).
    expect((await api.patch(`/api/v1/posts/${other}`, { factors: { effort: null } })).body.score).toBeNull()
    const after = (await api.get('/api/v1/boards/ideas/posts?sort=score')).body.items
    expect(after[0].id).toBe(postB)
    expect(after.slice(1).every((p: any) => p.score === null)).toBe(true)
    expect(after.map((p: any) => p.id)).toContain(other)
    const history = await api.get(`/api/v1/posts/${other}/score-history`)
    expect(history.body.items.map((c: any) => c.to_score)).toEqual([null, 1])
    const changed = (await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'score.changed')))).map((e) => (e.data as any).to_score)
    expect(changed).toContain(1)
    expect(changed).toContain(null)
  })

  test('a custom formula over factors and demand; bad formulas are 422 when saved; only admins save', async () => {
    const saved = await scoring({ model: 'custom', formula: 'max(reach, 1) * impact / effort + log(demand.mrr / 100) + min(demand.companies, 3)' })
    expect(saved.status).toBe(200)
    const post = (await api.get(`/api/v1/posts/${postB}`)).body
    const expected = (Math.max(1234, 1) * 2.5) / 3.7 + Math.log(BIG / 100) + Math.min(1, 3)
    expect(Math.abs(post.score - expected)).toBeLessThan(1e-9)
    for (const formula of ['reach * unknown', 'reach / 0', 'reach / (2 - 2)', 'reach +', 'eval(reach)', 'reach; drop table posts', 'log(reach, 2)', '('.repeat(40) + '1' + ')'.repeat(40)]) {
      const res = await scoring({ model: 'custom', formula })
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
    }
    expect((await api.get(`/api/v1/workspaces/${ws.slug}/scoring`)).body.formula).toContain('log(demand.mrr / 100)')
    expect((await scoring({ model: 'custom', formula: 'urgency * 2' })).status).toBe(422)
    expect((await scoring({ model: 'custom', formula: 'urgency * 2', factors: ['urgency'] })).status).toBe(200)
    const member = await addMember(h, ws, `scorer-${Date.now()}@example.com`, 'member')
    expect((await scoring({ model: 'rice' }, member.client)).status).toBe(403)
    expect((await scoring({ model: 'rice' })).status).toBe(200)
    expect(Math.abs((await api.get(`/api/v1/posts/${postB}`)).body.score - (1234 * 2.5 * 0.8) / 3.7)).toBeLessThan(1e-9)
    // Never public.
    const pub = JSON.stringify((await h.client().get(`/api/v1/public/${ws.slug}/posts/${postB}`)).body)
    expect(pub).not.toContain('score')
    expect(pub).not.toContain('reach')
  })
})

describe('scores over demand stay current', () => {
  const scoring = (body: unknown) => ws.owner.call('PUT', `/api/v1/workspaces/${ws.slug}/scoring`, { body, headers: { 'x-workspace': ws.slug } })
  const scoreOf = async (postId: string) => (await api.get(`/api/v1/posts/${postId}`)).body.score
  const scoreEvents = async (postId: string) => (await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'score.changed'))).orderBy(events.id))
    .filter((event) => (event.data as any).post.id === postId).map((event) => event.data as any)

  test('a custom formula over demand.* follows a vote, an unvote, an MRR change and a merge, with one score.changed per real change', async () => {
    expect((await scoring({ model: 'custom', formula: 'demand.mrr / 100 + demand.verified_voters' })).status).toBe(200)
    expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/score-co`, { body: { name: 'Score Co', mrr: 20_000 } })).status).toBe(201)
    await who('s1', { company: { id: 'score-co', name: 'Score Co' } })
    await who('s2', { company: { id: 'score-co', name: 'Score Co' } })
    const p = (await api.post('/api/v1/boards/ideas/posts', { title: 'Scored by demand' })).body.id
    const q = (await api.post('/api/v1/boards/ideas/posts', { title: 'Scored by demand too' })).body.id
    // A new post has the formula's value at no demand.
    expect(await scoreOf(p)).toBe(0)

    await voteAs('s1', p) // one vote moves vote_count and demand in two updates: one event
    expect(await scoreOf(p)).toBe(201)
    expect((await scoreEvents(p)).map((e) => [e.from_score, e.to_score])).toEqual([[0, 201]])
    await voteAs('s2', p) // same company: mrr counted once
    expect(await scoreOf(p)).toBe(202)
    await voteAs('s2', p) // unvote
    expect(await scoreOf(p)).toBe(201)
    expect((await scoreEvents(p)).map((e) => e.to_score)).toEqual([201, 202, 201])

    expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/score-co`, { body: { mrr: 50_000 } })).status).toBe(200)
    expect(await scoreOf(p)).toBe(501)
    // A change that moves no figure the formula reads raises nothing.
    expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/score-co`, { body: { seats: 9 } })).status).toBe(200)
    const before = (await scoreEvents(p)).length
    expect(before).toBe(4)

    await voteAs('s2', q)
    expect(await scoreOf(q)).toBe(501)
    const merged = await api.post(`/api/v1/posts/${q}/merge`, { into_post_id: p })
    expect(merged.status).toBe(200)
    // Both voters of Score Co on p now: the company once, two verified voters.
    expect(await scoreOf(p)).toBe(502)
    expect(await scoreOf(q)).toBe(0)
    const events_ = await scoreEvents(p)
    expect(events_).toHaveLength(5)
    expect(events_.at(-1)).toMatchObject({ from_score: 501, to_score: 502, cause: 'demand', post: { id: p, score: 502, demand: { companies: 1, mrr: 50_000, verified_voters: 2 } } })
    expect((await scoreEvents(q)).map((e) => e.to_score)).toEqual([501, 0])
    expect(merged.body.into.score).toBe(502)

    // sort=score follows the stored, current scores.
    const sorted = (await api.get('/api/v1/boards/ideas/posts?sort=score')).body.items
    expect(sorted.find((item: any) => item.id === p).score).toBe(502)
    const scores = sorted.map((item: any) => item.score ?? -Infinity)
    expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a))
    // Back to a model without demand: votes no longer touch scores.
    expect((await scoring({ model: 'rice' })).status).toBe(200)
    await voteAs('s1', p)
    expect((await scoreEvents(p))).toHaveLength(5)
  })

  // The company writer moves every post in one statement (migration 0054): the scores with it, and
  // one event per post whose score moved, none for the others.
  test('a company MRR or plan change rescores all its posts: one score.changed per moved score, none for the rest', async () => {
    const settings = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/demand-settings`, { plan_weights: { enterprise: 5, gold: 3 } }, { headers: { 'x-workspace': ws.slug } })
    expect(settings.status).toBe(200)
    expect((await scoring({ model: 'custom', formula: 'reach * demand.mrr / 100 + demand.weighted' })).status).toBe(200)
    for (const id of ['w1', 'w2']) await who(id, { company: { id: 'wide-co', name: 'Wide Co', mrr: 10_000 } })
    await who('w3', { company: { id: 'other-co', name: 'Other Co', mrr: 0 } })
    const post = async (title: string, reach?: number) => {
      const id = (await api.post('/api/v1/boards/ideas/posts', { title })).body.id
      if (reach !== undefined) expect((await api.patch(`/api/v1/posts/${id}`, { factors: { reach } })).status).toBe(200)
      return id
    }
    const [moves, flat, unscored, elsewhere] = [await post('Moves with Wide Co', 1), await post('Reach zero', 0), await post('No reach'), await post('Other Co only', 1)]
    for (const id of [moves, flat, unscored]) await voteAs('w1', id)
    await voteAs('w2', moves)
    await voteAs('w3', elsewhere)
    expect([await scoreOf(moves), await scoreOf(flat), await scoreOf(unscored), await scoreOf(elsewhere)]).toEqual([102, 1, null, 1])
    const counts = async () => Promise.all([moves, flat, unscored, elsewhere].map(async (id) => (await scoreEvents(id)).length))
    const before = await counts()
    // Events per post since `before`.
    const added = async () => (await counts()).map((n, i) => n - before[i]!)

    expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/wide-co`, { body: { mrr: 30_000 } })).status).toBe(200)
    expect([await scoreOf(moves), await scoreOf(flat), await scoreOf(unscored), await scoreOf(elsewhere)]).toEqual([302, 1, null, 1])
    expect((await demandOf(flat)).mrr).toBe(30_000)
    expect(await added()).toEqual([1, 0, 0, 0])
    expect((await scoreEvents(moves)).at(-1)).toMatchObject({ from_score: 102, to_score: 302, cause: 'demand', post: { id: moves, score: 302, demand: { mrr: 30_000, weighted: 2 } } })
    expect((await row(moves)).score).toBe(302)

    // A plan change re-weighs the members' votes: w1 and w2 weigh 3 now.
    expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/wide-co`, { body: { plan: 'gold' } })).status).toBe(200)
    expect([await scoreOf(moves), await scoreOf(flat), await scoreOf(unscored)]).toEqual([306, 3, null])
    expect(await added()).toEqual([2, 1, 0, 0])
    expect((await scoreEvents(flat)).at(-1)).toMatchObject({ from_score: 1, to_score: 3, post: { demand: { weighted: 3 } } })

    // Identify moves Wide Co's MRR and links w1 to one more company in one transaction: one event each.
    await who('w1', { companies: [{ id: 'wide-co', mrr: 40_000 }, { id: 'extra-co', name: 'Extra Co', mrr: 5_000 }] })
    expect(await scoreOf(moves)).toBe(456)
    expect(await demandOf(moves)).toMatchObject({ companies: 2, mrr: 45_000 })
    expect(await added()).toEqual([3, 1, 0, 0])
    expect((await scoreEvents(moves)).at(-1)).toMatchObject({ from_score: 306, to_score: 456, post: { score: 456, demand: { companies: 2, mrr: 45_000 } } })

    // Moved and moved back in one transaction: nothing to tell; moved twice: one event, first to last.
    const wide = await h.db.select().from(companies).where(and(eq(companies.workspaceId, ws.id), eq(companies.externalId, 'wide-co')))
    await h.db.transaction(async (tx) => {
      await tx.update(companies).set({ mrr: 90_000 }).where(eq(companies.id, wide[0]!.id))
      await tx.update(companies).set({ mrr: 40_000 }).where(eq(companies.id, wide[0]!.id))
    })
    expect(await added()).toEqual([3, 1, 0, 0])
    await h.db.transaction(async (tx) => {
      await tx.update(companies).set({ mrr: 90_000 }).where(eq(companies.id, wide[0]!.id))
      await tx.update(companies).set({ mrr: 60_000 }).where(eq(companies.id, wide[0]!.id))
    })
    expect(await scoreOf(moves)).toBe(656)
    expect((await scoreEvents(moves)).slice(-1)).toMatchObject([{ from_score: 456, to_score: 656 }])
    expect(await added()).toEqual([4, 1, 0, 0])

    // A formula that overflows a double on some posts: the change still lands, those scores are null.
    expect((await scoring({ model: 'custom', formula: 'demand.mrr * 1e300 * 1e300 + 1' })).status).toBe(200)
    expect([await scoreOf(elsewhere), await scoreOf(moves)]).toEqual([1, null])
    const changed = await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/other-co`, { body: { mrr: 1_000 } })
    expect(changed.status).toBe(200)
    expect(await demandOf(elsewhere)).toMatchObject({ mrr: 1_000 })
    expect(await scoreOf(elsewhere)).toBeNull()
    expect((await scoreEvents(elsewhere)).at(-1)).toMatchObject({ from_score: 1, to_score: null, post: { demand: { mrr: 1_000 } } })
    expect((await scoring({ model: 'rice' })).status).toBe(200)
  })
})
