// Board lists at the edges the size work changed: totals kept by counters (exact through every kind of
// write), totals bounded past the page with label/q, the stored trending order, ranked search.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, isNull, sql } from 'drizzle-orm'
import { boardPostCounts, boards, posts, statuses } from '../../server/db/schema/index.ts'
import { rowsOf } from '../../server/db/client.ts'
import { newId } from '../../server/lib/ids.ts'
import { COUNTED_MATCHES, listPosts } from '../../server/modules/posts/queries.ts'
import { boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let key: string
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  for (const slug of ['ideas', 'bugs', 'many']) await boardFixture(h, ws.id, slug)
  await boardFixture(h, other.id, 'ideas')
  await labelFixture(h, ws.id, 'api')
  key = await ws.key()
}, 120_000)
afterAll(() => h.close())

const api = () => h.client({ authorization: `Bearer ${key}` })
const list = async (board: string, query = '') => {
  const res = await api().get(`/api/v1/boards/${board}/posts${query}`)
  expect(res.status).toBe(200)
  return res.body
}
const boardId = async (workspaceId: string, slug: string) => (await h.db.select().from(boards).where(and(eq(boards.workspaceId, workspaceId), eq(boards.slug, slug))))[0]!.id
/** The unmerged posts of a board, counted the slow way, to hold the maintained count against. */
const counted = async (board: string) => (await h.db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(posts).where(and(eq(posts.boardId, await boardId(ws.id, board)), isNull(posts.mergedIntoId))))[0]!.n

describe('happy', () => {
  test('the total stays exact through create, status change, move, merge, delete and votes', async () => {
    const made = []
    for (const title of ['One', 'Two', 'Three', 'Four']) made.push((await api().post('/api/v1/boards/ideas/posts', { title })).body)
    expect((await list('ideas')).total).toBe(4)
    await api().patch(`/api/v1/posts/${made[0].id}`, { status: 'Planned' })
    expect((await list('ideas', '?status=planned')).total).toBe(1)
    expect((await list('ideas', '?status=open')).total).toBe(3)
    expect((await list('ideas')).total).toBe(4)
    await api().patch(`/api/v1/posts/${made[1].id}`, { board: 'bugs' })
    expect((await list('ideas')).total).toBe(3)
    expect((await list('bugs')).total).toBe(1)
    await api().post(`/api/v1/posts/${made[2].id}/merge`, { into_post_id: made[0].id })
    expect((await list('ideas')).total).toBe(2)
    await api().post(`/api/v1/posts/${made[3].id}/votes`, { email: 'voter@example.com' })
    await api().delete(`/api/v1/posts/${made[3].id}`)
    const ideas = await list('ideas')
    expect(ideas).toMatchObject({ total: 1, total_pages: 1, items: [{ id: made[0].id }] })
    expect(ideas.total).toBe(await counted('ideas'))
    expect((await list('bugs')).total).toBe(await counted('bugs'))
    // The other workspace's board of the same slug counts nothing of this one.
    const foreign = await h.client({ authorization: `Bearer ${await other.key()}` }).get('/api/v1/boards/ideas/posts')
    expect(foreign.body).toMatchObject({ items: [], total: 0 })
  })

  test('trending: votes count half per day of age; posts without votes follow, newest first', async () => {
    const [open] = await h.db.select().from(statuses).where(and(eq(statuses.workspaceId, ws.id), eq(statuses.isDefault, true)))
    const board = await boardFixture(h, ws.id, 'trend')
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3600_000)
    const rows = [
      { title: 'old, 7 votes', votes: 7, at: hoursAgo(72) }, // 7 / 8 = 0.875
      { title: 'new, 1 vote', votes: 1, at: hoursAgo(1) }, // ≈ 0.97
      { title: 'day old, 3 votes', votes: 3, at: hoursAgo(24) }, // 1.5
      { title: 'older, no votes', votes: 0, at: hoursAgo(5) },
      { title: 'newest, no votes', votes: 0, at: hoursAgo(0.5) },
    ]
    await h.db.insert(posts).values(rows.map((row) => ({ id: newId('post'), workspaceId: ws.id, boardId: board.id, title: row.title, statusId: open!.id, voteCount: row.votes, createdAt: row.at })))
    const titles = (await list('trend', '?sort=trending')).items.map((p: any) => p.title)
    expect(titles).toEqual(['day old, 3 votes', 'new, 1 vote', 'old, 7 votes', 'newest, no votes', 'older, no votes'])
    expect((await list('trend', '?sort=top')).items.map((p: any) => p.title).slice(0, 3)).toEqual(['old, 7 votes', 'day old, 3 votes', 'new, 1 vote'])
  })

  test('with q or label the total counts the matches up to 200 past the page start; without them it is exact', async () => {
    const [open] = await h.db.select().from(statuses).where(and(eq(statuses.workspaceId, ws.id), eq(statuses.isDefault, true)))
    const many = await boardId(ws.id, 'many')
    const size = COUNTED_MATCHES + 30
    await h.db.insert(posts).values(Array.from({ length: size }, (_, i) => ({ id: newId('post'), workspaceId: ws.id, boardId: many, title: `Webhook retries ${i}`, statusId: open!.id, createdAt: new Date(Date.now() - i * 60_000) })))
    expect((await list('many')).total).toBe(size)
    const first = await list('many', '?q=webhook')
    expect(first).toMatchObject({ page: 1, per_page: 20, total: COUNTED_MATCHES, total_pages: COUNTED_MATCHES / 20 })
    expect(first.items).toHaveLength(20)
    // From page 11 (offset 200) the bound is offset + 200 = 400 > 230: exact again.
    const later = await list('many', '?q=webhook&page=11')
    expect(later).toMatchObject({ total: size, total_pages: Math.ceil(size / 20) })
    expect(later.items).toHaveLength(20)
    const last = await list('many', '?q=webhook&sort=new&page=12')
    expect(last.items).toHaveLength(size - 220)
    expect(last.items.at(-1).title).toBe(`Webhook retries ${size - 1}`)
    expect(await list('many', '?q=webhook&page=30')).toMatchObject({ items: [], total: size })
    expect(await list('many', '?q=nothingmatches')).toMatchObject({ items: [], total: 0, total_pages: 0 })
    expect(await list('many', '?label=api')).toMatchObject({ items: [], total: 0 })
  })

  test('a label filter follows every change of a post\'s labels: create, relabel, the label\'s deletion, a move', async () => {
    const [ux, mobile] = [await labelFixture(h, ws.id, 'ux'), await labelFixture(h, ws.id, 'mobile')]
    const labelsOf = async (id: string) => (await h.db.select({ labelIds: posts.labelIds }).from(posts).where(eq(posts.id, id)))[0]!.labelIds
    const titles = async (board: string, label: string) => (await list(board, `?label=${label}`)).items.map((item: { title: string }) => item.title)
    const both = (await api().post('/api/v1/boards/ideas/posts', { title: 'Labelled twice', labels: ['mobile', 'ux'] })).body
    const one = (await api().post('/api/v1/boards/ideas/posts', { title: 'Labelled once', labels: ['ux'] })).body
    expect(await labelsOf(both.id)).toEqual([ux.id, mobile.id].sort())
    expect(await titles('ideas', 'ux')).toEqual(['Labelled once', 'Labelled twice'])
    expect(await titles('ideas', 'mobile')).toEqual(['Labelled twice'])

    expect((await api().patch(`/api/v1/posts/${one.id}`, { labels: ['mobile'] })).status).toBe(200)
    expect(await labelsOf(one.id)).toEqual([mobile.id])
    expect(await titles('ideas', 'ux')).toEqual(['Labelled twice'])
    expect(await titles('ideas', 'mobile')).toEqual(['Labelled once', 'Labelled twice'])

    expect((await api().delete(`/api/v1/labels/${mobile.id}`)).status).toBe(204)
    expect(await labelsOf(both.id)).toEqual([ux.id])
    expect(await labelsOf(one.id)).toEqual([])
    expect(await titles('ideas', 'ux')).toEqual(['Labelled twice'])

    expect((await api().patch(`/api/v1/posts/${both.id}`, { board: 'bugs' })).status).toBe(200)
    expect(await titles('ideas', 'ux')).toEqual([])
    expect(await titles('bugs', 'ux')).toEqual(['Labelled twice'])
    expect((await api().patch(`/api/v1/posts/${both.id}`, { labels: [] })).status).toBe(200)
    expect(await labelsOf(both.id)).toEqual([])
    expect(await titles('bugs', 'ux')).toEqual([])
    // Every post's label_ids equals its post_labels rows.
    const drift = await h.db.execute(sql`select p.id from posts p where p.label_ids is distinct from
      coalesce((select array_agg(pl.label_id order by pl.label_id collate "C") from post_labels pl where pl.post_id = p.id), '{}')`)
    expect(rowsOf(drift)).toEqual([])
  })

  test('q without sort puts the best match first; with a sort the sort decides', async () => {
    await api().post('/api/v1/boards/bugs/posts', { title: 'Slack alerts for slack channels', body: 'slack slack slack' })
    await api().post('/api/v1/boards/bugs/posts', { title: 'Mention Slack once', body: 'nothing else' })
    const ranked = (await list('bugs', '?q=slack')).items.map((p: any) => p.title)
    expect(ranked).toEqual(['Slack alerts for slack channels', 'Mention Slack once'])
    expect((await list('bugs', '?q=slack&sort=new')).items.map((p: any) => p.title)).toEqual(['Mention Slack once', 'Slack alerts for slack channels'])
  })
})

describe('size', () => {
  test('a list without label, q or verified keeps its plan beside a board of 20,000 posts, and its pages are right', async () => {
    const huge = await boardFixture(h, ws.id, 'huge')
    const statusIds = (await h.db.select({ id: statuses.id }).from(statuses).where(eq(statuses.workspaceId, ws.id)).orderBy(statuses.position)).map((row) => row.id)
    await h.db.execute(sql`insert into posts (id, workspace_id, board_id, title, status_id, vote_count, created_at, updated_at)
      select 'post_huge' || lpad(g::text, 6, '0'), ${ws.id}, ${huge.id}, 'Huge ' || g, case when g % 2 = 0 then ${statusIds[0]} else ${statusIds[1]} end, (g * 7919) % 1000,
        now() - g * interval '1 minute', now() from generate_series(1, 20000) g`)
    await h.db.execute(sql`analyze posts`)
    const expected = async (order: string, status: string | undefined, offset: number) => rowsOf<{ id: string }>(await h.db.execute(sql`select id from posts
      where board_id = ${huge.id} and merged_into_id is null ${status ? sql`and status_id = ${status}` : sql``}
      order by ${sql.raw(order)} limit 20 offset ${offset}`)).map((row) => row.id)
    const ids = (body: { items: { id: string }[] }) => body.items.map((item) => item.id)
    const page = await list('huge', '?sort=top&page=50')
    expect(page).toMatchObject({ total: 20000, total_pages: 1000 })
    expect(ids(page)).toEqual(await expected('vote_count desc, created_at desc, id desc', undefined, 980))
    expect(ids(await list('huge', `?status=${statusIds[1]}&page=3`))).toEqual(await expected('created_at desc, id desc', statusIds[1], 40))
    expect(ids(await list('huge', '?sort=trending&page=1000'))).toEqual(await expected('trending desc nulls last, created_at desc, id desc', undefined, 19980))
    expect(await list('huge', '?page=1001')).toMatchObject({ items: [], total: 20000 })

    // PostgreSQL keeps a connection's statements: the list statement of a small board of this workspace is
    // planned for its first five runs on a connection and then runs its generic plan. (PGlite prepares no named statements.)
    if (h.ctx.database.driver !== 'postgres') return
    const runs = await h.db.transaction(async (tx) => {
      const plans = async () => new Map(rowsOf<{ name: string; generic_plans: number; custom_plans: number }>(await tx.execute(sql`select name, generic_plans::int, custom_plans::int
        from pg_prepared_statements where statement like '%order by page.n%'`)).map((row) => [row.name, row]))
      const before = await plans()
      for (let run = 0; run < 8; run++) await listPosts(tx, { workspace: { id: ws.id }, board: 'ideas' }, { sort: 'top' }, { page: 1, perPage: 20, offset: 0 })
      return [...(await plans()).values()].map((row) => ({ generic: row.generic_plans - (before.get(row.name)?.generic_plans ?? 0), custom: row.custom_plans - (before.get(row.name)?.custom_plans ?? 0) }))
    })
    const list8 = runs.filter((run) => run.generic + run.custom === 8)
    expect(list8).toHaveLength(1)
    expect(list8[0]!.generic).toBeGreaterThanOrEqual(3)
  })
})

describe('errors', () => {
  test('an empty page still tells an unknown board, status or label from an empty list', async () => {
    await boardFixture(h, ws.id, 'empty')
    expect(await list('empty', '?status=planned&label=api&q=anything')).toMatchObject({ items: [], total: 0 })
    expect((await api().get('/api/v1/boards/nope/posts?q=x')).status).toBe(404)
    for (const [query, loc] of [['status=nope', 'status'], ['label=nope', 'label']]) {
      const res = await api().get(`/api/v1/boards/empty/posts?${query}`)
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['query', loc])
    }
  })
})

describe('security', () => {
  test('a status or label of another workspace filters nothing in: 422, as unknown', async () => {
    await labelFixture(h, other.id, 'secret')
    const res = await api().get('/api/v1/boards/ideas/posts?label=secret')
    expect(res.status).toBe(422)
    const [foreignStatus] = await h.db.select().from(statuses).where(eq(statuses.workspaceId, other.id))
    expect((await api().get(`/api/v1/boards/ideas/posts?status=${foreignStatus!.id}`)).status).toBe(422)
  })

  test('the counts live per board: a private board of the workspace adds nothing to a public list', async () => {
    const hidden = await boardFixture(h, ws.id, 'hidden', true)
    await api().post('/api/v1/boards/hidden/posts', { title: 'Internal' })
    const [row] = await h.db.select().from(boardPostCounts).where(eq(boardPostCounts.boardId, hidden.id))
    expect(row!.posts).toBe(1)
    expect((await h.client().get(`/api/v1/public/${ws.slug}/boards/hidden/posts`)).status).toBe(404)
    const ideas = await h.client().get(`/api/v1/public/${ws.slug}/boards/ideas/posts`)
    expect(ideas.body.total).toBe(await counted('ideas'))
  })
})
