// Imports over HTTP (issue 39, docs/import.md): each sample file in test/fixtures/imports imported and
// counted, the same file twice creates nothing, a dry run writes nothing, an interrupted import resumed
// ends with the rows of an uninterrupted one, and imported history makes no event, delivery or e-mail.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { Zip, ZipDeflate } from 'fflate'
import { rowsOf } from '../../server/db/client.ts'
import { startImportLoop } from '../../server/background/import-loop.ts'
import { LOCK_SPACE, lockOwnerSql, newOwner } from '../../server/background/leases.ts'
import { claimImport } from '../../server/modules/imports/claim.ts'
import { runImport } from '../../server/modules/imports/runner.ts'
import { addMember, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'

const FIXTURES = new URL('../fixtures/imports/', import.meta.url).pathname
let h: Harness

beforeAll(async () => {
  h = await startHarness()
})
afterAll(async () => {
  await h.close()
})

function form(format: string, parts: Record<string, string | Blob>, fields: Record<string, string> = {}) {
  const body = new FormData()
  body.set('format', format)
  for (const [name, value] of Object.entries(fields)) body.set(name, value)
  for (const [name, file] of Object.entries(parts)) body.set(name, typeof file === 'string' ? Bun.file(`${FIXTURES}${file}`) : file, typeof file === 'string' ? file : 'upload')
  return body
}

const upload = (client: TestClient, slug: string, format: string, parts: Record<string, string | Blob>, fields: Record<string, string> = {}) =>
  client.call('POST', `/api/v1/workspaces/${slug}/imports`, { raw: form(format, parts, fields) })

/** Runs every queued import to its end, as the background worker's loop does. */
async function drain(owner = newOwner(), hooks: Parameters<typeof runImport>[4] = {}) {
  for (let job = await claimImport(h.db, owner, LOCK_SPACE); job; job = await claimImport(h.db, owner, LOCK_SPACE)) await runImport(h.db, h.ctx.storage, job, owner, hooks)
}

async function count(table: string, workspaceId: string) {
  const [row] = rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from ${sql.raw(table)} where workspace_id = ${workspaceId}`))
  return row!.n
}

/** What a run must never make: events (and so webhooks), deliveries, notifications, mail. */
async function sideEffects(workspaceId: string) {
  const [row] = rowsOf<Record<string, number>>(await h.db.execute(sql`select
    (select count(*)::int from events where workspace_id = ${workspaceId}) as events,
    (select count(*)::int from webhook_deliveries d join events e on e.id = d.event_id where e.workspace_id = ${workspaceId}) as deliveries,
    (select count(*)::int from notification_events) as notifications,
    (select count(*)::int from changelog_emails where workspace_id = ${workspaceId}) as changelog_emails,
    (select count(*)::int from subscriber_updates) as subscriber_updates`))
  return row!
}

async function importedAndDone(client: TestClient, slug: string, format: string, parts: Record<string, string | Blob>, fields: Record<string, string> = {}) {
  const created = await upload(client, slug, format, parts, fields)
  expect(created.status).toBe(202)
  expect(created.body.status).toBe('queued')
  expect(created.body.id).toMatch(/^imp_/)
  await drain()
  const done = await client.get(`/api/v1/workspaces/${slug}/imports/${created.body.id}`)
  expect(done.status).toBe(200)
  expect(done.body.status).toBe('completed')
  expect(done.body.progress.percent).toBe(100)
  return done.body
}

describe('a workspace scored by demand', () => {
  test('imported votes move the scores of a demand formula and still make no score.changed event', async () => {
    const ws = await workspaceFixture(h)
    const saved = await ws.owner.call('PUT', `/api/v1/workspaces/${ws.slug}/scoring`, { body: { model: 'custom', formula: 'demand.voters * 2' }, headers: { 'x-workspace': ws.slug } })
    expect(saved.status).toBe(200)
    const before = await sideEffects(ws.id)
    const done = await importedAndDone(ws.owner, ws.slug, 'csv', { file: 'posts.csv' })
    expect(done.counts.votes.created).toBe(6)
    const scored = rowsOf<{ title: string; score: number | null; vote_count: number }>(await h.db.execute(sql`select title, score, vote_count from posts where workspace_id = ${ws.id} order by title`))
    // The score follows the imported count (the source's own count where it is higher).
    for (const post of scored) expect([post.title, post.score]).toEqual([post.title, post.vote_count * 2])
    expect(await sideEffects(ws.id)).toEqual(before)
  })
})

describe('CSV, one file', () => {
  let ws: WorkspaceFixture
  beforeAll(async () => {
    ws = await workspaceFixture(h)
  })

  test('a dry run answers the plan with row errors and writes nothing', async () => {
    const before = await sideEffects(ws.id)
    const plan = await upload(ws.owner, ws.slug, 'csv', { file: 'posts.csv' }, { dry_run: 'true' })
    expect(plan.status).toBe(200)
    expect(plan.body.dry_run).toBe(true)
    expect(plan.body.records).toEqual({ file: 4 })
    expect(plan.body.counts.posts).toEqual({ created: 3, merged: 0, skipped: 0 })
    expect(plan.body.counts.votes.created).toBe(6)
    expect(plan.body.counts.comments.created).toBe(2)
    expect(plan.body.counts.boards.created).toBe(2)
    expect(plan.body.errors).toEqual([{ file: 'file', line: 6, message: 'title is empty' }])
    for (const table of ['posts', 'votes', 'comments', 'end_users', 'boards', 'labels', 'external_refs', 'imports']) expect(await count(table, ws.id)).toBe(0)
    expect(await sideEffects(ws.id)).toEqual(before)
  })

  test('imports posts, votes, comments and people with their own dates and counts, and nothing else happens', async () => {
    const before = await sideEffects(ws.id)
    const done = await importedAndDone(ws.owner, ws.slug, 'csv', { file: 'posts.csv' })
    expect(done.counts.posts).toEqual({ created: 3, merged: 0, skipped: 0 })
    expect(done.counts.votes).toEqual({ created: 6, merged: 0, skipped: 0 })
    expect(done.counts.comments.created).toBe(2)
    expect(done.counts.users.created).toBe(4)
    expect(done.error_count).toBe(1)
    expect(done.errors[0]).toEqual({ file: 'file', line: 6, message: 'title is empty' })
    const posts = rowsOf<{ title: string; vote_count: number; comment_count: number; created_at: string; status: string; kind: string; board: string; labels: string[] }>(await h.db.execute(sql`
      select p.title, p.vote_count, p.comment_count, p.created_at::text, s.name as status, s.kind, b.name as board, p.label_ids as labels
      from posts p join statuses s on s.id = p.status_id join boards b on b.id = p.board_id where p.workspace_id = ${ws.id} order by p.title`))
    expect(posts.map((post) => [post.title, post.vote_count, post.comment_count, post.status, post.board])).toEqual([
      ['CSV export', 1, 0, 'In progress', 'Ideas'],
      ['Dark mode', 12, 1, 'Planned', 'Ideas'],
      ['Slack integration', 3, 0, 'Complete', 'Integrations'],
    ])
    expect(new Date(posts[1]!.created_at).toISOString()).toBe('2023-01-05T10:00:00.000Z')
    expect(posts[1]!.labels).toHaveLength(2)
    // Voters named by e-mail alone are unverified end users.
    const people = rowsOf<{ email: string; verified_at: string | null }>(await h.db.execute(sql`select email, verified_at from end_users where workspace_id = ${ws.id} order by email`))
    expect(people.map((person) => person.email)).toEqual(['ada@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com'])
    expect(people.every((person) => person.verified_at === null)).toBe(true)
    expect(await sideEffects(ws.id)).toEqual(before)
    // The team's inbox lists them through the normal routes, by their kept vote counts.
    const listed = await ws.owner.get(`/api/v1/workspaces/${ws.slug}/inbox?sort=top`)
    expect(listed.status).toBe(200)
    expect(listed.body.items.map((post: { title: string }) => post.title)).toEqual(['Dark mode', 'Slack integration', 'CSV export'])
    // A board's total is its kept count (board_post_counts): the import adds a batch's posts per board and status at once (migration 0057).
    for (const [board, total] of [['ideas', 2], ['integrations', 1]] as const) {
      const page = await ws.owner.call('GET', `/api/v1/boards/${board}/posts`, { headers: { 'x-workspace': ws.slug } })
      expect([board, page.status, page.body.total, page.body.items.length]).toEqual([board, 200, total, total])
    }
    const counted = rowsOf<{ kept: number; actual: number }>(await h.db.execute(sql`select (select sum(c.posts)::int from board_post_counts c join boards b on b.id = c.board_id where b.workspace_id = ${ws.id}) as kept,
      (select count(*)::int from posts where workspace_id = ${ws.id}) as actual`))
    expect(counted).toEqual([{ kept: 3, actual: 3 }])
  })

  test('the same file again creates nothing', async () => {
    const rows = async () => Promise.all(['posts', 'votes', 'comments', 'end_users', 'boards', 'labels'].map((table) => count(table, ws.id)))
    const before = await rows()
    const again = await importedAndDone(ws.owner, ws.slug, 'csv', { file: 'posts.csv' })
    for (const entity of Object.values(again.counts) as { created: number }[]) expect(entity.created).toBe(0)
    expect(again.counts.posts.skipped).toBe(3)
    expect(again.counts.votes.skipped).toBe(6)
    expect(again.counts.comments.skipped).toBe(2)
    expect(await rows()).toEqual(before)
  })
})

describe('CSV, three files', () => {
  test('votes and comments from their own files; a voter with your id is vouched for; an unknown post is a row error', async () => {
    const ws = await workspaceFixture(h)
    const done = await importedAndDone(ws.owner, ws.slug, 'csv', { file: 'three-posts.csv', votes: 'three-votes.csv', comments: 'three-comments.csv' })
    expect(done.counts.posts.created).toBe(2)
    expect(done.counts.votes.created).toBe(3)
    expect(done.counts.comments.created).toBe(2)
    expect(done.errors).toEqual([{ file: 'votes', line: 5, message: 'post "t9" is not in this import' }])
    const [sso] = rowsOf<{ vote_count: number }>(await h.db.execute(sql`select vote_count from posts where workspace_id = ${ws.id} and title = 'SSO'`))
    expect(sso!.vote_count).toBe(40)
    const [frank] = rowsOf<{ verified_at: string | null; external_id: string }>(await h.db.execute(sql`select verified_at, external_id from end_users where workspace_id = ${ws.id} and name = 'Frank'`))
    expect(frank!.external_id).toBe('cust-42')
    expect(frank!.verified_at).not.toBeNull()
    const [reply] = rowsOf<{ parent_id: string | null }>(await h.db.execute(sql`select parent_id from comments where workspace_id = ${ws.id} and body = 'Agreed'`))
    expect(reply!.parent_id).toMatch(/^cmt_/)
  })
})

describe('Fider backup', () => {
  // backup.zip as Fider writes it (test/fixtures/imports/fider-backup.ts), and its tables as one JSON object.
  test.each(['fider-backup.zip', 'fider.json'])('%s: users, tags, posts, comments and votes; deleted rows left out; Fider statuses by kind', async (file) => {
    const ws = await workspaceFixture(h)
    const done = await importedAndDone(ws.owner, ws.slug, 'fider', { file })
    expect(done.counts.users.created).toBe(2)
    expect(done.counts.posts.created).toBe(2)
    expect(done.counts.labels.created).toBe(1)
    expect(done.counts.post_labels.created).toBe(1)
    expect(done.counts.comments.created).toBe(1)
    expect(done.counts.votes.created).toBe(3)
    const posts = rowsOf<{ title: string; kind: string; vote_count: number; verified: number }>(await h.db.execute(sql`select p.title, s.kind, p.vote_count,
      (select count(*)::int from votes v join end_users e on e.id = v.end_user_id where v.post_id = p.id and e.verified_at is not null) as verified
      from posts p join statuses s on s.id = p.status_id where p.workspace_id = ${ws.id} order by p.title`))
    expect(posts).toEqual([{ title: 'Add search', kind: 'planned', vote_count: 2, verified: 2 }, { title: 'Faster pages', kind: 'complete', vote_count: 1, verified: 1 }])
    const again = await importedAndDone(ws.owner, ws.slug, 'fider', { file })
    expect(Object.values(again.counts).reduce((sum: number, entity: any) => sum + entity.created, 0)).toBe(0)
  })
})

describe('Canny objects', () => {
  test('boards, companies, users, statuses, posts, comments, votes and changelog entries', async () => {
    const ws = await workspaceFixture(h)
    const before = await sideEffects(ws.id)
    const done = await importedAndDone(ws.owner, ws.slug, 'canny', { file: 'canny.json' })
    expect(done.counts.boards.created).toBe(2)
    expect(done.counts.companies.created).toBe(1)
    expect(done.counts.users.created).toBe(2)
    expect(done.counts.statuses).toEqual({ created: 1, merged: 1, skipped: 0 })
    expect(done.counts.posts.created).toBe(2)
    expect(done.counts.comments.created).toBe(2)
    expect(done.counts.votes.created).toBe(3)
    expect(done.counts.changelog_entries.created).toBe(1)
    const [zapier] = rowsOf<{ vote_count: number; comment_count: number; status: string; demand_companies: number; demand_mrr: number }>(await h.db.execute(sql`
      select p.vote_count, p.comment_count, s.name as status, p.demand_companies, p.demand_mrr::int as demand_mrr from posts p join statuses s on s.id = p.status_id where p.workspace_id = ${ws.id} and p.title = 'Zapier integration'`))
    // Canny's score (25) is kept; one public comment (the other is internal); Hank is identified, so Globex's MRR counts.
    expect(zapier).toEqual({ vote_count: 25, comment_count: 1, status: 'Under review', demand_companies: 1, demand_mrr: 120050 })
    const [entry] = rowsOf<{ published_at: string; posts: number }>(await h.db.execute(sql`select published_at::text, (select count(*)::int from changelog_posts cp where cp.entry_id = e.id) as posts from changelog_entries e where e.workspace_id = ${ws.id}`))
    expect(entry!.posts).toBe(1)
    expect(entry!.published_at).not.toBeNull()
    expect(await sideEffects(ws.id)).toEqual(before)
  })
})

describe('files that are not what they claim', () => {
  let ws: WorkspaceFixture
  beforeAll(async () => {
    ws = await workspaceFixture(h)
  })

  test('an unclosed quote is 422 naming its line, and nothing is queued', async () => {
    const res = await upload(ws.owner, ws.slug, 'csv', { file: 'broken.csv' })
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('VALIDATION_ERROR')
    expect(JSON.stringify(res.body.detail)).toContain('line 3')
    expect(await count('imports', ws.id)).toBe(0)
  })

  test('JSON sent as CSV, CSV sent as Fider, a Canny file without posts: 422 with the line', async () => {
    const asCsv = await upload(ws.owner, ws.slug, 'csv', { file: 'fider.json' })
    expect(asCsv.status).toBe(422)
    expect(JSON.stringify(asCsv.body.detail)).toContain('line 1')
    const asFider = await upload(ws.owner, ws.slug, 'fider', { file: 'posts.csv' })
    expect(asFider.status).toBe(422)
    expect(JSON.stringify(asFider.body.detail)).toContain('line 1: expected a JSON object')
    const noPosts = await upload(ws.owner, ws.slug, 'canny', { file: new Blob(['{"boards": [{"id": "b"}],\n"posts": [1]}']) })
    expect(noPosts.status).toBe(422)
    expect(JSON.stringify(noPosts.body.detail)).toContain('line 2')
  })

  test('a malformed JSON element is 422, never a 500', async () => {
    const res = await upload(ws.owner, ws.slug, 'canny', { file: new Blob(['{"posts": [\n{"id": "p", "title": }\n]}']) })
    expect(res.status).toBe(422)
    expect(JSON.stringify(res.body.detail)).toContain('line 2')
  })

  test('a wrong format, a missing file, a file the format does not take: 422', async () => {
    const badFormat = await upload(ws.owner, ws.slug, 'trello', { file: 'posts.csv' })
    expect(badFormat.status).toBe(422)
    const noFile = await ws.owner.call('POST', `/api/v1/workspaces/${ws.slug}/imports`, { raw: form('csv', {}) })
    expect(noFile.status).toBe(422)
    const extra = await upload(ws.owner, ws.slug, 'fider', { file: 'fider.json', votes: 'three-votes.csv' })
    expect(extra.status).toBe(422)
    expect(await count('imports', ws.id)).toBe(0)
  })

  test('the file as the whole body with the fields in the query', async () => {
    const res = await ws.owner.call('POST', `/api/v1/workspaces/${ws.slug}/imports?format=canny&dry_run=true`, { raw: Bun.file(`${FIXTURES}canny.json`), headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(200)
    expect(res.body.counts.posts.created).toBe(2)
  })
})

describe('zips that are not a Fider backup', () => {
  let ws: WorkspaceFixture
  beforeAll(async () => {
    ws = await workspaceFixture(h)
  })
  const backup = () => Bun.file(`${FIXTURES}fider-backup.zip`).bytes()
  /** A zip of `entries`, each `size` bytes of zeros pushed a megabyte at a time (so a bomb is made without holding it). */
  function zipOf(entries: Record<string, number | string>) {
    const parts: Uint8Array[] = []
    const zip = new Zip((error, chunk) => void (error ? Promise.reject(error) : parts.push(chunk)))
    for (const [name, content] of Object.entries(entries)) {
      const entry = new ZipDeflate(name, { level: 9 })
      zip.add(entry)
      if (typeof content === 'string') entry.push(new TextEncoder().encode(content), true)
      else for (let left = content; left > 0; left -= 1 << 20) entry.push(new Uint8Array(Math.min(left, 1 << 20)), left <= 1 << 20)
    }
    zip.end()
    return new Blob(parts as BlobPart[])
  }
  const refused = async (file: Blob, format = 'fider') => {
    const res = await upload(ws.owner, ws.slug, format, { file })
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('VALIDATION_ERROR')
    return JSON.stringify(res.body.detail)
  }

  test('a truncated backup.zip is 422 saying so, for a dry run too', async () => {
    const bytes = await backup()
    expect(await refused(new Blob([bytes.subarray(0, Math.floor(bytes.length / 2))]))).toContain('truncated')
    const dry = await upload(ws.owner, ws.slug, 'fider', { file: new Blob([bytes.subarray(0, 1500)]) }, { dry_run: 'true' })
    expect(dry.status).toBe(422)
    expect(await count('imports', ws.id)).toBe(0)
  })

  test('a zip bomb (120 KB that inflates to 101 MB) is refused at the 100 MB limit', async () => {
    const bomb = zipOf({ 'tenants.json': '[]', 'users.json': '[]', 'posts.json': 101 * 1024 * 1024 })
    expect(bomb.size).toBeLessThan(200 * 1024)
    expect(await refused(bomb)).toContain('inflates to more than 100 MB')
    expect(await count('imports', ws.id)).toBe(0)
  }, 90_000)

  test('a zip without Fider\'s tables names what is missing; a zip sent as CSV or Canny, or a corrupt one, is 422', async () => {
    expect(await refused(zipOf({ 'readme.txt': 'hello', 'posts.json': '[]' }))).toContain('not a Fider backup: it has no tenants.json, users.json, post_votes.json')
    expect(await refused(await Bun.file(`${FIXTURES}fider-backup.zip`).arrayBuffer().then((bytes) => new Blob([bytes])), 'canny')).toContain('line 1')
    expect((await upload(ws.owner, ws.slug, 'csv', { file: 'fider-backup.zip' })).status).toBe(422)
    const corrupt = await backup()
    corrupt.fill(0x41, 200, 400)
    expect(await refused(new Blob([corrupt]))).toMatch(/corrupt|truncated|line/)
    expect(await refused(zipOf({ 'tenants.json': '[]', 'users.json': '[]', 'post_votes.json': '[]', 'posts.json': '[{"id": 1, ' }))).toContain('line 1')
    expect(await count('imports', ws.id)).toBe(0)
  })

  test('a member, a key without imports:write and a revoked key are refused before the zip is read', async () => {
    const member = await addMember(h, ws, `zip-member-${ws.slug}@example.com`, 'member')
    const asMember = await member.client.call('POST', `/api/v1/workspaces/${ws.slug}/imports`, { raw: form('fider', { file: 'fider-backup.zip' }) })
    expect(asMember.status).toBe(403)
    const readKey = await ws.key(['posts:read'])
    const wrongScope = await h.client({ authorization: `Bearer ${readKey}` }).call('POST', `/api/v1/workspaces/${ws.slug}/imports`, { raw: form('fider', { file: 'fider-backup.zip' }) })
    expect(wrongScope.status).toBe(403)
    expect(wrongScope.body.code).toBe('INSUFFICIENT_SCOPE')
    const key = await ws.key(['imports:write'], 'zip importer')
    const listed = (await ws.owner.get(`/api/v1/workspaces/${ws.slug}/api-keys`)).body as { id: string; name: string }[]
    expect((await ws.owner.delete(`/api/v1/workspaces/${ws.slug}/api-keys/${listed.find((item) => item.name === 'zip importer')!.id}`)).status).toBe(204)
    const revoked = await h.client({ authorization: `Bearer ${key}` }).call('POST', `/api/v1/workspaces/${ws.slug}/imports`, { raw: form('fider', { file: 'fider-backup.zip' }) })
    expect(revoked.status).toBe(401)
    expect(revoked.body.code).toBe('INVALID_API_KEY')
    expect(await count('imports', ws.id)).toBe(0)
  })
})

describe('who may import', () => {
  test('members, keys without imports:write and other workspaces are refused', async () => {
    const ws = await workspaceFixture(h)
    const other = await workspaceFixture(h)
    const member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
    expect((await upload(member.client, ws.slug, 'csv', { file: 'posts.csv' })).status).toBe(403)
    const readKey = await ws.key(['posts:read', 'posts:write'])
    const refused = await h.client({ authorization: `Bearer ${readKey}` }).call('POST', `/api/v1/workspaces/${ws.slug}/imports`, { raw: form('csv', { file: 'posts.csv' }) })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe('INSUFFICIENT_SCOPE')
    const key = await ws.key(['imports:write'])
    const byKey = await h.client({ authorization: `Bearer ${key}` }).call('POST', `/api/v1/workspaces/${ws.slug}/imports`, { raw: form('csv', { file: 'three-posts.csv' }) })
    expect(byKey.status).toBe(202)
    // Not a member: the workspace is not theirs to see.
    expect((await upload(other.owner, ws.slug, 'csv', { file: 'posts.csv' })).status).toBe(404)
    expect((await other.owner.get(`/api/v1/workspaces/${other.slug}/imports/${byKey.body.id}`)).status).toBe(404)
    expect((await ws.owner.get(`/api/v1/workspaces/${ws.slug}/imports`)).body.items.map((item: { id: string }) => item.id)).toEqual([byKey.body.id])
    await drain()
  })
})

describe('an interrupted import', () => {
  const big = () => {
    const lines = ['id,board,title,created_at,voters']
    for (let i = 0; i < 120; i++) lines.push(`n${i},Ideas,Idea number ${i},2024-01-01T00:00:${String(i % 60).padStart(2, '0')}Z,v${i % 7}@example.com|w${i % 11}@example.com`)
    return new Blob([lines.join('\n')])
  }
  const snapshot = async (workspaceId: string) => rowsOf(await h.db.execute(sql`select p.title, p.vote_count, p.created_at::text,
    (select string_agg(e.email, ',' order by e.email) from votes v join end_users e on e.id = v.end_user_id where v.post_id = p.id) as voters
    from posts p where p.workspace_id = ${workspaceId} order by p.title`))

  test('resumed by the next claim from its checkpoint, it ends with the rows of an uninterrupted one', async () => {
    const whole = await workspaceFixture(h)
    await importedAndDone(whole.owner, whole.slug, 'csv', { file: big() })

    const cut = await workspaceFixture(h)
    const created = await upload(cut.owner, cut.slug, 'csv', { file: big() })
    class Killed extends Error {}
    let batches = 0
    // The first worker dies after three committed batches of 25 (mid-way through the posts); its owner holds no lock, as a dead worker's.
    await expect(drain(newOwner(), { batchSize: 25, afterBatch: () => { if (++batches === 3) throw new Killed() } })).rejects.toBeInstanceOf(Killed)
    const halfway = await cut.owner.get(`/api/v1/workspaces/${cut.slug}/imports/${created.body.id}`)
    expect(halfway.body.status).toBe('running')
    expect(halfway.body.counts.posts.created).toBe(75)
    expect(halfway.body.progress.pass).toBe('post')
    expect(await count('posts', cut.id)).toBe(75)
    // Another worker takes it over at once (the first one's lock is gone) and finishes it.
    await drain(newOwner(), { batchSize: 25 })
    const done = await cut.owner.get(`/api/v1/workspaces/${cut.slug}/imports/${created.body.id}`)
    expect(done.body.status).toBe('completed')
    expect(done.body.attempts).toBe(2)
    expect(done.body.counts.posts).toEqual({ created: 120, merged: 0, skipped: 0 })
    expect(done.body.counts.votes.created).toBe(240)
    expect(await snapshot(cut.id)).toEqual(await snapshot(whole.id))
    expect(await count('end_users', cut.id)).toBe(await count('end_users', whole.id))
  })

  test('a live worker\'s claim is not taken over', async () => {
    const ws = await workspaceFixture(h)
    const created = await upload(ws.owner, ws.slug, 'csv', { file: 'three-posts.csv' })
    const live = newOwner()
    await h.database.sql.rows(lockOwnerSql(live))
    const claimed = await claimImport(h.db, live, LOCK_SPACE)
    expect(claimed?.id).toBe(created.body.id)
    expect(await claimImport(h.db, newOwner(), LOCK_SPACE)).toBeNull()
    await runImport(h.db, h.ctx.storage, claimed!, live)
    expect((await ws.owner.get(`/api/v1/workspaces/${ws.slug}/imports/${created.body.id}`)).body.status).toBe('completed')
  })
})

describe('the background loop', () => {
  test('a new import wakes the worker\'s loop, which runs it', async () => {
    const ws = await workspaceFixture(h)
    const owner = newOwner()
    const loop = startImportLoop({ ...h.ctx, database: h.database }, () => owner)
    try {
      const created = await upload(ws.owner, ws.slug, 'canny', { file: 'canny.json' })
      let status = ''
      for (let i = 0; i < 100 && status !== 'completed'; i++) {
        await Bun.sleep(50)
        status = (await ws.owner.get(`/api/v1/workspaces/${ws.slug}/imports/${created.body.id}`)).body.status
      }
      expect(status).toBe('completed')
    } finally {
      await loop.stop()
    }
  })
})
