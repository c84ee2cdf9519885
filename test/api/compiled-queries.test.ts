import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, DrizzleQueryError, eq, sql } from 'drizzle-orm'
import { isUniqueViolation } from '../../server/db/client.ts'
import { compiled } from '../../server/db/compiled.ts'
import { boards, events, posts, users } from '../../server/db/schema/index.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

// Statements compiled once (server/db/compiled.ts) must run on the connection they are handed: inside a
// transaction they see its uncommitted rows and roll back with it. The write routes depend on that.

const boardBySlug = compiled('test_board_by_slug', (db) =>
  db.select({ id: boards.id, name: boards.name }).from(boards).where(and(eq(boards.workspaceId, sql.placeholder('workspaceId')), eq(boards.slug, sql.placeholder('slug')))))
const insertBoard = compiled('test_insert_board', (db) =>
  db.insert(boards).values({ id: sql.placeholder('id'), workspaceId: sql.placeholder('workspaceId'), slug: sql.placeholder('slug'), name: sql.placeholder('name') }))

let h: Harness
let ws: WorkspaceFixture
let api: ReturnType<Harness['client']>
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
}, 60_000)
afterAll(() => h.close())

describe('happy', () => {
  test('inside a transaction a compiled statement sees its uncommitted rows; the pool sees them after the commit', async () => {
    let seenInside: unknown[] = []
    let seenOutside: unknown[] = ['not run']
    await h.db.transaction(async (tx) => {
      await insertBoard(tx).execute({ id: 'board_compiled_1', workspaceId: ws.id, slug: 'compiled-one', name: 'Compiled one' })
      seenInside = await boardBySlug(tx).execute({ workspaceId: ws.id, slug: 'compiled-one' })
      // PGlite has one connection, busy with this transaction: only PostgreSQL can read beside it.
      if (h.ctx.database.driver === 'postgres') seenOutside = await boardBySlug(h.db).execute({ workspaceId: ws.id, slug: 'compiled-one' })
    })
    expect(seenInside).toEqual([{ id: 'board_compiled_1', name: 'Compiled one' }])
    if (h.ctx.database.driver === 'postgres') expect(seenOutside).toEqual([])
    expect(await boardBySlug(h.db).execute({ workspaceId: ws.id, slug: 'compiled-one' })).toEqual([{ id: 'board_compiled_1', name: 'Compiled one' }])
  })

  test('statements started together in a transaction run in the order started (pipelined on PostgreSQL)', async () => {
    const [, found] = await h.db.transaction((tx) => Promise.all([
      insertBoard(tx).execute({ id: 'board_compiled_5', workspaceId: ws.id, slug: 'compiled-five', name: 'Compiled five' }),
      boardBySlug(tx).execute({ workspaceId: ws.id, slug: 'compiled-five' }),
    ]))
    expect(found).toEqual([{ id: 'board_compiled_5', name: 'Compiled five' }])
  })

  test('a post created over HTTP (compiled inserts and read-back) is stored with its event', async () => {
    const created = await api.post('/api/v1/boards/ideas/posts', { title: 'Compiled path', body: 'Body text' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ title: 'Compiled path', body: 'Body text', status: 'Open', board: 'ideas', author: { type: 'api_key' } })
    const [row] = await h.db.select().from(posts).where(eq(posts.id, created.body.id))
    expect(row).toMatchObject({ title: 'Compiled path', body: 'Body text', workspaceId: ws.id, authorEndUserId: null, authorUserId: null })
    const stored = await h.db.select().from(events).where(eq(events.workspaceId, ws.id))
    expect(stored.filter((event) => (event.data as any).post?.id === created.body.id).map((event) => event.type)).toEqual(['post.created'])
  })
})

describe('row mapping', () => {
  // A flat selection is mapped by compiled.ts's own mapper (drizzle's asks every value what field it came
  // from); the rows must be exactly what drizzle's mapping gives, decoders and nulls included.
  const flat = (db: Parameters<Parameters<typeof compiled>[1]>[0]) => db
    .select({ id: posts.id, title: posts.title, votes: posts.voteCount, owner: posts.ownerUserId, createdAt: posts.createdAt, tracker: posts.trackerIssue,
      slugs: sql<string[]>`array[${boards.slug}, 'x']`, total: sql<number>`count(*) over ()`.mapWith(Number), asText: sql<string>`(${posts.voteCount} + 1)::text` })
    .from(posts).innerJoin(boards, eq(boards.id, posts.boardId)).where(eq(posts.workspaceId, sql.placeholder('workspaceId'))).orderBy(posts.id)
  const nested = (db: Parameters<Parameters<typeof compiled>[1]>[0]) => db
    .select({ post: { id: posts.id, createdAt: posts.createdAt }, owner: users })
    .from(posts).leftJoin(users, eq(users.id, posts.ownerUserId)).where(eq(posts.workspaceId, sql.placeholder('workspaceId'))).orderBy(posts.id)

  test('a flat selection maps as drizzle maps it: dates, numbers from SQL, arrays, nulls', async () => {
    expect((await api.post('/api/v1/boards/ideas/posts', { title: 'Mapped one' })).status).toBe(201)
    expect((await api.post('/api/v1/boards/ideas/posts', { title: 'Mapped two' })).status).toBe(201)
    const statement = compiled('test_flat_rows', flat)(h.db)
    expect(typeof (statement as unknown as { customResultMapper: unknown }).customResultMapper).toBe('function')
    const fast = await statement.execute({ workspaceId: ws.id })
    const drizzles = await flat(h.db).prepare('test_flat_rows_drizzle').execute({ workspaceId: ws.id })
    expect(fast.length).toBeGreaterThanOrEqual(2)
    expect(fast).toEqual(drizzles)
    expect(fast[0]!.createdAt).toBeInstanceOf(Date)
    expect(fast[0]!.total).toBe(fast.length)
    expect(fast[0]!.owner).toBeNull()
    expect(fast[0]!.slugs).toEqual(['ideas', 'x'])
    expect(typeof fast[0]!.asText).toBe('string')
  })

  test('tables nested under inner joins map as drizzle maps them', async () => {
    const innerNested = (db: Parameters<Parameters<typeof compiled>[1]>[0]) => db
      .select({ post: { id: posts.id, createdAt: posts.createdAt }, board: boards })
      .from(posts).innerJoin(boards, eq(boards.id, posts.boardId)).where(eq(posts.workspaceId, sql.placeholder('workspaceId'))).orderBy(posts.id)
    const statement = compiled('test_inner_nested_rows', innerNested)(h.db)
    expect(typeof (statement as unknown as { customResultMapper: unknown }).customResultMapper).toBe('function')
    const rows = await statement.execute({ workspaceId: ws.id })
    expect(rows.length).toBeGreaterThan(0)
    expect(rows[0]!.board).toMatchObject({ slug: 'ideas', workspaceId: ws.id, createdAt: expect.any(Date) })
    expect(rows).toEqual(await innerNested(h.db).prepare('test_inner_nested_rows_drizzle').execute({ workspaceId: ws.id }))
  })

  test('a nested selection keeps drizzle\'s mapping, which folds a missing join into null', async () => {
    const statement = compiled('test_nested_rows', nested)(h.db)
    expect((statement as unknown as { customResultMapper: unknown }).customResultMapper).toBeUndefined()
    const rows = await statement.execute({ workspaceId: ws.id })
    expect(rows.length).toBeGreaterThan(0)
    expect(rows[0]).toEqual({ post: { id: expect.any(String), createdAt: expect.any(Date) }, owner: null })
    expect(rows).toEqual(await nested(h.db).prepare('test_nested_rows_drizzle').execute({ workspaceId: ws.id }))
  })
})

describe('errors', () => {
  test('a compiled insert rolls back with the transaction that failed after it', async () => {
    const failed = h.db.transaction(async (tx) => {
      await insertBoard(tx).execute({ id: 'board_compiled_2', workspaceId: ws.id, slug: 'compiled-two', name: 'Compiled two' })
      throw new Error('change abandoned')
    })
    await expect(failed).rejects.toThrow('change abandoned')
    expect(await boardBySlug(h.db).execute({ workspaceId: ws.id, slug: 'compiled-two' })).toEqual([])
  })

  test('a unique violation from a compiled insert fails the transaction and leaves nothing behind', async () => {
    const failed = h.db.transaction(async (tx) => {
      await insertBoard(tx).execute({ id: 'board_compiled_3', workspaceId: ws.id, slug: 'compiled-three', name: 'First' })
      await insertBoard(tx).execute({ id: 'board_compiled_3', workspaceId: ws.id, slug: 'compiled-four', name: 'Same id' })
    })
    await expect(failed).rejects.toBeDefined()
    expect(await h.db.select().from(boards).where(eq(boards.id, 'board_compiled_3'))).toEqual([])
  })

  test('a failed compiled statement throws what drizzle throws: the query, its values and the driver error as cause', async () => {
    await insertBoard(h.db).execute({ id: 'board_compiled_6', workspaceId: ws.id, slug: 'compiled-six', name: 'Six' })
    const error: any = await insertBoard(h.db).execute({ id: 'board_compiled_6', workspaceId: ws.id, slug: 'compiled-seven', name: 'Seven' }).catch((caught) => caught)
    // By name: PGlite's drizzle driver is loaded with require, so its error class is the CommonJS build's.
    expect(error.constructor.name).toBe(DrizzleQueryError.name)
    expect(error.query).toContain('insert into "boards"')
    expect(error.params).toEqual(expect.arrayContaining(['board_compiled_6', ws.id, 'compiled-seven', 'Seven']))
    expect(isUniqueViolation(error)).toBe(true)
    // A value left out is refused before anything is sent.
    await expect(boardBySlug(h.db).execute({ workspaceId: ws.id })).rejects.toThrow('No value for placeholder "slug" was provided')
  })

  test('an unknown board through the compiled lookup is 404 and writes nothing', async () => {
    const before = (await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).length
    const missing = await api.post('/api/v1/boards/nowhere/posts', { title: 'Lost' })
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe('NOT_FOUND')
    expect((await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).length).toBe(before)
  })
})

describe('security', () => {
  test('values are parameters, never SQL text', async () => {
    const title = `x'); delete from posts; --`
    const created = await api.post('/api/v1/boards/ideas/posts', { title })
    expect(created.status).toBe(201)
    expect(created.body.title).toBe(title)
    expect((await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).length).toBeGreaterThan(1)
  })

  test('the compiled board lookup is scoped by workspace: another workspace\'s board slug is 404', async () => {
    const other = await workspaceFixture(h)
    await boardFixture(h, other.id, 'their-board')
    const foreign = await api.post('/api/v1/boards/their-board/posts', { title: 'Crossing over' })
    expect(foreign.status).toBe(404)
    expect(await h.db.select().from(posts).where(eq(posts.workspaceId, other.id))).toEqual([])
  })
})
