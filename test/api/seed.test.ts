import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { count, eq } from 'drizzle-orm'
import { DEMO_OWNER, DEMO_SLUG, seedDemo, type SeedResult } from '../../scripts/seed.ts'
import { apiKeys, comments, endUsers, events, posts, users, votes, workspaces } from '../../server/db/schema/index.ts'
import { sha256Hex } from '../../server/lib/secrets.ts'
import { BASE, startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let first: SeedResult
beforeAll(async () => {
  h = await startHarness()
  first = await seedDemo(h.db, BASE)
}, 60_000)
afterAll(() => h.close())

const rows = async () => {
  const tally = async (table: typeof posts | typeof votes | typeof comments | typeof endUsers | typeof events | typeof apiKeys) =>
    (await h.db.select({ n: count() }).from(table).where(eq(table.workspaceId, first.workspaceId)))[0]!.n
  return { posts: await tally(posts), votes: await tally(votes), comments: await tally(comments), endUsers: await tally(endUsers), events: await tally(events), keys: await tally(apiKeys) }
}

describe('seed: happy path', () => {
  test('creates the demo workspace, owned by demo@example.com, with a working key', async () => {
    expect(first.created).toBe(true)
    expect(first.apiKey).toMatch(/^chorus_sk_[0-9A-Za-z]{32}$/)
    expect(first.urls).toEqual([`${BASE}/api/v1/public/demo`, `${BASE}/api/v1/public/demo/boards/ideas/posts`, `${BASE}/api/v1/public/demo/boards/bugs/posts`, `${BASE}/api/v1/public/demo/roadmap`])
    const [workspace] = await h.db.select().from(workspaces).where(eq(workspaces.slug, DEMO_SLUG))
    expect(workspace).toMatchObject({ id: first.workspaceId, comped: true })
    const [owner] = await h.db.select().from(users).where(eq(users.email, DEMO_OWNER))
    expect(owner).toBeDefined()

    // Only the hash of the key is stored.
    const [key] = await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, first.workspaceId))
    expect(key!.keyHash).toBe(await sha256Hex(first.apiKey!))
    expect(JSON.stringify(key)).not.toContain(first.apiKey!)

    const api = h.client({ authorization: `Bearer ${first.apiKey}` })
    const ideas = await api.get('/api/v1/boards/ideas/posts?per_page=100')
    const bugs = await api.get('/api/v1/boards/bugs/posts?per_page=100')
    expect(ideas.status).toBe(200)
    expect(ideas.body.total + bugs.body.total).toBe(15)
    expect(new Set([...ideas.body.items, ...bugs.body.items].map((p: any) => p.status_kind))).toEqual(new Set(['open', 'planned', 'in_progress', 'complete', 'closed']))
    expect([...ideas.body.items, ...bugs.body.items].every((p: any) => p.author.type === 'end_user')).toBe(true)
  })

  test('the data is consistent: counters match rows, votes and comments come from end users', async () => {
    const counts = await rows()
    expect(counts).toMatchObject({ posts: 15, endUsers: 8, keys: 1 })
    expect(counts.votes).toBeGreaterThan(30)
    expect(counts.comments).toBeGreaterThan(5)
    const metrics = (await h.client({ authorization: `Bearer ${first.apiKey}` }).get(`/api/v1/workspaces/${DEMO_SLUG}/metrics`)).body
    expect(metrics.votes.total).toBe(counts.votes)
    expect(metrics.comments.total).toBe(counts.comments)
    expect(metrics.comments.internal).toBe(1)
    expect(metrics.trend.filter((day: any) => day.posts > 0).length).toBeGreaterThan(10)
    const voteRows = await h.db.select().from(votes).where(eq(votes.workspaceId, first.workspaceId))
    expect(voteRows.every((vote) => vote.endUserId !== null && vote.userId === null)).toBe(true)
    const totalVotes = (await h.db.select().from(posts).where(eq(posts.workspaceId, first.workspaceId))).reduce((sum, post) => sum + post.voteCount, 0)
    expect(totalVotes).toBe(counts.votes)
  })

  test('the public portal serves it', async () => {
    const portal = await h.client().get('/api/v1/public/demo')
    expect(portal.status).toBe(200)
    expect(portal.body.boards.map((b: any) => [b.slug, b.post_count])).toEqual([['bugs', 5], ['ideas', 10]])
    const roadmap = await h.client().get('/api/v1/public/demo/roadmap')
    expect(roadmap.body.groups.every((group: any) => group.items.length > 0)).toBe(true)
  })

  test('the pages it prints open: portal, widget test page, sign-in; the demo has a published changelog entry and team replies', async () => {
    expect(first.pages).toEqual({ portal: `${BASE}/portal/demo`, widget: `${BASE}/widget/try/demo`, signIn: `${BASE}/signin` })
    for (const url of Object.values(first.pages)) {
      const page = await h.client().get(url.slice(BASE.length))
      expect(`${url} ${page.status} ${page.headers.get('content-type')}`).toBe(`${url} 200 text/html; charset=utf-8`)
    }
    const widgetPage = await h.client().get('/widget/try/demo')
    expect(widgetPage.body).toContain('<script src="/widget.js" data-workspace="demo" async></script>')
    expect(widgetPage.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect((await h.client().get('/widget/try/no-such-workspace')).status).toBe(404)

    const changelog = await h.client().get('/api/v1/public/demo/changelog')
    expect(changelog.status).toBe(200)
    expect(changelog.body.items).toHaveLength(1)
    expect(changelog.body.items[0]).toMatchObject({ title: 'CSV export, and vote counts you can trust' })
    expect(changelog.body.items[0].posts.map((post: any) => post.title).sort()).toEqual(['Export posts to CSV', 'Vote count off by one after a merge'])
    const portalChangelog = await h.client().get('/portal/demo/changelog')
    expect(portalChangelog.body).toContain('CSV export, and vote counts you can trust')

    const team = await h.db.select().from(comments).where(eq(comments.workspaceId, first.workspaceId))
    expect(team.filter((comment) => comment.authorKeyId !== null && !comment.internal).length).toBeGreaterThanOrEqual(5)
  })
})

describe('seed: a second run', () => {
  test('detects the workspace, changes nothing and prints no key', async () => {
    const before = await rows()
    const second = await seedDemo(h.db, BASE)
    expect(second).toMatchObject({ created: false, workspaceId: first.workspaceId, apiKey: null })
    expect(second.urls).toEqual(first.urls)
    expect(await rows()).toEqual(before)
    expect(await h.db.select().from(workspaces).where(eq(workspaces.slug, DEMO_SLUG))).toHaveLength(1)
  })
})
