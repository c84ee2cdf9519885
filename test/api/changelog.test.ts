import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { changelogEmails, changelogEntries, changelogPosts, events, posts, statuses } from '../../server/db/schema/index.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { startSmtp } from '../helpers/smtp.ts'
import { createMailer } from '../../server/lib/mail.ts'
import { Chorus, NotFoundError, PermissionError } from '../../sdk/src/index.ts'

let h: Harness
let smtp: Awaited<ReturnType<typeof startSmtp>>
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
let reader: TestClient
let otherApi: TestClient
let anon: TestClient
const ids: Record<string, string> = {}

beforeAll(async () => {
  smtp = await startSmtp()
  h = await startHarness()
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  // Sign-in mail stays in the outbox for the fixtures; changelog mail goes through a real SMTP server.
  h.ctx.mail = createMailer({ ...h.ctx.config, smtpUrl: smtp.url }, h.ctx.database.sql, h.ctx.log)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'secret', true)
  await boardFixture(h, other.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  reader = h.client({ authorization: `Bearer ${await ws.key(['changelog:read'])}` })
  otherApi = h.client({ authorization: `Bearer ${await other.key()}` })
  anon = h.client()
  const post = async (client: TestClient, name: string, board: string, body: Record<string, unknown>) => {
    const res = await client.post(`/api/v1/boards/${board}/posts`, body)
    if (res.status !== 201) throw new Error(`post ${name}: ${res.status} ${JSON.stringify(res.body)}`)
    ids[name] = res.body.id
  }
  await post(api, 'dark', 'ideas', { title: 'Dark mode', email: 'ada@customer.example' })
  await post(api, 'csv', 'ideas', { title: 'CSV export', email: 'grace@customer.example' })
  await post(api, 'secret', 'secret', { title: 'Acquisition plan' })
  await post(otherApi, 'foreign', 'ideas', { title: 'Not yours' })
  // Ada votes on both linked posts (mailed once), Grace on one, Bob only on an unlinked post.
  for (const [postName, email] of [['dark', 'ada@customer.example'], ['csv', 'ada@customer.example'], ['csv', 'grace@customer.example'], ['secret', 'ada@customer.example']] as const) {
    const res = await api.post(`/api/v1/posts/${ids[postName]}/votes`, { email })
    if (res.status !== 200 && res.status !== 201) throw new Error(`vote: ${res.status} ${JSON.stringify(res.body)}`)
  }
  // An anonymous visitor votes through the widget's route with an address nobody confirmed: never mailed.
  const anonymous = await h.client().post(`/api/v1/public/${ws.slug}/posts/${ids.dark}/votes`, { email: 'anon@customer.example' })
  if (anonymous.status !== 200) throw new Error(`anonymous vote: ${anonymous.status} ${JSON.stringify(anonymous.body)}`)
}, 180_000)

afterAll(async () => {
  await h?.close()
  await smtp?.close()
})

const completeStatus = async () => (await h.db.select().from(statuses).where(and(eq(statuses.workspaceId, ws.id), eq(statuses.kind, 'complete'))).orderBy(statuses.position))[0]!

describe('happy', () => {
  test('a draft is created, read, listed, updated and deleted', async () => {
    const created = await api.post('/api/v1/changelog', { title: '  Faster search ', body: 'Now **2x** faster.', post_ids: [ids.dark] })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ title: 'Faster search', body: 'Now **2x** faster.', body_html: '<p>Now <strong>2x</strong> faster.</p>\n', published_at: null, post_ids: [ids.dark] })
    expect(created.body.id).toMatch(/^chg_[0-9a-z]{25}$/)
    const id = created.body.id

    expect((await reader.get(`/api/v1/changelog/${id}`)).body).toEqual(created.body)
    const drafts = await reader.get('/api/v1/changelog?state=draft')
    expect(drafts.status).toBe(200)
    expect(drafts.body).toMatchObject({ page: 1, per_page: 20, total: 1, total_pages: 1 })
    expect(drafts.body.items.map((entry: any) => entry.id)).toEqual([id])
    expect((await reader.get('/api/v1/changelog?state=published')).body.items.some((entry: any) => entry.id === id)).toBe(false)

    const updated = await api.patch(`/api/v1/changelog/${id}`, { body: 'Edited', post_ids: [] })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ body: 'Edited', body_html: '<p>Edited</p>\n', post_ids: [], published_at: null })
    // A draft changes no post.
    expect((await h.db.select().from(posts).where(eq(posts.id, ids.dark!)))[0]!.statusId).not.toBe((await completeStatus()).id)

    expect((await api.delete(`/api/v1/changelog/${id}`)).status).toBe(204)
    expect((await api.get(`/api/v1/changelog/${id}`)).status).toBe(404)
    expect(await h.db.select().from(changelogEntries).where(eq(changelogEntries.id, id))).toHaveLength(0)
  })

  test('a member session works with X-Workspace', async () => {
    const res = await ws.owner.post('/api/v1/changelog', { title: 'From the dashboard' }, { headers: { 'x-workspace': ws.slug } })
    expect(res.status).toBe(201)
    expect((await ws.owner.get(`/api/v1/changelog/${res.body.id}`, { headers: { 'x-workspace': ws.slug } })).status).toBe(200)
    await api.delete(`/api/v1/changelog/${res.body.id}`)
  })

  test('publishing completes the linked posts, raises status.changed and changelog.published, and mails each voter once', async () => {
    const draft = await api.post('/api/v1/changelog', { title: 'Dark mode and CSV', body: 'Both shipped.', post_ids: [ids.dark, ids.csv] })
    const published = await api.patch(`/api/v1/changelog/${draft.body.id}`, { published_at: new Date().toISOString() })
    expect(published.status).toBe(200)
    expect(published.body.published_at).not.toBeNull()
    ids.entry = draft.body.id

    const complete = await completeStatus()
    for (const id of [ids.dark!, ids.csv!]) expect((await h.db.select().from(posts).where(eq(posts.id, id)))[0]!.statusId).toBe(complete.id)
    const raised = await h.db.select().from(events).where(eq(events.workspaceId, ws.id))
    const changed = raised.filter((event) => event.type === 'status.changed').map((event) => (event.data as any).post.id)
    expect(changed).toEqual(expect.arrayContaining([ids.dark, ids.csv]))
    const announced = raised.filter((event) => event.type === 'changelog.published')
    expect(announced).toHaveLength(1)
    expect((announced[0]!.data as any).entry).toMatchObject({ id: ids.entry, title: 'Dark mode and CSV', post_ids: [ids.dark, ids.csv].sort() })

    const ada = await smtp.waitFor('ada@customer.example')
    const grace = await smtp.waitFor('grace@customer.example')
    expect(ada.decoded).toContain('Dark mode and CSV')
    const headers = (mail: { raw: string }) => mail.raw.split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' ')
    expect(headers(ada)).toMatch(/^List-Unsubscribe: <http:\/\/localhost:3000\/api\/v1\/public\/[a-z0-9-]+\/changelog\/unsubscribe\?token=[0-9a-f]+>/m)
    expect(headers(ada)).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m)
    expect(grace.decoded).toContain('/changelog/unsubscribe?token=')
    // The sent-record is written right after the SMTP server accepts the message.
    let rows = await h.db.select().from(changelogEmails).where(eq(changelogEmails.entryId, ids.entry!))
    for (let i = 0; i < 50 && rows.some((row) => row.status !== 'sent'); i++) {
      await Bun.sleep(50)
      rows = await h.db.select().from(changelogEmails).where(eq(changelogEmails.entryId, ids.entry!))
    }
    // Ada and Grace; not the unconfirmed anonymous voter.
    expect(rows).toHaveLength(2)
    expect(rows.every((row) => row.status === 'sent' && row.sentAt !== null)).toBe(true)
    expect(smtp.inbox.filter((mail) => mail.to.includes('anon@customer.example') && mail.decoded.includes('Dark mode and CSV'))).toHaveLength(0)

    // Publishing again (a later time) neither re-raises nor re-mails.
    expect((await api.patch(`/api/v1/changelog/${ids.entry}`, { published_at: new Date(Date.now() - 1000).toISOString(), title: 'Dark mode and CSV export' })).status).toBe(200)
    await Bun.sleep(300)
    expect(smtp.inbox.filter((mail) => mail.to.includes('ada@customer.example'))).toHaveLength(0)
    expect((await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'changelog.published'))))).toHaveLength(1)
  })

  test('the unsubscribe link confirms on GET, unsubscribes on POST and stops the next mail', async () => {
    const first = await api.post('/api/v1/changelog', { title: 'Round one', post_ids: [ids.csv], published_at: new Date().toISOString() })
    expect(first.status).toBe(201)
    const mail = await smtp.waitFor('grace@customer.example')
    await smtp.waitFor('ada@customer.example')
    const unfolded = mail.raw.split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' ')
    const link = /^List-Unsubscribe: <(http:\/\/localhost:3000[^>]+)>/m.exec(unfolded)![1]!
    const path = link.replace('http://localhost:3000', '')

    const confirm = await anon.get(path)
    expect(confirm.status).toBe(200)
    expect(confirm.headers.get('content-type')).toContain('text/html')
    expect(confirm.body).toContain('<form method="post">')
    // GET alone changes nothing (mail scanners follow links).
    const oneClick = await anon.call('POST', path, { raw: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(oneClick.status).toBe(200)
    expect(oneClick.body).toContain('You are unsubscribed')
    expect((await anon.get(path)).body).toContain('already')

    const second = await api.post('/api/v1/changelog', { title: 'Round two', post_ids: [ids.csv], published_at: new Date().toISOString() })
    expect(second.status).toBe(201)
    await smtp.waitFor('ada@customer.example')
    await Bun.sleep(300)
    expect(smtp.inbox.filter((m) => m.to.includes('grace@customer.example'))).toHaveLength(0)
    const graceRows = await h.db.select().from(changelogEmails).where(eq(changelogEmails.entryId, second.body.id))
    expect(graceRows).toHaveLength(1)
  })

  test('the public list shows published entries only, newest first, without private-board posts', async () => {
    const draft = await api.post('/api/v1/changelog', { title: 'Secret draft' })
    const withSecret = await api.post('/api/v1/changelog', { title: 'Private work', body: 'Shipped', post_ids: [ids.secret, ids.dark], published_at: new Date().toISOString() })
    expect(withSecret.status).toBe(201)
    const res = await anon.get(`/api/v1/public/${ws.slug}/changelog?per_page=2`)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toContain('public')
    const published = (await h.db.select().from(changelogEntries).where(eq(changelogEntries.workspaceId, ws.id))).filter((entry) => entry.publishedAt)
    expect(published.length).toBeGreaterThanOrEqual(3)
    expect(res.body).toMatchObject({ page: 1, per_page: 2, total: published.length, total_pages: Math.ceil(published.length / 2) })
    expect(res.body.items[0]).toEqual({ id: withSecret.body.id, title: 'Private work', body_html: '<p>Shipped</p>\n', published_at: withSecret.body.published_at, posts: [{ id: ids.dark, title: 'Dark mode' }] })
    const all = await anon.get(`/api/v1/public/${ws.slug}/changelog?per_page=100`)
    expect(all.body.items.some((entry: any) => entry.id === draft.body.id)).toBe(false)
    expect(JSON.stringify(all.body)).not.toContain('Acquisition plan')
    expect(JSON.stringify(all.body)).not.toContain('@customer.example')
    const again = await anon.get(`/api/v1/public/${ws.slug}/changelog?per_page=2`, { headers: { 'if-none-match': res.headers.get('etag')! } })
    expect(again.status).toBe(304)
  })

  test('the Atom feed lists published entries with links to the portal', async () => {
    const res = await anon.get(`/api/v1/public/${ws.slug}/changelog/feed.atom`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/atom+xml')
    const xml = res.body as string
    expect(xml).toStartWith('<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">')
    expect(xml).toContain(`<id>http://localhost:3000/portal/${ws.slug}/changelog</id>`)
    expect(xml).toMatch(/<updated>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z<\/updated>/)
    expect(xml).toContain(`<link rel="alternate" type="text/html" href="http://localhost:3000/portal/${ws.slug}/changelog#${ids.entry}"/>`)
    expect(xml).toContain('<content type="html">&#60;p&#62;Both shipped.&#60;/p&#62;\n</content>')
    expect(xml).not.toContain('Secret draft')
    const published = (await h.db.select().from(changelogEntries).where(eq(changelogEntries.workspaceId, ws.id))).filter((entry) => entry.publishedAt)
    expect((xml.match(/<entry>/g) ?? []).length).toBe(published.length)
  })
})

describe('happy', () => {
  test('the SDK lists, creates, gets, updates and deletes entries', async () => {
    const sdk = (key: string) => new Chorus({ apiKey: key, baseUrl: 'http://localhost:3000/api/v1', fetch: (input, init) => h.app.handle(new Request(input, init)) })
    const chorus = sdk(await ws.key())
    const created = await chorus.changelog.create({ title: 'Through the SDK', body: '# Hi' })
    expect(created).toMatchObject({ title: 'Through the SDK', body_html: '<h1>Hi</h1>\n', published_at: null })
    expect((await chorus.changelog.get(created.id)).id).toBe(created.id)
    expect((await chorus.changelog.update(created.id, { title: 'Renamed' })).title).toBe('Renamed')
    const drafts = []
    for await (const entry of chorus.changelog.list({ state: 'draft', per_page: 1 })) drafts.push(entry.id)
    expect(drafts).toContain(created.id)
    await expect(sdk(await ws.key(['changelog:read'])).changelog.delete(created.id)).rejects.toBeInstanceOf(PermissionError)
    await chorus.changelog.delete(created.id)
    await expect(chorus.changelog.get(created.id)).rejects.toBeInstanceOf(NotFoundError)
  })
})

describe('happy', () => {
  test("the owner's workspace export holds the changelog entries with their post ids", async () => {
    const res = await ws.owner.get(`/api/v1/workspaces/${ws.slug}/export`)
    expect(res.status).toBe(200)
    const entry = res.body.changelog_entries.find((row: any) => row.id === ids.entry)
    expect(entry).toMatchObject({ workspace_id: ws.id, title: 'Dark mode and CSV export', post_ids: [ids.dark, ids.csv].sort() })
    expect(res.body.changelog_entries.every((row: any) => row.workspace_id === ws.id)).toBe(true)
  })
})

describe('errors', () => {
  test('validation: empty title, too long, future published_at, unknown fields', async () => {
    for (const body of [{ title: '' }, { title: 'x'.repeat(201) }, { title: 'ok', body: 'x'.repeat(50_001) }, { title: 'ok', extra: 1 }, { title: '\u202e ' }, { title: 'ok', post_ids: ['a', 'a'] }]) {
      const res = await api.post('/api/v1/changelog', body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
    }
    const future = await api.post('/api/v1/changelog', { title: 'Later', published_at: new Date(Date.now() + 3_600_000).toISOString() })
    expect(future.status).toBe(422)
    expect(future.body.detail[0].loc).toEqual(['body', 'published_at'])
    expect((await api.patch(`/api/v1/changelog/${ids.entry}`, {})).status).toBe(422)
  })

  test('published_at: null unpublishes (a draft again); publishing again e-mails no voter twice', async () => {
    const mailed = async () => (await h.db.select().from(changelogEmails).where(eq(changelogEmails.entryId, ids.entry!))).length
    const before = await mailed()
    expect(before).toBeGreaterThan(0)
    const res = await api.patch(`/api/v1/changelog/${ids.entry}`, { published_at: null })
    expect(res.status).toBe(200)
    expect(res.body.published_at).toBeNull()
    expect((await api.get(`/api/v1/changelog/${ids.entry}`)).body.published_at).toBeNull()
    const [row] = await h.db.select().from(changelogEntries).where(eq(changelogEntries.id, ids.entry!))
    expect(row!.publishedAt).toBeNull()
    expect((await api.patch(`/api/v1/changelog/${ids.entry}`, { published_at: new Date().toISOString() })).body.published_at).not.toBeNull()
    expect(await mailed()).toBe(before)
  })

  test('an unknown entry is 404; a foreign or unknown post id is 422 and writes nothing', async () => {
    expect((await api.get('/api/v1/changelog/chg_missing')).status).toBe(404)
    expect((await api.patch('/api/v1/changelog/chg_missing', { title: 'x' })).status).toBe(404)
    expect((await api.delete('/api/v1/changelog/chg_missing')).status).toBe(404)
    const before = (await h.db.select().from(changelogEntries).where(eq(changelogEntries.workspaceId, ws.id))).length
    const res = await api.post('/api/v1/changelog', { title: 'Mixed', post_ids: [ids.dark, ids.foreign], published_at: new Date().toISOString() })
    expect(res.status).toBe(422)
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'post_ids'] })
    expect(res.body.detail[0].msg).toContain(ids.foreign)
    expect((await h.db.select().from(changelogEntries).where(eq(changelogEntries.workspaceId, ws.id))).length).toBe(before)
    const draft = await api.post('/api/v1/changelog', { title: 'Keeps its posts', post_ids: [ids.dark] })
    expect((await api.patch(`/api/v1/changelog/${draft.body.id}`, { post_ids: [ids.foreign] })).status).toBe(422)
    expect((await h.db.select().from(changelogPosts).where(eq(changelogPosts.entryId, draft.body.id))).map((row) => row.postId)).toEqual([ids.dark!])
  })

  test('an unknown workspace or unsubscribe token is 404', async () => {
    expect((await anon.get('/api/v1/public/no-such-ws/changelog')).status).toBe(404)
    expect((await anon.get('/api/v1/public/no-such-ws/changelog/feed.atom')).status).toBe(404)
    const bad = await anon.get(`/api/v1/public/${ws.slug}/changelog/unsubscribe?token=nope`)
    expect(bad.status).toBe(404)
    expect(bad.headers.get('content-type')).toContain('text/html')
    expect((await anon.call('POST', `/api/v1/public/${ws.slug}/changelog/unsubscribe?token=nope`, { raw: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(404)
    expect((await anon.get(`/api/v1/public/${ws.slug}/changelog?per_page=0`)).status).toBe(422)
  })
})

describe('security', () => {
  test('a read-only key cannot write; no credential is 401', async () => {
    const res = await reader.post('/api/v1/changelog', { title: 'Nope' })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'changelog:write' })
    expect((await reader.patch(`/api/v1/changelog/${ids.entry}`, { title: 'Nope' })).status).toBe(403)
    expect((await reader.delete(`/api/v1/changelog/${ids.entry}`)).status).toBe(403)
    const postsOnly = h.client({ authorization: `Bearer ${await ws.key(['posts:read'])}` })
    expect((await postsOnly.get('/api/v1/changelog')).body.required_scope).toBe('changelog:read')
    expect((await anon.get('/api/v1/changelog')).status).toBe(401)
  })

  test("another workspace's key gets 404 and changes nothing", async () => {
    expect((await otherApi.get(`/api/v1/changelog/${ids.entry}`)).status).toBe(404)
    expect((await otherApi.patch(`/api/v1/changelog/${ids.entry}`, { title: 'Hijacked' })).status).toBe(404)
    expect((await otherApi.delete(`/api/v1/changelog/${ids.entry}`)).status).toBe(404)
    expect((await api.get(`/api/v1/changelog/${ids.entry}`)).body.title).toBe('Dark mode and CSV export')
    expect((await otherApi.get('/api/v1/changelog')).body.items.some((entry: any) => entry.id === ids.entry)).toBe(false)
  })

  test('Markdown is rendered without raw HTML or unsafe links', async () => {
    const vectors = [
      '<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '[a](javascript:alert(1))', '[b](JaVaScRiPt:alert(1))',
      '[c](&#106;avascript:alert(1))', '[d](vbscript:msgbox(1))', '[e](data:text/html;base64,PHNjcmlwdD4=)', '![f](data:image/svg+xml;base64,PHN2Zz4=)',
      '<a href="javascript:alert(1)">g</a>', '[h](java\tscript:alert(1))', '[h2](java&#x09;script:alert(1))', '<javascript:alert(1)>', '[i]( javascript:alert(1))',
    ]
    const res = await api.post('/api/v1/changelog', { title: 'XSS', body: vectors.join('\n\n') + '\n\n[safe](https://example.com/x)' })
    expect(res.status).toBe(201)
    const html: string = res.body.body_html
    // Raw HTML survives only as escaped text; no element or attribute of it is live.
    expect(html).not.toMatch(/<(?:script|img|iframe)|<a [^>]*href="(?:javascript|vbscript|data)|src="data:/i)
    expect(html).not.toMatch(/<a [^>]*href="[^"]*script:/i)
    expect(html).toContain('&lt;script&gt;')
    expect(html).toContain('<a href="https://example.com/x" rel="nofollow noopener noreferrer">safe</a>')
  })

  test("an unsubscribe token only works in its own workspace's URL", async () => {
    const [row] = await h.db.select().from(changelogEmails).where(eq(changelogEmails.workspaceId, ws.id)).limit(1)
    const { changelogSubscriptions } = await import('../../server/db/schema/index.ts')
    const [sub] = await h.db.select().from(changelogSubscriptions).where(eq(changelogSubscriptions.endUserId, row!.endUserId))
    const res = await anon.call('POST', `/api/v1/public/${other.slug}/changelog/unsubscribe?token=${sub!.token}`, { raw: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(res.status).toBe(404)
  })
})
