// Issue 36: posts in every language, similar posts for a post and for a draft, the duplicate-suggestion queue.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import { rowsOf } from '../../server/db/client.ts'
import { duplicateSuggestions, events, posts, votes, workspaces } from '../../server/db/schema/index.ts'
import { suggestDuplicates } from '../../server/modules/duplicates/service.ts'
import { startBackground, type Background } from '../../server/background/supervisor.ts'
import { eventually } from '../helpers/receiver.ts'
import { detectLanguage } from '../../server/lib/language.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { freshRateWindow, startHarness, type Harness } from '../helpers/harness.ts'

const LIMIT = 40
let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let key: string
let background: Background
beforeAll(async () => {
  h = await startHarness({ RATE_LIMIT_PER_IP: String(LIMIT), LOG_LEVEL: 'error' })
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'secret', true)
  await boardFixture(h, other.id, 'ideas')
  key = await ws.key()
  // The suggestion step runs in the background worker (duplicates/queue.ts), as in server/index.ts.
  background = startBackground({ ...h.ctx, config: { ...h.ctx.config, databaseUrl: h.databaseUrl } })
  await background.ready()
}, 180_000)
afterAll(async () => {
  await background?.stop()
  await h?.close()
})

const api = () => h.client({ authorization: `Bearer ${key}` })
const create = async (title: string, body = '', extra: Record<string, unknown> = {}, headers: Record<string, string> = {}, board = 'ideas') => {
  const res = await api().post(`/api/v1/boards/${board}/posts`, { title, body, ...extra }, { headers })
  expect(res.status).toBe(201)
  return res.body as { id: string; language: string; title: string }
}
const search = async (q: string) => {
  const res = await api().get(`/api/v1/boards/ideas/posts?q=${encodeURIComponent(q)}`)
  expect(res.status).toBe(200)
  return (res.body.items as { id: string }[]).map((item) => item.id)
}

describe('languages', () => {
  test('the language comes from locale, then Content-Language, then detection; each is stored and searchable in its own words', async () => {
    const de = await create('Größere Schrift in den Einstellungen', 'Die Schrift ist für unsere Kollegen zu klein, bitte einstellbar machen')
    const fr = await create('Rappels', 'x', { locale: 'fr-CA' })
    const es = await create('Copias de seguridad automáticas', 'cada día', {}, { 'content-language': 'es-ES, en' })
    const ja = await create('ダークモードに対応してほしい', '夜に作業すると画面が明るすぎます')
    const ar = await create('إضافة الوضع الليلي', 'الشاشة ساطعة جدا في الليل')
    const he = await create('מצב כהה לאפליקציה', 'המסך בהיר מדי בלילה')
    expect([de.language, fr.language, es.language, ja.language, ar.language, he.language]).toEqual(['de', 'fr', 'es', 'ja', 'ar', 'he'])
    const [row] = await h.db.select({ language: posts.language }).from(posts).where(eq(posts.id, de.id))
    expect(row!.language).toBe('de')
    // German stems without accents, Spanish stems, Japanese bigrams, Arabic and Hebrew words.
    expect(await search('grosse Schriften')).toEqual([de.id])
    expect(await search('Größe')).toEqual([de.id])
    expect(await search('copia automatica')).toEqual([es.id])
    expect(await search('ダークモード')).toEqual([ja.id])
    expect(await search('الليلي')).toEqual([ar.id])
    expect(await search('כהה')).toEqual([he.id])
    // The team corrects a language; the search index follows.
    const fixed = await api().patch(`/api/v1/posts/${fr.id}`, { language: 'en' })
    expect(fixed.status).toBe(200)
    expect(fixed.body.language).toBe('en')
    expect((await api().patch(`/api/v1/posts/${fr.id}`, { language: 'xx' })).status).toBe(422)
  })

  test('detection is a documented heuristic: scripts first, then function words and letters; nothing to go on is English', () => {
    expect(detectLanguage('Please add a dark mode to the app')).toBe('en')
    expect(detectLanguage('Bitte einen dunklen Modus für die App')).toBe('de')
    expect(detectLanguage("Ajouter un mode sombre pour l'application")).toBe('fr')
    expect(detectLanguage('Añadir un modo oscuro para la aplicación')).toBe('es')
    expect(detectLanguage('Slack ダークモード')).toBe('ja')
    expect(detectLanguage('😀 1234 !!')).toBe('en')
  })

  test('tsquery and SQL syntax, emoji, RTL marks and mixed scripts in q are a sane answer, never a 500', async () => {
    for (const q of ["!", ':*', '&', '|', "'", '"', '""', "dark' | 'mode", '!(dark) & :*', "'; drop table posts; --", '😀😀', '\u200f\u202e', 'Dark ダーク אור', '-', 'or', '<->']) {
      const res = await api().get(`/api/v1/boards/ideas/posts?q=${encodeURIComponent(q)}`)
      expect(res.status).toBe(200)
      const pub = await h.client().get(`/api/v1/public/${ws.slug}/posts?q=${encodeURIComponent(q)}`)
      expect(pub.status).toBe(200)
    }
  })

  test('an empty, oversize or 20,000-character q is a 4xx in the common shape, never a 500', async () => {
    for (const q of ['', 'a'.repeat(201)]) {
      for (const res of [await api().get(`/api/v1/boards/ideas/posts?q=${q}`), await h.client().get(`/api/v1/public/${ws.slug}/posts?q=${q}`)]) {
        expect(res.status).toBe(422)
        expect(res.body.code).toBe('VALIDATION_ERROR')
      }
    }
    // Bun refuses a request line this long before the app sees it (431); either way no 500.
    const huge = await api().get(`/api/v1/boards/ideas/posts?q=${'é'.repeat(20_000)}`)
    expect([414, 422, 431]).toContain(huge.status)
  })
})

describe('similar posts', () => {
  test('GET /posts/{id}/similar ranks candidates with a score and reasons, leaving out the post itself', async () => {
    const original = await create('Export invoices to Excel', 'Our accountant needs every invoice in an Excel spreadsheet')
    const unrelated = await create('Gantt chart view', 'Plan projects on a timeline')
    const dup = await create('Excel export of invoices', 'Download the invoices as a spreadsheet for accounting')
    const res = await api().get(`/api/v1/posts/${dup.id}/similar?limit=3`)
    expect(res.status).toBe(200)
    // Read before toMatchObject: bun's toMatchObject leaves its asymmetric matchers in the object it checked.
    const best = res.body.items[0]
    expect(best.score).toBeGreaterThan(0.4)
    expect(best.score).toBeLessThanOrEqual(1)
    expect(best.post).toMatchObject({ id: original.id, title: 'Export invoices to Excel' })
    expect(res.body.items[0].reasons).toEqual(expect.arrayContaining([expect.stringMatching(/^shared terms: .*excel/), 'same board']))
    expect(res.body.items.map((item: { post: { id: string } }) => item.post.id)).not.toContain(dup.id)
    expect(res.body.items.map((item: { post: { id: string } }) => item.post.id)).not.toContain(unrelated.id)
    // Deterministic: the same data, the same answer.
    expect((await api().get(`/api/v1/posts/${dup.id}/similar?limit=3`)).body).toEqual(res.body)
  })

  test('errors: unknown or foreign post 404, bad limit 422, no credential 401, a key without posts:read 403', async () => {
    const post = await create('Some post about webhooks', 'retries')
    expect((await api().get('/api/v1/posts/post_nope/similar')).status).toBe(404)
    const foreign = await h.client({ authorization: `Bearer ${await other.key()}` }).get(`/api/v1/posts/${post.id}/similar`)
    expect(foreign.status).toBe(404)
    expect((await api().get(`/api/v1/posts/${post.id}/similar?limit=0`)).status).toBe(422)
    expect((await api().get(`/api/v1/posts/${post.id}/similar?limit=21`)).status).toBe(422)
    expect((await h.client().get(`/api/v1/posts/${post.id}/similar`)).status).toBe(401)
    const labelsOnly = await ws.key(['labels:read'])
    expect((await h.client({ authorization: `Bearer ${labelsOnly}` }).get(`/api/v1/posts/${post.id}/similar`)).status).toBe(403)
  })

  test('POST /public/{slug}/similar: a draft against public boards only, as the public sees posts; bad drafts are 422 or empty, never 500', async () => {
    const visible = await create('Offline mode for the tablet app', 'Technicians work without network')
    const hidden = await create('Offline mode for the tablet app (internal)', 'Technicians work without network', {}, {}, 'secret')
    const res = await h.client().post(`/api/v1/public/${ws.slug}/similar`, { title: 'Tablet app offline', body: 'no network on site' })
    expect(res.status).toBe(200)
    const ids = res.body.items.map((item: { post: { id: string } }) => item.post.id)
    expect(ids).toContain(visible.id)
    expect(ids).not.toContain(hidden.id)
    expect(res.body.items.find((item: { post: { id: string } }) => item.post.id === visible.id).post.owner_user_id).toBeNull()
    expect((await h.client().post(`/api/v1/public/${ws.slug}/similar`, { title: '' })).status).toBe(422)
    expect((await h.client().post(`/api/v1/public/${ws.slug}/similar`, {})).status).toBe(422)
    expect((await h.client().post(`/api/v1/public/${ws.slug}/similar`, { title: 'x', body: 'a'.repeat(20_001) })).status).toBe(422)
    expect((await h.client().post(`/api/v1/public/${ws.slug}/similar`, { title: 'x', extra: 1 })).status).toBe(422)
    expect((await h.client().post('/api/v1/public/no-such-workspace/similar', { title: 'Offline' })).status).toBe(404)
    expect((await h.client().post(`/api/v1/public/${ws.slug}/similar`, { title: 'x'.repeat(201) })).status).toBe(422)
    for (const draft of [{ title: 'offline', body: 'word '.repeat(4000) }, { title: '😀🙈' }, { title: '\u200f\u202eoffline\u202c' }, { title: "'; :* & ! | <-> \"" }, { title: 'Offline オフライン وضع מצב' },
      { title: '   ', body: '' }, { title: "O'Reilly's tablet\\offline \\' mode", body: "it's 'quoted' \\\\ back\\slash a:* b:A !c" }]) {
      const answer = await h.client().post(`/api/v1/public/${ws.slug}/similar`, draft)
      expect(answer.status).toBe(200)
      expect(Array.isArray(answer.body.items)).toBe(true)
    }
    // A full 20,000-character draft of many different words in several scripts: far more terms than are looked up.
    const words = Array.from({ length: 3000 }, (_, i) => ['offline', 'Größe', 'オフライン', 'وضع', 'מצב', 'señal', 'réseau'][i % 7] + i.toString(36))
    const long = words.join(' ').slice(0, 20_000)
    expect(long).toHaveLength(20_000)
    const big = await h.client().post(`/api/v1/public/${ws.slug}/similar`, { title: 'Tablet offline', body: long })
    expect(big.status).toBe(200)
    expect(big.body.items.map((item: { post: { id: string } }) => item.post.id)).toContain(visible.id)
  })

  test('a post full of tsquery syntax, quotes and backslashes has similar posts like any other', async () => {
    const quoted = await create("Can't export: 'CSV' \\ tabs!", "a:* & b | !c <-> 'd' \\\\ it's")
    const other = await create("Can't export CSV tabs", 'the export button fails')
    const res = await api().get(`/api/v1/posts/${quoted.id}/similar`)
    expect(res.status).toBe(200)
    expect(res.body.items[0].post.id).toBe(other.id)
  })

  test('a post with several candidates above the threshold stores each, in score order, each raising its event', async () => {
    const twins = await workspaceFixture(h)
    await boardFixture(h, twins.id, 'ideas')
    const twinKey = h.client({ authorization: `Bearer ${await twins.key()}` })
    const ids: string[] = []
    for (const title of ['Export invoices to PDF', 'Export the invoices as PDF files', 'PDF export of invoices', 'Invoices exported to PDF']) {
      const res = await twinKey.post('/api/v1/boards/ideas/posts', { title, body: 'We need our invoices as PDF for accounting' })
      expect(res.status).toBe(201)
      ids.push(res.body.id)
    }
    const newest = ids.at(-1)!
    const stored = await eventually(async () => {
      const rows = await h.db.select().from(duplicateSuggestions).where(eq(duplicateSuggestions.postId, newest))
      return rows.length === 3 && rows
    }, 15_000, 'three suggestions for the newest post')
    expect(new Set(stored.map((row) => row.candidateId))).toEqual(new Set(ids.slice(0, 3)))
    const raised = (await h.db.select().from(events).where(and(eq(events.workspaceId, twins.id), eq(events.type, 'post.duplicate_suggested'))).orderBy(events.id))
      .map((event) => (event.data as { suggestion: { id: string; score: number; post: { id: string }; candidate: { id: string; title: string } } }).suggestion)
      .filter((suggestion) => suggestion.post.id === newest)
    expect(raised.map((suggestion) => suggestion.id).sort()).toEqual(stored.map((row) => row.id).sort())
    // Raised in the candidates' order, best first, each with both posts rendered.
    expect(raised.map((suggestion) => suggestion.score)).toEqual([...raised.map((suggestion) => suggestion.score)].sort((a, b) => b - a))
    for (const suggestion of raised) expect(ids.slice(0, 3)).toContain(suggestion.candidate.id)
  })

  test('a flood of one title: a draft whose every term more than 2,000 posts hold is matched against the newest of them', async () => {
    const flood = await workspaceFixture(h)
    const board = await boardFixture(h, flood.id, 'ideas')
    // 2,100 posts of one title, the newest first by created_at (post_flood_1 is a minute old, post_flood_2100 35 hours).
    await h.db.execute(sql`insert into posts (id, workspace_id, board_id, title, body, status_id, author_name, created_at, updated_at)
      select 'post_flood_' || g, ${flood.id}, ${board.id}, 'Dark mode for the editor', '', (select id from statuses where workspace_id = ${flood.id} and is_default), 'Flood',
        now() - g * interval '1 minute', now() - g * interval '1 minute'
      from generate_series(1, 2100) g`)
    const res = await h.client({ 'x-forwarded-for': '203.0.113.99' }).post(`/api/v1/public/${flood.slug}/similar`, { title: 'Dark mode for the editor' })
    expect(res.status).toBe(200)
    const found = res.body.items.map((item: { post: { id: string } }) => item.post.id) as string[]
    expect(found.length).toBeGreaterThan(0)
    // From the 50 newest (ties broken by id); the trigram search over all 2,100 answered post_flood_100, _1000, ... by id alone.
    const newest = new Set(Array.from({ length: 50 }, (_, i) => `post_flood_${i + 1}`))
    expect(found.filter((id) => !newest.has(id))).toEqual([])
    expect(res.body.items[0].score).toBeGreaterThan(0.5)
  })

  test('the public draft form is rate limited per IP', async () => {
    await freshRateWindow()
    const client = h.client({ 'x-forwarded-for': '203.0.113.77' })
    let limited = 0
    for (let i = 0; i <= LIMIT; i++) if ((await client.post(`/api/v1/public/${ws.slug}/similar`, { title: 'rate' })).status === 429) limited++
    expect(limited).toBeGreaterThan(0)
  })
})

describe('search indexes', () => {
  test('the posts\' GIN indexes keep a short pending list (migration 0064): a search reads at most 64 kB of unmerged entries', async () => {
    const rows = rowsOf<{ relname: string; reloptions: string[] | null }>(await h.db.execute(sql`select relname, reloptions from pg_class where relname in ('posts_search_idx', 'posts_title_trgm_idx') order by relname`))
    expect(rows.map((row) => [row.relname, row.reloptions])).toEqual([['posts_search_idx', ['gin_pending_list_limit=64']], ['posts_title_trgm_idx', ['gin_pending_list_limit=64']]])
  })
})

describe('suggestion queue', () => {
  /** Polls the queue until the background step has stored a suggestion for `postId` (the create does not wait for it). */
  const suggestionFor = (postId: string) => eventually(async () => {
    const list = await api().get(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions`)
    expect(list.status).toBe(200)
    return list.body.items.find((item: { post: { id: string } }) => item.post.id === postId)
  }, 15_000, `a suggestion for ${postId}`)

  test('a new post stores its candidates above the threshold and raises post.duplicate_suggested; dismiss is for good', async () => {
    const original = await create('Sync due dates with Google Calendar', 'Deadlines should appear in my Google Calendar')
    const dup = await create('Google Calendar sync for deadlines', 'Show due dates in Google Calendar automatically')
    const suggestion = await suggestionFor(dup.id)
    expect(suggestion.id).toMatch(/^dup_/)
    expect(suggestion.candidate.id).toBe(original.id)
    expect([suggestion.status, suggestion.decided_at]).toEqual(['open', null])
    const raised = await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'post.duplicate_suggested')))
    // The event carries the suggestion as the API lists it.
    expect(raised.map((event) => (event.data as { suggestion: { id: string } }).suggestion).find((raisedOne) => raisedOne.id === suggestion.id)).toEqual(suggestion)

    const dismissed = await api().post(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions/${suggestion.id}/dismiss`)
    expect(dismissed.status).toBe(200)
    expect(dismissed.body).toMatchObject({ status: 'dismissed', decided_at: expect.any(String) })
    expect((await api().post(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions/${suggestion.id}/dismiss`)).status).toBe(409)
    expect((await api().post(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions/${suggestion.id}/accept`)).status).toBe(409)
    // Looking again for the same pair, either way round, stores nothing.
    const [row] = await h.db.select().from(posts).where(eq(posts.id, original.id))
    const again = await suggestDuplicates(h.db, ws.id, { id: original.id, title: row!.title, body: row!.body, language: 'en', board_id: row!.boardId })
    expect(again.map((item) => item.candidate_id)).not.toContain(dup.id)
    expect(await h.db.select().from(duplicateSuggestions).where(eq(duplicateSuggestions.postId, original.id))).toHaveLength(0)
    const open = await api().get(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions`)
    expect(open.body.items.map((item: { id: string }) => item.id)).not.toContain(suggestion.id)
  })

  test('accept merges the newer post into its candidate, with voters de-duplicated', async () => {
    const original = await create('Two-factor authentication with an authenticator app', 'Protect accounts with TOTP codes')
    const dup = await create('Authenticator app for two-factor login', 'TOTP two-factor authentication please')
    for (const email of ['both@customer.example', 'one@customer.example']) await api().post(`/api/v1/posts/${dup.id}/votes`, { email })
    await api().post(`/api/v1/posts/${original.id}/votes`, { email: 'both@customer.example' })
    const suggestion = await suggestionFor(dup.id)
    expect(suggestion.candidate.id).toBe(original.id)

    const readOnly = await ws.key(['posts:read'])
    expect((await h.client({ authorization: `Bearer ${readOnly}` }).post(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions/${suggestion.id}/accept`)).status).toBe(403)
    const foreign = await h.client({ authorization: `Bearer ${await other.key()}` }).post(`/api/v1/workspaces/${other.slug}/duplicate-suggestions/${suggestion.id}/accept`)
    expect(foreign.status).toBe(404)
    expect((await api().post(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions/dup_nope/accept`)).status).toBe(404)

    const accepted = await api().post(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions/${suggestion.id}/accept`)
    expect(accepted.status).toBe(200)
    expect(accepted.body).toMatchObject({ status: 'accepted', post: { id: dup.id, merged_into: original.id }, candidate: { id: original.id, votes: 2 } })
    expect(await h.db.select().from(votes).where(eq(votes.postId, original.id))).toHaveLength(2)
    expect((await api().post(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions/${suggestion.id}/accept`)).status).toBe(409)
  })

  test('the queue is per workspace and needs posts:read', async () => {
    expect((await h.client().get(`/api/v1/workspaces/${ws.slug}/duplicate-suggestions`)).status).toBe(401)
    const otherList = await h.client({ authorization: `Bearer ${await other.key()}` }).get(`/api/v1/workspaces/${other.slug}/duplicate-suggestions`)
    expect(otherList.status).toBe(200)
    expect(otherList.body.items).toEqual([])
    const wrongSlug = await api().get(`/api/v1/workspaces/${other.slug}/duplicate-suggestions`)
    expect([403, 404]).toContain(wrongSlug.status)
  })

  test('a batch of new posts gets the suggestions each gets alone, and one failing check sinks no other', async () => {
    const batch = await workspaceFixture(h)
    await boardFixture(h, batch.id, 'ideas')
    const client = h.client({ authorization: `Bearer ${await batch.key()}` })
    const ids: string[] = []
    for (const [title, body] of [
      ['Export invoices to PDF', 'Accounting needs our invoices as PDF'], ['Dark mode for the editor', 'The editor is too bright at night'],
      ['Two-factor login with an authenticator app', 'Security wants TOTP codes'], ['PDF export of invoices', 'Our accountant wants PDF invoices'],
      ['Editor dark theme', 'Please add a dark theme to the editor for night work'], ['Authenticator app codes at login', 'Two-factor with TOTP for security'],
    ]) {
      const res = await client.post('/api/v1/boards/ideas/posts', { title, body })
      expect(res.status).toBe(201)
      ids.push(res.body.id)
    }
    const newer = ids.slice(3)
    const pairs = async () => (await h.db.select().from(duplicateSuggestions).where(eq(duplicateSuggestions.workspaceId, batch.id)))
      .map((row) => `${row.postId}>${row.candidateId}`).sort()
    await eventually(async () => rowsOf(await h.db.execute(sql`select 1 from duplicate_checks where workspace_id = ${batch.id}`)).length === 0 && (await pairs()).length >= 3, 15_000, 'the first checks')
    const alone = await pairs()
    expect(alone).toEqual([`${newer[0]}>${ids[0]}`, `${newer[1]}>${ids[1]}`, `${newer[2]}>${ids[2]}`].sort())

    // The three checks again, queued in one statement so the suggester claims them as one batch; storing the
    // second post's suggestion fails (a trigger of this test), so the batch fails and each is run alone.
    await h.db.execute(sql`delete from duplicate_suggestions where workspace_id = ${batch.id}`)
    await h.db.execute(sql.raw(`create function fail_one_suggestion() returns trigger language plpgsql as $$
      begin if new.post_id = '${newer[1]}' then raise exception 'refused by the test'; end if; return new; end $$`))
    await h.db.execute(sql`create trigger fail_one_suggestion before insert on duplicate_suggestions for each row execute function fail_one_suggestion()`)
    try {
      await h.db.execute(sql`insert into duplicate_checks (post_id, workspace_id) select unnest(${sql.param(newer)}::text[]), ${batch.id}`)
      const failed = await eventually(async () => {
        const waiting = rowsOf<{ post_id: string; attempts: number }>(await h.db.execute(sql`select post_id, attempts from duplicate_checks where workspace_id = ${batch.id}`))
        return waiting.length === 1 && waiting[0]!.attempts >= 1 && waiting
      }, 15_000, 'the two good checks done, the failing one left to try again')
      expect(failed[0]!.post_id).toBe(newer[1]!)
      expect(await pairs()).toEqual([`${newer[0]}>${ids[0]}`, `${newer[2]}>${ids[2]}`].sort())
    } finally {
      await h.db.execute(sql`drop trigger fail_one_suggestion on duplicate_suggestions`)
      await h.db.execute(sql`drop function fail_one_suggestion()`)
      await h.db.execute(sql`delete from duplicate_checks where workspace_id = ${batch.id}`)
    }
  })
})

describe('document frequencies (migration 0048)', () => {
  /** Per lexeme, the posts holding it as the idf reads it (counts + deltas) and as a recount of the posts says. */
  const frequencies = async (workspaceId: string) => {
    const kept = await h.db.execute(sql`select lexeme, sum(posts)::int as posts from (
        select lexeme, posts from post_term_counts where workspace_id = ${workspaceId}
        union all select t.lexeme, d.posts from post_term_deltas d, unnest(d.lexemes) t(lexeme) where d.workspace_id = ${workspaceId}) f
      group by lexeme having sum(posts) <> 0 order by lexeme`)
    const counted = await h.db.execute(sql`select t as lexeme, count(*)::int as posts from posts p, unnest(tsvector_to_array(p.search)) t
      where p.workspace_id = ${workspaceId} and p.merged_into_id is null group by t order by t`)
    return { kept: rowsOf<{ lexeme: string; posts: number }>(kept), counted: rowsOf<{ lexeme: string; posts: number }>(counted) }
  }

  test('stay exact through creates, edits, merges and deletes, are folded by the worker, and leave with their workspace', async () => {
    const third = await workspaceFixture(h)
    await boardFixture(h, third.id, 'ideas')
    const client = h.client({ authorization: `Bearer ${await third.key()}` })
    const made = []
    for (const [title, body] of [['Dark mode', 'A dark theme at night'], ['Night theme', 'Darker colours please'], ['Export to CSV', 'Finance needs CSV'], ['Größere Schrift', 'Die Schrift ist zu klein']]) {
      const res = await client.post('/api/v1/boards/ideas/posts', { title, body })
      expect(res.status).toBe(201)
      made.push(res.body.id as string)
    }
    let now = await frequencies(third.id)
    expect(now.kept).toEqual(now.counted)
    expect(now.kept).toContainEqual({ lexeme: 'night', posts: 2 })
    expect((await client.patch(`/api/v1/posts/${made[2]}`, { title: 'Export to Excel', body: 'Finance needs spreadsheets' })).status).toBe(200)
    expect((await client.post(`/api/v1/posts/${made[1]}/merge`, { into_post_id: made[0] })).status).toBe(200)
    expect((await client.delete(`/api/v1/posts/${made[3]}`)).status).toBe(204)
    now = await frequencies(third.id)
    expect(now.kept).toEqual(now.counted)
    expect(now.kept).toContainEqual({ lexeme: 'night', posts: 1 })
    expect(now.kept.map((row) => row.lexeme)).not.toContain('csv')
    // The background worker folds the deltas into the counts: each suggestion round (a new post's) starts with that.
    expect((await client.post('/api/v1/boards/ideas/posts', { title: 'Dark mode again', body: '' })).status).toBe(201)
    await eventually(async () => rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from post_term_deltas where workspace_id = ${third.id}`))[0]!.n === 0, 15_000, 'the deltas folded')
    now = await frequencies(third.id)
    expect(now.kept).toEqual(now.counted)
    expect(now.kept).toContainEqual({ lexeme: 'dark', posts: 2 })
    // A workspace's deletion cascades to its posts; their delete trigger leaves nothing behind and fails nothing.
    await h.db.delete(workspaces).where(eq(workspaces.id, third.id))
    expect(rowsOf(await h.db.execute(sql`select 1 from post_term_counts where workspace_id = ${third.id} union all select 1 from post_term_deltas where workspace_id = ${third.id}`))).toEqual([])
  })
})
