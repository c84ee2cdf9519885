import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { posts, votes } from '../../server/db/schema/index.ts'
import { addMember, boardFixture, setSubscription, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { signIn } from '../helpers/session.ts'

let h: Harness
let ws: WorkspaceFixture
let api: TestClient
let member: TestClient
const ids: Record<string, string> = {}
const VIEWS = ['metrics', 'dashboard', 'onboarding-progress']
const email = (n: number) => `e${n}@customer.example`

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true' })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'bugs')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  member = (await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')).client
  const post = async (name: string, board: string, body: Record<string, unknown>) => {
    const res = await api.post(`/api/v1/boards/${board}/posts`, body)
    if (res.status !== 201) throw new Error(`post ${name}: ${res.status} ${JSON.stringify(res.body)}`)
    ids[name] = res.body.id
  }
  const vote = (name: string, voters: number[]) => Promise.all(voters.map((n) => api.post(`/api/v1/posts/${ids[name]}/votes`, { email: email(n) })))
  await post('alpha', 'ideas', { title: 'Alpha', email: email(1) })
  await post('beta', 'ideas', { title: 'Beta', status: 'Planned' })
  await post('gamma', 'bugs', { title: 'Gamma', status: 'In progress', email: email(2) })
  await post('delta', 'ideas', { title: 'Delta', status: 'Closed', email: email(3) })
  await post('epsilon', 'ideas', { title: 'Epsilon', email: email(4) })
  await post('zeta', 'ideas', { title: 'Zeta' })
  await post('eta', 'bugs', { title: 'Eta', status: 'Complete' })
  await vote('alpha', [1, 2, 3, 4, 5])
  await vote('beta', [1, 2, 3])
  await vote('gamma', [1])
  await vote('delta', [1, 2, 3, 4, 5, 6, 7])
  await vote('zeta', [1, 6])
  await api.post(`/api/v1/posts/${ids.gamma}/comments`, { body: 'Team answer' })
  await api.post(`/api/v1/posts/${ids.epsilon}/comments`, { body: 'Team-only note', internal: true })
  await api.post(`/api/v1/posts/${ids.epsilon}/comments`, { body: 'Any news?', email: email(4) })
  await api.post(`/api/v1/posts/${ids.zeta}/comments`, { body: 'Same as Alpha', email: email(5) })
  // Zeta folds into Alpha: e1's vote is deduplicated, e6's and the comment move.
  await api.post(`/api/v1/posts/${ids.zeta}/merge`, { into_post_id: ids.alpha })
  await ws.owner.post(`/api/v1/posts/${ids.eta}/comments`, { body: 'Shipped' }, { headers: { 'x-workspace': ws.slug } })
  ids.doomed = (await api.post('/api/v1/boards/ideas/posts', { title: 'Doomed' })).body.id
  await api.delete(`/api/v1/posts/${ids.doomed}`)
  // Beta moves 3 days back, and one of Delta's votes out of the 30-day window.
  await h.db.update(posts).set({ createdAt: sql`now() - interval '3 days'` }).where(eq(posts.id, ids.beta!))
  const [old] = await h.db.select().from(votes).where(eq(votes.postId, ids.delta!)).limit(1)
  await h.db.update(votes).set({ createdAt: sql`now() - interval '40 days'` }).where(eq(votes.id, old!.id))
}, 60_000)
afterAll(() => h.close())

const view = (client: TestClient, name: string, slug = ws.slug) => client.get(`/api/v1/workspaces/${slug}/${name}`)
const utcDay = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10)

describe('views: happy paths', () => {
  test('metrics: totals match the rows, merged posts left out', async () => {
    const res = await view(api, 'metrics')
    expect(res.status).toBe(200)
    expect(res.body.posts.total).toBe(6)
    expect(res.body.posts.by_status.map((s: any) => [s.status, s.status_kind, s.count])).toEqual([
      ['Open', 'open', 2], ['Under review', 'open', 0], ['Planned', 'planned', 1], ['In progress', 'in_progress', 1], ['Complete', 'complete', 1], ['Closed', 'closed', 1],
    ])
    expect(res.body.posts.by_status[0].status_id).toMatch(/^sts_/)
    expect(res.body.votes).toEqual({ total: 17, verified: 17 })
    expect(res.body.comments).toEqual({ total: 5, public: 4, internal: 1 })
    expect(res.body.end_users).toEqual({ total: 7, verified: 7 })
  })

  test('metrics: a zero-filled 30-day trend, oldest first, ending today (UTC)', async () => {
    const { trend } = (await view(api, 'metrics')).body
    expect(trend).toHaveLength(30)
    expect(trend.map((d: any) => d.date)).toEqual(Array.from({ length: 30 }, (_, i) => utcDay(29 - i)))
    expect(trend[29]).toEqual({ date: utcDay(0), posts: 5, votes: 16, comments: 5 })
    expect(trend[26]).toEqual({ date: utcDay(3), posts: 1, votes: 0, comments: 0 })
    expect(trend.filter((_: any, i: number) => i !== 29 && i !== 26).every((d: any) => d.posts === 0 && d.votes === 0 && d.comments === 0)).toBe(true)
  })

  test('dashboard: recent activity, top open posts, unanswered posts, counts', async () => {
    const res = await view(api, 'dashboard')
    expect(res.status).toBe(200)
    const activity = res.body.recent_activity
    expect(activity).toHaveLength(20)
    expect(activity.slice(0, 3).map((e: any) => [e.type, e.post_id, e.title])).toEqual([
      ['post.deleted', ids.doomed, 'Doomed'],
      ['post.created', ids.doomed, 'Doomed'],
      ['comment.created', ids.eta, 'Eta'],
    ])
    expect(activity[0].id).toMatch(/^evt_/)
    expect(activity.map((e: any) => e.created_at)).toEqual([...activity.map((e: any) => e.created_at)].sort().reverse())
    // Votes name their post too.
    expect(activity.filter((e: any) => e.type === 'vote.created').every((e: any) => e.post_id && e.title)).toBe(true)

    expect(res.body.top_posts.map((p: any) => [p.title, p.votes])).toEqual([['Alpha', 6], ['Beta', 3], ['Gamma', 1], ['Epsilon', 0]])
    expect(res.body.top_posts[0].author.email).toBe(email(1))
    expect(res.body.unanswered_posts.map((p: any) => p.title)).toEqual(['Beta', 'Alpha', 'Epsilon'])
    expect(res.body.counts).toEqual({ posts: 6, open_posts: 4, unanswered_posts: 3, votes: 17, comments: 5, end_users: 7 })
  })

  test('onboarding progress follows the steps as they happen', async () => {
    const fresh = await workspaceFixture(h)
    const progress = async () => (await view(fresh.owner, 'onboarding-progress', fresh.slug)).body
    expect(await progress()).toEqual({ board_created: false, first_post: false, teammate_invited: false, api_key_created: false, webhook_added: false, widget_seen: false, completed: 0, total: 6 })

    await boardFixture(h, fresh.id, 'ideas')
    const client = h.client({ authorization: `Bearer ${await fresh.key()}` })
    await client.post('/api/v1/boards/ideas/posts', { title: 'By the key' })
    expect(await progress()).toMatchObject({ board_created: true, api_key_created: true, first_post: true, widget_seen: false, completed: 3 })

    await client.post('/api/v1/boards/ideas/posts', { title: 'By an end user', email: 'someone@customer.example' })
    // Invited is enough; the invitation need not be accepted.
    await fresh.owner.post(`/api/v1/workspaces/${fresh.slug}/members`, { email: `invitee-${fresh.slug}@example.com`, role: 'member' })
    expect(await progress()).toEqual({ board_created: true, first_post: true, teammate_invited: true, api_key_created: true, webhook_added: false, widget_seen: true, completed: 5, total: 6 })

    // No delivery runner runs in this file, and loopback port 9 would refuse anyway.
    const hook = await client.post(`/api/v1/workspaces/${fresh.slug}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['comment.deleted'] })
    expect(hook.status).toBe(201)
    expect(await progress()).toMatchObject({ webhook_added: true, completed: 6, total: 6 })
  })

  test('members of any role and keys with workspace:read read every view, under both prefixes', async () => {
    const readOnly = h.client({ authorization: `Bearer ${await ws.key(['workspace:read'])}` })
    for (const name of VIEWS) {
      for (const client of [member, ws.owner, readOnly]) expect((await view(client, name)).status).toBe(200)
      expect((await api.get(`/api/workspaces/${ws.slug}/${name}`)).status).toBe(200)
    }
  })

  test('a lapsed subscription: keys are refused, the dashboard keeps reading', async () => {
    await setSubscription(h, ws.id, { subscriptionStatus: 'canceled' })
    try {
      for (const name of VIEWS) {
        expect((await view(api, name)).body.code).toBe('SUBSCRIPTION_INACTIVE')
        expect((await view(member, name)).status).toBe(200)
      }
    } finally {
      await setSubscription(h, ws.id, { subscriptionStatus: 'trialing' })
    }
  })
})

describe('views: errors', () => {
  test('unknown workspace: 404', async () => {
    for (const name of VIEWS) expect((await view(ws.owner, name, 'no-such-workspace')).status).toBe(404)
  })

  test('no credential: 401', async () => {
    for (const name of VIEWS) {
      const res = await view(h.client(), name)
      expect(res.status).toBe(401)
      expect(res.body.code).toBe('UNAUTHENTICATED')
    }
  })

  test('the views are read-only: a POST is 405 with the methods the path takes', async () => {
    const res = await api.post(`/api/v1/workspaces/${ws.slug}/metrics`, {})
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toContain('GET')
  })
})

describe('views: security', () => {
  test('a key without workspace:read: 403 INSUFFICIENT_SCOPE', async () => {
    const narrow = h.client({ authorization: `Bearer ${await ws.key(['posts:read', 'comments:read', 'votes:read'])}` })
    for (const name of VIEWS) {
      const res = await view(narrow, name)
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'workspace:read' })
    }
  })

  test('non-members, pending invitees and keys of another workspace: 404', async () => {
    const stranger = h.client()
    await signIn(h, stranger, `stranger-${ws.slug}@example.com`)
    const invitee = h.client()
    await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: `pending-${ws.slug}@example.com`, role: 'member' })
    await signIn(h, invitee, `pending-${ws.slug}@example.com`)
    const other = await workspaceFixture(h)
    const foreignKey = h.client({ authorization: `Bearer ${await other.key()}` })
    for (const name of VIEWS) {
      for (const client of [stranger, invitee, foreignKey]) {
        const res = await view(client, name)
        expect(`${name} ${res.status} ${res.body.code}`).toBe(`${name} 404 NOT_FOUND`)
      }
    }
  })

  test("another workspace's rows never count", async () => {
    const other = await workspaceFixture(h)
    const metrics = (await view(other.owner, 'metrics', other.slug)).body
    expect(metrics.posts.total).toBe(0)
    expect(metrics.votes.total).toBe(0)
    expect(metrics.comments.total).toBe(0)
    expect(metrics.end_users.total).toBe(0)
    const dashboard = (await view(other.owner, 'dashboard', other.slug)).body
    expect(dashboard).toEqual({ recent_activity: [], top_posts: [], unanswered_posts: [], counts: { posts: 0, open_posts: 0, unanswered_posts: 0, votes: 0, comments: 0, end_users: 0 } })
  })

  test('the views are not public: no CORS, no shared caching', async () => {
    const res = await view(api, 'metrics')
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    // Authenticated answers are never stored by a shared (or any) cache.
    expect(res.headers.get('cache-control')).toBe('no-store')
  })
})
