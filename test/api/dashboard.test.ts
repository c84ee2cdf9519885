import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { changelogEntries, comments, events, postReads, posts, savedViews } from '../../server/db/schema/index.ts'
import { addMember, boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { signIn } from '../helpers/session.ts'

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
let member: TestClient
let memberId: string
let foreignPost: string
const ids: Record<string, string> = {}
const XSS = '<script>alert(1)</script><img src=x onerror=alert(2)>'

beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, other.id, 'ideas')
  await labelFixture(h, ws.id, 'ui')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  const added = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
  member = added.client
  memberId = added.userId
  for (const [name, title] of [['alpha', 'Dark mode'], ['beta', 'Dark theme please'], ['gamma', XSS], ['delta', 'Export to CSV']] as const) {
    ids[name] = (await api.post('/api/v1/boards/ideas/posts', { title, body: `Body of ${name} ${XSS}`, email: `${name}@customer.example` })).body.id
  }
  foreignPost = (await h.client({ authorization: `Bearer ${await other.key()}` }).post('/api/v1/boards/ideas/posts', { title: 'Foreign' })).body.id
}, 180_000)
afterAll(() => h.close())

const page = (client: TestClient, path: string) => client.get(path)
/** A form post as a browser sends it: urlencoded, with the page's CSRF token unless told otherwise. */
async function submit(client: TestClient, formPage: string, action: string, fields: Record<string, string | string[]>, csrf?: string) {
  const token = csrf ?? /name="csrf" value="([0-9a-f]+)"/.exec((await client.get(formPage)).body)?.[1] ?? ''
  const form = new URLSearchParams({ csrf: token })
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) form.append(name, one)
  return client.call('POST', action, { raw: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
}
const inbox = () => `/dashboard/${ws.slug}`
const postUrl = (id: string) => `/dashboard/${ws.slug}/posts/${id}`

describe('dashboard pages', () => {
  test('signed out: every page sends the browser to sign in and back', async () => {
    for (const path of ['/dashboard', inbox(), postUrl(ids.alpha!), `${inbox()}/changelog`]) {
      const res = await h.client().get(path)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/signin?${new URLSearchParams({ return_to: path })}`)
    }
  })

  test('the picker lists the workspaces and creates one (form errors keep what was typed)', async () => {
    const res = await page(ws.owner, '/dashboard')
    expect(res.status).toBe(200)
    expect(res.body).toContain(`href="/dashboard/${ws.slug}"`)
    const bad = await submit(ws.owner, '/dashboard', '/dashboard/workspaces', { name: 'My <b>team</b>', slug: 'Bad Slug' })
    expect(bad.status).toBe(422)
    expect(bad.body).toContain('value="My &lt;b&gt;team&lt;/b&gt;"')
    expect(bad.body).toContain('value="Bad Slug"')
    const fresh = h.client()
    await signIn(h, fresh, `newcomer-${ws.slug}@example.com`)
    const slug = `team-${ws.slug}`.slice(0, 48)
    const made = await submit(fresh, '/dashboard', '/dashboard/workspaces', { name: 'New team', slug })
    expect(made.status).toBe(303)
    expect(made.headers.get('location')).toStartWith(`/dashboard/${slug}?`)
    expect((await fresh.get(`/dashboard/${slug}`)).body).toContain('<h1>Inbox</h1>')
  })

  test('the inbox: heading, Search and Status controls, rows linking by title, unread markers, headers', async () => {
    const res = await page(member, inbox())
    expect(res.status).toBe(200)
    expect(res.body).toContain('<h1>Inbox</h1>')
    expect(res.body).toContain('<label for="q">Search</label>')
    expect(res.body).toContain('<label for="f-status">Status</label>')
    expect(res.body).toContain(`<a href="${postUrl(ids.alpha!)}">Dark mode</a>`)
    expect(res.body).toContain('class="unread"')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).toContain("script-src 'self'")
    // XSS: the payload title is text, never markup.
    expect(res.body).not.toContain('<script>alert(1)</script>')
    expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    const searched = await page(member, `${inbox()}?q=export`)
    expect(searched.body).toContain('Export to CSV')
    expect(searched.body).not.toContain('>Dark mode<')
  })

  test('the keyboard script: referenced by the pages, served from our origin, within the 40 KiB budget', async () => {
    const body = (await page(member, inbox())).body
    const src = /<script src="(\/dashboard\/_\/dashboard\.js\?v=[0-9a-f]+)" defer><\/script>/.exec(body)?.[1]
    expect(src).toBeDefined()
    expect(body).not.toMatch(/<script>|onclick=|style=/)
    const script = await h.client().get(src!, { headers: { 'accept-encoding': 'gzip' } })
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('javascript')
    const { dashboardScript, SCRIPT_BUDGET_BYTES } = await import('../../server/modules/dashboard/script.ts')
    const built = await dashboardScript()
    expect(built.gzip.length).toBeLessThanOrEqual(SCRIPT_BUDGET_BYTES)
    expect(built.body).toContain('keydown')
  })

  test('opening a post marks it read and shows its parts; foreign and unknown ids are 404 pages', async () => {
    const res = await page(member, postUrl(ids.gamma!))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.body).not.toContain('<img src=x')
    for (const name of ['>Merge</button>', '>Assign</button>', '>Reply</button>', '>Add internal note</button>', '<label for="p-status">Status</label>']) expect(res.body).toContain(name)
    expect(await h.db.select().from(postReads).where(and(eq(postReads.postId, ids.gamma!), eq(postReads.userId, memberId)))).toHaveLength(1)
    for (const path of [postUrl(foreignPost), postUrl('post_nope'), `/dashboard/${other.slug}`, `/dashboard/${other.slug}/posts/${foreignPost}`]) {
      const missing = await page(member, path)
      expect(missing.status).toBe(404)
      expect(missing.headers.get('content-type')).toContain('text/html')
      expect(missing.body).toContain('<h1>Not found</h1>')
    }
  })

  test('status change with a message, reply and internal note go through the services', async () => {
    const changed = await submit(member, postUrl(ids.alpha!), `${postUrl(ids.alpha!)}/status`, { status: 'Planned', status_message: 'On the roadmap' })
    expect(changed.status).toBe(303)
    expect((await api.get(`/api/v1/posts/${ids.alpha}`)).body.status).toBe('Planned')
    const [event] = await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'status.changed')))
    expect((event!.data as any).message).toBe('On the roadmap')
    await submit(member, postUrl(ids.alpha!), `${postUrl(ids.alpha!)}/reply`, { body: 'Thanks, we hear you' })
    await submit(member, postUrl(ids.alpha!), `${postUrl(ids.alpha!)}/note`, { body: 'Ask design first' })
    const rows = await h.db.select().from(comments).where(eq(comments.postId, ids.alpha!))
    expect(rows.map((row) => [row.body, row.internal]).sort()).toEqual([['Ask design first', true], ['Thanks, we hear you', false]])
    const shown = await page(member, postUrl(ids.alpha!))
    expect(shown.body).toContain('Internal note</span>')
    expect(shown.body).toContain('Public reply</span>')
  })

  test('a stale edit is reported and keeps what was typed; an empty title re-renders with the field marked', async () => {
    const form = (await page(member, postUrl(ids.delta!))).body
    const stamp = /name="updated_at" value="([^"]+)"/.exec(form)![1]!
    await api.patch(`/api/v1/posts/${ids.delta}`, { title: 'Export to CSV and Excel' })
    const stale = await submit(member, postUrl(ids.delta!), `${postUrl(ids.delta!)}/edit`, { title: 'My edit', body: 'My text', updated_at: stamp })
    expect(stale.status).toBe(409)
    expect(stale.body).toContain('Someone else changed this post')
    expect(stale.body).toContain('value="My edit"')
    expect((await api.get(`/api/v1/posts/${ids.delta}`)).body.title).toBe('Export to CSV and Excel')
    const fresh = /name="updated_at" value="([^"]+)"/.exec((await page(member, postUrl(ids.delta!))).body)![1]!
    const empty = await submit(member, postUrl(ids.delta!), `${postUrl(ids.delta!)}/edit`, { title: '   ', body: 'Kept body', updated_at: fresh })
    expect(empty.status).toBe(422)
    expect(empty.body).toContain('aria-invalid="true"')
    expect(empty.body).toContain('Kept body')
  })

  test('merge by search, bulk label, delete with confirmation', async () => {
    const merged = await submit(member, postUrl(ids.beta!), `${postUrl(ids.beta!)}/merge`, { into: 'mode' })
    expect(merged.status).toBe(303)
    expect((await h.db.select().from(posts).where(eq(posts.id, ids.beta!)))[0]!.mergedIntoId).toBe(ids.alpha!)
    const bulk = await submit(member, inbox(), `${inbox()}/bulk`, { post_ids: [ids.alpha!, ids.gamma!, ids.delta!], add_label: 'ui' })
    expect(bulk.status).toBe(303)
    for (const id of [ids.alpha!, ids.gamma!, ids.delta!]) expect((await api.get(`/api/v1/posts/${id}`)).body.labels).toEqual(['ui'])
    const unconfirmed = await submit(member, postUrl(ids.gamma!), `${postUrl(ids.gamma!)}/delete`, {})
    expect(unconfirmed.status).toBe(422)
    expect(await h.db.select().from(posts).where(eq(posts.id, ids.gamma!))).toHaveLength(1)
    const deleted = await submit(member, postUrl(ids.gamma!), `${postUrl(ids.gamma!)}/delete`, { confirm: 'yes' })
    expect(deleted.status).toBe(303)
    expect(await h.db.select().from(posts).where(eq(posts.id, ids.gamma!))).toHaveLength(0)
  })

  test('changelog: heading, draft, Publish', async () => {
    const res = await page(member, `${inbox()}/changelog`)
    expect(res.body).toContain('<h1>Changelog</h1>')
    expect((await submit(member, `${inbox()}/changelog`, `${inbox()}/changelog`, { title: '', body: 'x' })).status).toBe(422)
    const drafted = await submit(member, `${inbox()}/changelog`, `${inbox()}/changelog`, { title: 'Dark mode is here', body: '**Finally**', post_ids: ids.alpha! })
    expect(drafted.status).toBe(303)
    const [entry] = await h.db.select().from(changelogEntries).where(eq(changelogEntries.workspaceId, ws.id))
    expect((await page(member, `${inbox()}/changelog`)).body).toContain('>Publish</button>')
    expect((await submit(member, `${inbox()}/changelog`, `${inbox()}/changelog/${entry!.id}/publish`, {})).status).toBe(303)
    expect((await h.db.select().from(changelogEntries).where(eq(changelogEntries.id, entry!.id)))[0]!.publishedAt).not.toBeNull()
  })

  test('changelog entry page: Markdown preview (escaped, nothing saved), unpublish, a foreign entry is 404', async () => {
    const [entry] = await h.db.select().from(changelogEntries).where(eq(changelogEntries.workspaceId, ws.id))
    const entryUrl = `${inbox()}/changelog/${entry!.id}`
    const preview = await submit(member, entryUrl, entryUrl, { title: 'Changed?', body: `**bold** ${XSS}`, post_ids: '', intent: 'preview' })
    expect(preview.status).toBe(200)
    expect(preview.body).toContain('<strong>bold</strong>')
    expect(preview.body).not.toContain('<script>alert(1)')
    expect(preview.body).toContain('value="Changed?"')
    expect((await h.db.select().from(changelogEntries).where(eq(changelogEntries.id, entry!.id)))[0]!.title).toBe('Dark mode is here')
    expect((await submit(member, entryUrl, `${entryUrl}/unpublish`, {})).status).toBe(303)
    expect((await h.db.select().from(changelogEntries).where(eq(changelogEntries.id, entry!.id)))[0]!.publishedAt).toBeNull()
    expect((await page(member, entryUrl)).body).toContain('>Publish</button>')
    expect((await page(other.owner, `/dashboard/${other.slug}/changelog/${entry!.id}`)).status).toBe(404)
  })

  test('saved views: saved from the filters, listed as links, shared ones seen by others, deleted only by who may', async () => {
    const saved = await submit(member, inbox(), `${inbox()}/views`, { name: 'Dark ones', q: 'dark', shared: 'yes' })
    expect(saved.status).toBe(303)
    expect(saved.headers.get('location')).toContain('q=dark')
    const [view] = await h.db.select().from(savedViews).where(eq(savedViews.workspaceId, ws.id))
    expect(view).toMatchObject({ name: 'Dark ones', shared: true, filters: { q: 'dark' } })
    expect((await page(ws.owner, inbox())).body).toContain('>Dark ones</a>')
    expect((await submit(member, inbox(), `${inbox()}/views`, { name: '' })).headers.get('location')).toContain('Give+the+view+a+name')
    expect((await submit(other.owner, '/dashboard', `${inbox()}/views/${view!.id}/delete`, {})).status).toBe(404)
    expect((await submit(member, inbox(), `${inbox()}/views/${view!.id}/delete`, {})).status).toBe(303)
    expect(await h.db.select().from(savedViews).where(eq(savedViews.id, view!.id))).toEqual([])
  })

  test('security: a wrong CSRF token, a non-member, another workspace post id in a form', async () => {
    const forged = await submit(member, postUrl(ids.delta!), `${postUrl(ids.delta!)}/status`, { status: 'Closed' }, 'f'.repeat(64))
    expect(forged.status).toBe(403)
    expect((await api.get(`/api/v1/posts/${ids.delta}`)).body.status).not.toBe('Closed')
    const outsider = await submit(other.owner, '/dashboard', `${postUrl(ids.delta!)}/status`, { status: 'Closed' })
    expect(outsider.status).toBe(404)
    const foreign = await submit(member, inbox(), `/dashboard/${ws.slug}/posts/${foreignPost}/status`, { status: 'Closed' })
    expect(foreign.status).toBe(404)
    expect((await h.client({ authorization: `Bearer ${await other.key()}` }).get(`/api/v1/posts/${foreignPost}`)).body.status).toBe('Open')
  })
})

describe('the pages share the API’s membership cache', () => {
  test('a second page load sends no membership statement; a new role and a removal reach the pages as soon as the change is heard', async () => {
    // Its own app, listening to the change feed as a server process does (the background worker's connection on PostgreSQL).
    const live = await startHarness()
    try {
      if (live.database.driver === 'postgres') await live.database.listenForChanges(live.ctx.changes.changed, live.ctx.changes.setLive)
      const team = await workspaceFixture(live)
      await boardFixture(live, team.id, 'ideas')
      const { client: mate, userId } = await addMember(live, team, `mate-${team.slug}@example.com`, 'member')
      const home = `/dashboard/${team.slug}`
      const membershipStatements = () => live.queries.filter((query) => /from "workspaces" left join "members"/.test(query)).length
      expect((await mate.get(home)).status).toBe(200)
      live.queries.length = 0
      const again = await mate.get(home)
      expect(again.status).toBe(200)
      expect(again.body).toContain('<h1>Inbox</h1>')
      expect(membershipStatements()).toBe(0)
      // On PostgreSQL the change's notification travels on the listening connection: wait for it, as every process does.
      const soon = async (path: string, status: number) => {
        let res = await mate.get(path)
        for (let i = 0; i < 50 && res.status !== status; i++) res = (await Bun.sleep(20), await mate.get(path))
        return res.status
      }
      const webhooks = `${home}/settings/webhooks`
      expect((await mate.get(webhooks)).status).toBe(403)
      expect((await team.owner.patch(`/api/v1/workspaces/${team.slug}/members/${userId}`, { role: 'admin' })).status).toBe(200)
      expect(await soon(webhooks, 200)).toBe(200)
      expect((await team.owner.delete(`/api/v1/workspaces/${team.slug}/members/${userId}`)).status).toBe(204)
      expect(await soon(home, 404)).toBe(404)
      expect((await mate.get(webhooks)).status).toBe(404)
    } finally {
      await live.close()
    }
  })
})
