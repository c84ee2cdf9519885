import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { comments, endUsers, events, posts, webhookDeliveryLogs } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { notifySubscribers } from '../../server/modules/notifications/fanout.ts'
import { fanOutPostUpdates } from '../../server/modules/post-subscriptions/fanout.ts'
import { configureHs256, customerToken, identify } from '../helpers/end-users.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { databaseDump } from '../helpers/integrations.ts'

// Issue 39 part 2: one end user read, exported and erased from the customer's backend.
let h: Harness
let ws: WorkspaceFixture
let api: TestClient
let secret: string
const tag = Date.now().toString(36)
const GRACE = { sub: `grace-${tag}`, email: `grace.${tag}@customer.example`, name: `Grace Erasable ${tag}` }
const session: Record<string, string> = {}
const ids: Record<string, string> = {}

const who = async (sub: string, claims: Record<string, unknown> = {}) => {
  const res = await identify(h, ws.slug, await customerToken(secret, { claims: { sub, email: `${sub}@customer.example`, name: `Person ${sub}`, ...claims } }))
  expect(res.status).toBe(200)
  session[sub] = res.body.session_token
  ids[sub] = res.body.id
}
const as = (sub: string) => h.client({ authorization: `Bearer ${session[sub]}` })
const pub = (path: string) => `/api/v1/public/${ws.slug}${path}`
const base = (id: string, slug = ws.slug) => `/api/v1/workspaces/${slug}/end-users/${encodeURIComponent(id)}`
const post = async (id: string) => (await api.get(`/api/v1/posts/${id}`)).body

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true' })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  secret = await configureHs256(ws.owner, ws.slug)
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/big-co`, { body: { name: 'Big Co', mrr: 500_000 } })).status).toBe(201)
  await who(GRACE.sub, { email: GRACE.email, name: GRACE.name, company: { id: 'big-co', name: 'Big Co' } })
  for (const sub of ['bob', 'carol', 'dave']) await who(`${sub}-${tag}`)
  // Grace writes a post (naming herself in it), votes on the team's post, comments on it; others vote on hers.
  const mine = await as(GRACE.sub).post(pub('/boards/ideas/posts'), { title: `Export for ${GRACE.name}`, body: `Write to ${GRACE.email.toUpperCase()} please` }, { headers: { 'idempotency-key': `grace-${tag}` } })
  expect(mine.status).toBe(201)
  ids.mine = mine.body.id
  const theirs = await api.post('/api/v1/boards/ideas/posts', { title: 'Team idea' })
  ids.theirs = theirs.body.id
  for (const sub of [`bob-${tag}`, `carol-${tag}`]) expect((await as(sub).post(pub(`/posts/${ids.mine}/votes`), {})).status).toBe(200)
  expect((await as(GRACE.sub).post(pub(`/posts/${ids.theirs}/votes`), {})).status).toBe(200)
  expect((await as(`bob-${tag}`).post(pub(`/posts/${ids.theirs}/votes`), {})).status).toBe(200)
  const comment = await as(GRACE.sub).post(pub(`/posts/${ids.theirs}/comments`), { body: `Signed, ${GRACE.name}` })
  expect(comment.status).toBe(201)
  ids.comment = comment.body.id
  // A member told of it by e-mail, and a receiver that echoed a payload into the delivery log.
  expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/notifications/subscriptions`, { events: ['post.created', 'comment.created'], channel: 'email' })).status).toBe(201)
  const outbox = (await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).map((event) => ({ ...event, createdAt: event.createdAt.toISOString() }))
  await notifySubscribers(h.database.sql, outbox)
  await h.database.sql.transaction((tx) => fanOutPostUpdates(tx, outbox))
  const hook = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['post.created', 'end_user.erased'] })
  expect(hook.status).toBe(201)
  ids.hook = hook.body.id
  await h.db.insert(webhookDeliveryLogs).values({ id: newId('deliveryLog'), webhookId: hook.body.id, eventId: 'evt_x', eventType: 'post.created', attempt: 1, success: true, durationMs: 3, responseBody: `{"echo":"${GRACE.name} <${GRACE.email}>"}` })
}, 120_000)
afterAll(() => h.close())

describe('reading one end user', () => {
  test('by external id or eu_ id: the record, companies and counts', async () => {
    const byExternal = await api.get(base(GRACE.sub))
    expect(byExternal.status).toBe(200)
    expect(byExternal.body).toMatchObject({ id: ids[GRACE.sub], external_id: GRACE.sub, email: GRACE.email, name: GRACE.name, verified: true, counts: { posts: 1, comments: 1, votes: 2 } })
    expect(byExternal.body.companies).toEqual([{ id: expect.stringMatching(/^co_/), external_id: 'big-co', name: 'Big Co' }])
    expect((await api.get(base(ids[GRACE.sub]!))).body.external_id).toBe(GRACE.sub)
    // A member's session reads it too.
    expect((await ws.owner.get(base(GRACE.sub), { headers: { 'x-workspace': ws.slug } })).status).toBe(200)
  })

  test('the export holds everything stored about them', async () => {
    const res = await api.get(`${base(GRACE.sub)}/export`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.body).toMatchObject({ format: 'chorus-end-user-export', version: 1, end_user: { id: ids[GRACE.sub], email: GRACE.email, name: GRACE.name, changelog_unsubscribed_at: null } })
    expect(res.body.posts.map((p: any) => p.id)).toEqual([ids.mine])
    expect(res.body.comments.map((c: any) => c.id)).toEqual([ids.comment])
    expect(res.body.votes.map((v: any) => v.post_id).sort()).toEqual([ids.mine, ids.theirs].sort())
    expect(res.body.subscriptions.map((s: any) => [s.post_id, s.reason]).sort()).toEqual([[ids.mine, 'author'], [ids.theirs, 'voter']].sort())
    expect(res.body.end_user.companies[0].external_id).toBe('big-co')
    expect(Array.isArray(res.body.sessions)).toBe(true)
  })

  test('scopes, roles, other workspaces and unknown ids', async () => {
    const noScope = h.client({ authorization: `Bearer ${await ws.key(['posts:read', 'posts:write'], 'no end users')}` })
    for (const res of [await noScope.get(base(GRACE.sub)), await noScope.get(`${base(GRACE.sub)}/export`), await noScope.delete(base(GRACE.sub))]) {
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('INSUFFICIENT_SCOPE')
    }
    const readOnly = h.client({ authorization: `Bearer ${await ws.key(['end_users:read'], 'read only')}` })
    expect((await readOnly.get(base(GRACE.sub))).status).toBe(200)
    const refused = await readOnly.delete(base(GRACE.sub))
    expect(refused.status).toBe(403)
    expect(refused.body.required_scope ?? refused.body.details?.required_scope).toBe('end_users:write')
    // A member reads but may not erase.
    const member = await addMember(h, ws, `member-${tag}@example.com`, 'member')
    expect((await member.client.get(base(GRACE.sub), { headers: { 'x-workspace': ws.slug } })).status).toBe(200)
    const byMember = await member.client.delete(base(GRACE.sub), { headers: { 'x-workspace': ws.slug } })
    expect(byMember.status).toBe(403)
    expect(byMember.body.code).toBe('FORBIDDEN')
    // Another workspace's key, through its own slug or this one's.
    const other = await workspaceFixture(h)
    const otherApi = h.client({ authorization: `Bearer ${await other.key()}` })
    expect((await otherApi.get(base(ids[GRACE.sub]!, other.slug))).status).toBe(404)
    expect((await otherApi.delete(base(GRACE.sub, other.slug))).status).toBe(404)
    expect((await otherApi.get(base(GRACE.sub))).status).toBe(404)
    expect((await api.get(base('eu_nobody'))).status).toBe(404)
    expect((await api.get(base('x'.repeat(256)))).status).toBe(422)
    const bad = await api.delete(`${base(GRACE.sub)}?content=purge`)
    expect(bad.status).toBe(422)
    expect((await h.client().get(base(GRACE.sub))).status).toBe(401)
    expect(await h.db.select().from(endUsers).where(eq(endUsers.id, ids[GRACE.sub]!))).toHaveLength(1)
  })
})

describe('linking end users to companies (companies:write)', () => {
  test('PUT links (201, then 200), demand follows; DELETE unlinks (204); unknown or foreign ids are 404', async () => {
    const carol = `carol-${tag}`
    expect((await as(carol).post(pub(`/posts/${ids.theirs}/votes`), {})).status).toBe(200)
    expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/mid-co`, { body: { name: 'Mid Co', mrr: 20_000 } })).status).toBe(201)
    const link = `/api/v1/workspaces/${ws.slug}/companies/mid-co/users/${carol}`
    const linked = await api.call('PUT', link)
    expect(linked.status).toBe(201)
    expect(linked.body).toMatchObject({ external_id: 'mid-co', users: 1 })
    expect((await api.call('PUT', link)).status).toBe(200)
    expect((await post(ids.theirs!)).demand).toMatchObject({ companies: 2, mrr: 520_000 })
    const readOnly = h.client({ authorization: `Bearer ${await ws.key(['companies:read'], 'companies read')}` })
    expect((await readOnly.call('PUT', link)).status).toBe(403)
    expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/mid-co/users/nobody`)).status).toBe(404)
    expect((await api.call('PUT', `/api/v1/workspaces/${ws.slug}/companies/no-co/users/${carol}`)).status).toBe(404)
    const other = await workspaceFixture(h)
    const otherApi = h.client({ authorization: `Bearer ${await other.key()}` })
    expect((await otherApi.call('PUT', `/api/v1/workspaces/${other.slug}/companies/mid-co/users/${ids[carol]}`)).status).toBe(404)
    expect((await api.delete(link)).status).toBe(204)
    expect((await api.delete(link)).status).toBe(204)
    expect((await post(ids.theirs!)).demand).toMatchObject({ companies: 1, mrr: 500_000 })
    expect((await as(carol).post(pub(`/posts/${ids.theirs}/votes`), {})).body.voted).toBe(false)
  })
})

describe('erasure', () => {
  test('anonymise (default): identity, votes and every mention gone; their post keeps the others\' votes', async () => {
    const theirsBefore = await post(ids.theirs!)
    expect(theirsBefore.votes).toBe(2)
    expect(theirsBefore.demand).toMatchObject({ verified_voters: 2, companies: 1, mrr: 500_000 })
    const before = await databaseDump(h)
    expect(before.toLowerCase()).toContain(GRACE.email)
    expect(before).toContain(GRACE.name)

    const res = await api.delete(base(GRACE.sub))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'erased', id: ids[GRACE.sub], content: 'anonymise', votes: 2, posts: 1, comments: 1 })

    const dump = (await databaseDump(h)).toLowerCase()
    expect(dump).toContain(ids.mine!.toLowerCase())
    expect(dump).not.toContain(GRACE.email)
    expect(dump).not.toContain(GRACE.name.toLowerCase())

    // Her post stays, by a deleted user, with Bob's and Carol's votes (her own first vote went).
    const mine = await post(ids.mine!)
    expect(mine.author).toEqual({ type: 'deleted', id: null, name: 'Deleted user', email: null })
    expect(mine.title).toBe('Export for [erased]')
    expect(mine.body).toBe('Write to [erased] please')
    expect(mine.votes).toBe(2)
    expect(mine.demand).toMatchObject({ voters: 2, verified_voters: 2 })
    // Her vote and her company's share left the team's post.
    const theirs = await post(ids.theirs!)
    expect(theirs.votes).toBe(1)
    expect(theirs.demand).toMatchObject({ voters: 1, verified_voters: 1, companies: 0, mrr: 0 })
    const [comment] = await h.db.select().from(comments).where(eq(comments.id, ids.comment!))
    expect(comment!.body).toBe('Signed, [erased]')
    expect(comment!.authorEndUserId).toBeNull()

    // The event says only who, by id; her widget session is dead; a second erasure is 404.
    const erased = await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'end_user.erased')))
    expect(erased.map((row) => row.data)).toEqual([{ end_user: { id: ids[GRACE.sub] }, content: 'anonymise' }])
    const write = await as(GRACE.sub).post(pub(`/posts/${ids.theirs}/votes`), {})
    expect(write.status).toBe(401)
    expect((await api.get(base(GRACE.sub))).status).toBe(404)
    expect((await api.delete(base(ids[GRACE.sub]!))).status).toBe(404)
    expect((await api.get('/api/v1/workspaces/' + ws.slug + '/companies/big-co')).body.users).toBe(0)
  })

  test('content=delete removes their posts (with the votes on them) and comments, with events', async () => {
    const dave = `dave-${tag}`
    const written = await as(dave).post(pub('/boards/ideas/posts'), { title: 'Dave wants', body: 'x' })
    expect((await as(`bob-${tag}`).post(pub(`/posts/${written.body.id}/votes`), {})).status).toBe(200)
    const reply = await as(dave).post(pub(`/posts/${ids.theirs}/comments`), { body: 'Dave says' })
    const commentsBefore = (await post(ids.theirs!)).comment_count

    const res = await api.delete(`${base(dave)}?content=delete`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ content: 'delete', posts: 1, comments: 1, votes: 1 })
    expect((await api.get(`/api/v1/posts/${written.body.id}`)).status).toBe(404)
    expect(await h.db.select().from(comments).where(eq(comments.id, reply.body.id))).toHaveLength(0)
    expect((await post(ids.theirs!)).comment_count).toBe(commentsBefore - 1)
    const kinds = (await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).filter((row) => JSON.stringify(row.data).includes(written.body.id) || JSON.stringify(row.data).includes(reply.body.id)).map((row) => row.type)
    expect(kinds).toContain('post.deleted')
    expect(kinds).toContain('comment.deleted')
    const dump = (await databaseDump(h)).toLowerCase()
    expect(dump).not.toContain(`${dave}@customer.example`)
    expect(dump).not.toContain(`person ${dave}`)
    expect(await h.db.select().from(posts).where(eq(posts.id, written.body.id))).toHaveLength(0)
  })
})
