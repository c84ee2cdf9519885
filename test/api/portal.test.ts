import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { gzipSync } from 'node:zlib'
import { comments, endUsers, posts, votes } from '../../server/db/schema/index.ts'
import { ASSET_BUDGET_BYTES, ASSETS } from '../../server/modules/portal/assets.ts'
import { configureHs256, customerToken, nextIp } from '../helpers/end-users.ts'
import { boardFixture, setSubscription, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { freshRateWindow, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { insertPost } from '../helpers/posts.ts'

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
let secret: string
const ids: Record<string, string> = {}
const XSS = `"><script>alert(1)</script><img src=x onerror=alert(2)>`

const portal = () => `/portal/${ws.slug}`
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const form = (values: Record<string, string>) => new URLSearchParams(values).toString()

/** A browser without a session: its own address (per-IP limits) and a same-origin form post. */
function visitor() {
  const ip = nextIp()
  const client = h.client({ 'x-forwarded-for': ip })
  return {
    client,
    get: (path: string, headers: Record<string, string> = {}) => client.get(path, { headers }),
    post: (path: string, values: Record<string, string>, headers: Record<string, string> = {}) =>
      client.call('POST', path, { raw: form(values), headers: { ...FORM, 'sec-fetch-site': 'same-origin', origin: 'http://localhost:3000', ...headers } }),
  }
}

/** Signs in through `?sso_token=` and returns the visitor with the session cookie in its jar. */
async function identified(claims: Record<string, unknown> = {}) {
  const who = visitor()
  const token = await customerToken(secret, { claims })
  const res = await who.get(`${portal()}/boards/ideas?sso_token=${token}&sort=new`)
  expect(res.status).toBe(303)
  return { ...who, res }
}

const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1]

beforeAll(async () => {
  h = await startHarness({ TRUST_PROXY: 'true' })
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  const bugs = await boardFixture(h, ws.id, 'bugs')
  await boardFixture(h, ws.id, 'secret', true)
  await boardFixture(h, other.id, 'ideas')
  secret = await configureHs256(ws.owner, ws.slug)
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  const post = async (name: string, board: string, body: Record<string, unknown>) => {
    const res = await api.post(`/api/v1/boards/${board}/posts`, body)
    if (res.status !== 201) throw new Error(`post ${name}: ${res.status} ${JSON.stringify(res.body)}`)
    ids[name] = res.body.id
  }
  await post('dark', 'ideas', { title: 'Dark mode', body: 'Night shifts need it', status: 'Planned', email: 'ada@customer.example' })
  await post('csv', 'ideas', { title: 'CSV export', status: 'In progress' })
  await post('keys', 'ideas', { title: 'Keyboard shortcuts', email: 'grace@customer.example' })
  await post('crash', 'bugs', { title: 'Crash on save', status: 'Complete' })
  await post('secret', 'secret', { title: 'Acquisition plan', status: 'Planned' })
  await post('xss', 'ideas', { title: `Title ${XSS}`, body: `Body ${XSS}`, email: 'mallory@customer.example' })
  await post('dupe', 'ideas', { title: 'Night theme' })
  for (const email of ['v1@customer.example', 'v2@customer.example', 'v3@customer.example']) await api.post(`/api/v1/posts/${ids.dark}/votes`, { email })
  await api.post(`/api/v1/posts/${ids.keys}/votes`, { email: 'v1@customer.example' })
  await api.post(`/api/v1/posts/${ids.dupe}/merge`, { into_post_id: ids.dark })
  await api.patch(`/api/v1/posts/${ids.dark}`, { status: 'In progress' })
  await api.post(`/api/v1/posts/${ids.dark}/comments`, { body: 'Me too', email: 'carol@customer.example' })
  await api.post(`/api/v1/posts/${ids.dark}/comments`, { body: 'INTERNAL-NOTE: big customer', internal: true })
  await api.post(`/api/v1/posts/${ids.xss}/comments`, { body: `Comment ${XSS}`, email: 'mallory@customer.example' })
  // Enough posts on one board for two pages.
  for (let i = 0; i < 22; i++) await insertPost(h, ws.id, bugs.id, { title: `Bug number ${i}` })
}, 90_000)
afterAll(() => h.close())

describe('happy', () => {
  test('home: the workspace name, its public boards with counts, top posts by votes', async () => {
    const res = await visitor().get(portal())
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const page = res.body as string
    expect(page).toContain(`<title>Workspace ${ws.slug} feedback</title>`)
    expect(page).toContain(`<h1>Workspace ${ws.slug} feedback</h1>`)
    expect(page).toContain(`href="/portal/${ws.slug}/boards/ideas">Ideas</a>`)
    expect(page).toContain(`href="/portal/${ws.slug}/boards/bugs">Bugs</a>`)
    expect(page).toContain('23 posts')
    // Top posts: the ten most voted, the most voted first.
    const top = page.slice(page.indexOf('id="top-heading"'))
    expect((top.match(/class="card post"/g) ?? []).length).toBe(10)
    expect(top.indexOf('Dark mode')).toBeLessThan(top.indexOf('Keyboard shortcuts'))
    expect(top.indexOf('Keyboard shortcuts')).toBeGreaterThan(0)
    expect(page).toMatch(/<main id="main"/)
    expect(page).toMatch(/<nav aria-label="Portal">/)
  })

  test('board: posts with votes, status filter, sort, full-text search and pages', async () => {
    const who = visitor()
    const page = (await who.get(`${portal()}/boards/ideas`)).body as string
    expect(page).toContain('<h1>Ideas</h1>')
    expect(page).toContain('<span class="n">3</span><span class="sr"> votes. Vote for Dark mode</span>')
    expect(page).toContain('<h2 id="posts-heading">4 posts</h2>')
    expect(page).not.toContain('Night theme')

    const planned = (await who.get(`${portal()}/boards/ideas?status=In%20progress`)).body as string
    expect(planned).toContain('Dark mode')
    expect(planned).toContain('CSV export')
    expect(planned).not.toContain('Keyboard shortcuts')
    expect(planned).toContain('<option value="In progress" selected>')

    const newest = (await who.get(`${portal()}/boards/ideas?sort=new`)).body as string
    expect(newest.indexOf('Keyboard shortcuts')).toBeLessThan(newest.indexOf('Dark mode'))

    const fresh = (await who.get(`/portal/${other.slug}/boards/ideas`)).body as string
    expect(fresh).toContain('<p class="empty card">No ideas yet: be the first. <a href="#new-post-heading">Suggest an idea</a>.</p>')
    expect(fresh).toContain('<h2 id="new-post-heading">Suggest an idea</h2>')
    const nothing = (await who.get(`${portal()}/boards/ideas?q=zebra%20crossing`)).body as string
    expect(nothing).toContain('<p class="empty card">No posts match these filters. Try other words, or <a href="#new-post-heading">suggest it</a>.</p>')

    const search = (await who.get(`${portal()}/boards/ideas?q=keyboard`)).body as string
    expect(search).toContain('1 post')
    expect(search).toContain('Keyboard shortcuts')
    expect(search).not.toContain('CSV export')

    const first = (await who.get(`${portal()}/boards/bugs?sort=new`)).body as string
    expect(first).toContain('Page 1 of 2')
    expect(first).toContain(`href="/portal/${ws.slug}/boards/bugs?sort=new&amp;page=2" rel="next"`)
    const second = await who.get(`${portal()}/boards/bugs?sort=new&page=2`)
    expect(second.body).toContain('Page 2 of 2')
    expect(second.body).toContain(`<link rel="canonical" href="http://localhost:3000/portal/${ws.slug}/boards/bugs?page=2">`)
    expect((second.body.match(/class="card post"/g) ?? []).length).toBe(3)
  })

  test('post: public comments, status history, voter count; a merged post redirects to its target', async () => {
    const res = await visitor().get(`${portal()}/posts/${ids.dark}`)
    expect(res.status).toBe(200)
    const page = res.body as string
    expect(page).toContain('<h1>Dark mode</h1>')
    expect(page).toContain('<div class="text">Night shifts need it</div>')
    expect(page).toContain('<strong>3 people</strong> voted for this.')
    expect(page).toContain('Me too')
    expect(page).toMatch(/<ol class="history"><li><span class="badge k-planned">Planned<\/span>.*<li><span class="badge k-in_progress">In progress<\/span>/)
    // Each change with its time, not only its day: two changes of one day stay apart.
    expect(page).toMatch(/<span class="badge k-in_progress">In progress<\/span> <time datetime="[^"]+">[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{2}:\d{2} UTC<\/time>/)
    expect(page).toContain(`<meta property="og:type" content="article">`)
    expect(page).toContain(`<link rel="canonical" href="http://localhost:3000/portal/${ws.slug}/posts/${ids.dark}">`)
    expect(page).toContain('<meta name="description" content="Night shifts need it">')

    const merged = await visitor().get(`${portal()}/posts/${ids.dupe}`)
    expect(merged.status).toBe(301)
    expect(merged.headers.get('location')).toBe(`${portal()}/posts/${ids.dark}`)
  })

  test('roadmap: three columns by status kind, a card per post, an empty column says so', async () => {
    const page = (await visitor().get(`${portal()}/roadmap`)).body as string
    const column = (kind: string) => page.slice(page.indexOf(`id="col-${kind}"`), page.indexOf('</section>', page.indexOf(`id="col-${kind}"`)))
    expect(column('planned')).toContain('Nothing planned yet.')
    expect(column('in_progress')).toMatch(new RegExp(`<li class="card rm-card"><h3><a href="/portal/${ws.slug}/posts/${ids.dark}">Dark mode</a></h3>\\s*<p class="muted meta"><span class="badge k-in_progress">In progress</span> <span><span aria-hidden="true">▲ </span>3 votes</span> <span>1 comment</span></p></li>`))
    expect(column('in_progress')).toContain('Dark mode')
    expect(column('in_progress')).toContain('CSV export')
    expect(column('complete')).toContain('Crash on save')
  })

  test('sitemap.xml lists the public pages; robots.txt points at it', async () => {
    const sitemap = await visitor().get(`${portal()}/sitemap.xml`)
    expect(sitemap.status).toBe(200)
    expect(sitemap.headers.get('content-type')).toBe('application/xml; charset=utf-8')
    const body = sitemap.body as string
    expect(body).toContain(`<loc>http://localhost:3000/portal/${ws.slug}</loc>`)
    expect(body).toContain(`<loc>http://localhost:3000/portal/${ws.slug}/boards/ideas</loc>`)
    expect(body).toContain(`<loc>http://localhost:3000/portal/${ws.slug}/posts/${ids.dark}</loc>`)
    expect(body).not.toContain(ids.dupe)
    const robots = await visitor().get(`${portal()}/robots.txt`)
    expect(robots.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(robots.body).toContain(`Sitemap: http://localhost:3000/portal/${ws.slug}/sitemap.xml`)
    expect(robots.body).toContain('User-agent: *')
  })

  test('an anonymous visitor posts, votes and comments through plain forms (Post/Redirect/Get)', async () => {
    const who = visitor()
    const created = await who.post(`${portal()}/boards/ideas/posts`, { title: 'Offline mode', body: 'On planes', email: 'Pat@Customer.example' })
    expect(created.status).toBe(303)
    const location = created.headers.get('location')!
    // The address is unconfirmed: the page says so, and the visitor keeps a session for it (like the widget).
    expect(location).toMatch(new RegExp(`^/portal/${ws.slug}/posts/post_[0-9a-z]+\\?done=posted&confirm=email$`))
    expect(created.headers.get('set-cookie')).toMatch(/^chorus_portal=[^;]+; Path=\/portal\//)
    const postId = /posts\/(post_[0-9a-z]+)/.exec(location)![1]!
    const [row] = await h.db.select().from(posts).where(eq(posts.id, postId))
    expect(row).toMatchObject({ title: 'Offline mode', body: 'On planes', workspaceId: ws.id })
    const [author] = await h.db.select().from(endUsers).where(eq(endUsers.id, row!.authorEndUserId!))
    expect(author!.email).toBe('pat@customer.example')
    const landing = (await who.get(location)).body as string
    expect(landing).toContain('Thank you! Your idea is posted.')
    expect(landing).toContain('click its link to confirm your address')
    expect(landing).not.toContain('pat@customer.example')

    // The next forms are the session's: they carry its form token, as the rendered page does.
    const csrf = csrfOf(landing)!
    expect(csrf).toBeTruthy()
    const voted = await who.post(`${portal()}/posts/${postId}/vote`, { csrf, return_to: `${portal()}/boards/ideas?sort=new` })
    expect(voted.status).toBe(303)
    expect(voted.headers.get('location')).toBe(`${portal()}/boards/ideas?sort=new&done=voted`)
    expect((await h.db.select().from(votes).where(eq(votes.postId, postId))).map((vote) => vote.endUserId)).toEqual([author!.id])

    const commented = await who.post(`${portal()}/posts/${postId}/comments`, { csrf, body: 'Also on trains' })
    expect(commented.status).toBe(303)
    expect(commented.headers.get('location')).toBe(`${portal()}/posts/${postId}?done=commented#comments`)
    const [comment] = await h.db.select().from(comments).where(eq(comments.postId, postId))
    expect(comment).toMatchObject({ body: 'Also on trains', internal: false, authorEndUserId: author!.id })
  })

  test('an identified visitor via ?sso_token=: cookie, clean URL, private page, votes with the session token', async () => {
    const who = await identified({ sub: 'cust-7', name: 'Grace Hopper', email: 'grace.h@customer.example' })
    expect(who.res.headers.get('location')).toBe(`${portal()}/boards/ideas?sort=new`)
    const cookie = who.res.headers.get('set-cookie')!
    expect(cookie).toMatch(new RegExp(`^chorus_portal=[\\w-]+\\.[\\w-]+\\.[\\w-]+; Path=/portal/${ws.slug}; HttpOnly; SameSite=Lax; Max-Age=86400`))
    expect(cookie).not.toContain('Secure')
    const page = await who.get(`${portal()}/boards/ideas?sort=new`)
    expect(page.status).toBe(200)
    expect(page.headers.get('cache-control')).toBe('private, no-store')
    expect(page.body).toContain('Signed in as Grace Hopper')
    expect(page.body).not.toContain('grace.h@customer.example')
    expect(page.body).toContain('aria-pressed="false" data-title="Dark mode"><span aria-hidden="true">▲</span><span class="n">3</span>')
    const csrf = csrfOf(page.body)!

    const voted = await who.post(`${portal()}/posts/${ids.dark}/vote`, { csrf, return_to: `${portal()}/boards/ideas?sort=new` })
    expect(voted.status).toBe(303)
    const [endUser] = await h.db.select().from(endUsers).where(and(eq(endUsers.workspaceId, ws.id), eq(endUsers.externalId, 'cust-7')))
    expect((await h.db.select().from(votes).where(and(eq(votes.postId, ids.dark!), eq(votes.endUserId, endUser!.id)))).length).toBe(1)
    expect((await who.get(`${portal()}/boards/ideas?sort=new`)).body).toContain('aria-pressed="true" data-title="Dark mode"><span aria-hidden="true">▲</span><span class="n">4</span>')

    // The script's request: the same form, answered as JSON.
    const toggled = await who.post(`${portal()}/posts/${ids.dark}/vote`, { csrf }, { accept: 'application/json' })
    expect(toggled.status).toBe(200)
    expect(toggled.body).toEqual({ voted: false, votes: 3, verified: true })

    const created = await who.post(`${portal()}/boards/ideas/posts`, { csrf, title: 'SAML login' })
    expect(created.status).toBe(303)
    const [row] = await h.db.select().from(posts).where(eq(posts.title, 'SAML login'))
    expect(row!.authorEndUserId).toBe(endUser!.id)

    const out = await who.post(`${portal()}/signout`, { csrf })
    expect(out.status).toBe(303)
    expect(out.headers.get('set-cookie')).toContain('chorus_portal=; Path=/portal/')
    expect((await who.get(portal())).body).not.toContain('Signed in as')
  })

  test('ETag and short public caching for anonymous pages; If-None-Match gives 304', async () => {
    const who = visitor()
    for (const path of ['', '/boards/ideas', `/posts/${ids.dark}`, '/roadmap', '/changelog']) {
      const first = await who.get(`${portal()}${path}`)
      expect(first.headers.get('cache-control')).toBe('public, max-age=30, stale-while-revalidate=60')
      expect(first.headers.get('vary')).toBe('Cookie')
      const etag = first.headers.get('etag')!
      expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/)
      const again = await who.get(`${portal()}${path}`, { 'if-none-match': etag })
      expect(again.status).toBe(304)
      expect(again.body).toBeNull()
    }
    const before = await who.get(`${portal()}/posts/${ids.keys}`)
    await api.post(`/api/v1/posts/${ids.keys}/votes`, { email: 'late@customer.example' })
    const after = await who.get(`${portal()}/posts/${ids.keys}`, { 'if-none-match': before.headers.get('etag')! })
    expect(after.status).toBe(200)
  })

  test('the stylesheet and script stay within 10 KiB gzipped together, and are served gzipped and immutable', async () => {
    const total = Object.values(ASSETS).reduce((sum, asset) => sum + gzipSync(asset.body, { level: 9 }).length, 0)
    expect(total).toBeLessThanOrEqual(ASSET_BUDGET_BYTES)
    let served = 0
    for (const asset of Object.values(ASSETS)) {
      const res = await h.app.handle(new Request(`http://localhost:3000${asset.path}`, { headers: { 'accept-encoding': 'gzip' } }))
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      served += (await res.arrayBuffer()).byteLength
    }
    expect(served).toBeLessThanOrEqual(ASSET_BUDGET_BYTES)
    // The pages reference exactly these files.
    const page = (await visitor().get(portal())).body as string
    for (const asset of Object.values(ASSETS)) expect(page).toContain(asset.path)
  })

  test('branding: brand colour as the accent (with a readable text colour), logo-less name, favicon when set', async () => {
    await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { brand_color: '#FACC15' } })
    try {
      const res = await visitor().get(portal())
      expect(res.body).toContain('<style>:root{--accent:#facc15;--on-accent:#000000}</style>')
      const hash = new Bun.CryptoHasher('sha256').update(':root{--accent:#facc15;--on-accent:#000000}').digest('base64')
      expect(res.headers.get('content-security-policy')).toContain(`style-src 'self' 'sha256-${hash}'`)
    } finally {
      await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { brand_color: null } })
    }
  })

  test('changelog: published entries newest first with their shipped public posts, drafts left out, the Atom feed linked', async () => {
    const publish = async (body: Record<string, unknown>) => {
      const res = await api.post('/api/v1/changelog', body)
      if (res.status !== 201) throw new Error(`changelog: ${res.status} ${JSON.stringify(res.body)}`)
      return res.body.id as string
    }
    await publish({ title: 'Older entry', body: 'First **bold** change', published_at: new Date(Date.now() - 86_400_000).toISOString() })
    const shipped = await publish({ title: `Shipped ${XSS}`, body: 'Raw <script>alert(3)</script> and [a link](javascript:alert(4))', published_at: new Date().toISOString(), post_ids: [ids.csv, ids.secret] })
    await publish({ title: 'Draft entry' })
    const res = await visitor().get(`${portal()}/changelog`)
    expect(res.status).toBe(200)
    const page = res.body as string
    expect(page).toContain('<h1>Changelog</h1>')
    expect(page).toContain(`<link rel="alternate" type="application/atom+xml" title="Workspace ${ws.slug} changelog" href="http://localhost:3000/api/v1/public/${ws.slug}/changelog/feed.atom">`)
    expect(page.indexOf('Shipped &quot;&gt;&lt;script&gt;')).toBeGreaterThan(0)
    expect(page.indexOf('Shipped &quot;&gt;')).toBeLessThan(page.indexOf('Older entry'))
    expect(page).toContain('<strong>bold</strong>')
    expect(page).not.toContain('Draft entry')
    expect(page).not.toContain('<script>alert(3)')
    expect(page).not.toMatch(/href="javascript:/i)
    expect(page).toContain(`<li class="card entry" id="${shipped}">`)
    expect(page).toContain(`<a href="/portal/${ws.slug}/posts/${ids.csv}">CSV export</a>`)
    expect(page).not.toContain('Acquisition plan')
    expect(page).toContain('aria-current="page">Changelog</a>')
    expect((await visitor().get(`${portal()}/sitemap.xml`)).body).toContain(`<loc>http://localhost:3000/portal/${ws.slug}/changelog</loc>`)
    expect((await visitor().get(`/portal/${other.slug}/changelog`)).body).toContain('Nothing shipped yet: what the team ships appears here')
  })
})

describe('errors', () => {
  test('404 pages are HTML: unknown workspace, board, private board, post, post on a private board, unknown path', async () => {
    const who = visitor()
    const cases: [string, string][] = [
      ['/portal/no-such-workspace', 'There is no feedback portal at this address.'],
      [`${portal()}/boards/nope`, 'Board not found'],
      [`${portal()}/boards/secret`, 'Board not found'],
      [`${portal()}/posts/post_doesnotexist`, 'Post not found'],
      [`${portal()}/posts/${ids.secret}`, 'Post not found'],
      [`${portal()}/nothing/here`, 'There is no page at this address.'],
      [`/portal/${other.slug}/posts/${ids.dark}`, 'Post not found'],
    ]
    for (const [path, message] of cases) {
      const res = await who.get(path)
      expect(res.status).toBe(404)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(res.headers.get('cache-control')).toBe('private, no-store')
      expect(res.body).toContain(message)
      expect(res.body).toContain('<meta name="robots" content="noindex">')
    }
    expect((await who.get(`/portal/no-such-workspace/sitemap.xml`)).status).toBe(404)
  })

  test('a refused form re-renders with the message (422), the field marked and what was typed kept', async () => {
    const who = visitor()
    const noEmail = await who.post(`${portal()}/boards/ideas/posts`, { title: 'Kept title', body: 'Kept body' })
    expect(noEmail.status).toBe(422)
    expect(noEmail.body).toContain('<div class="alert" role="alert" id="form-error">Enter a valid e-mail address, like name@example.com.</div>')
    expect(noEmail.body).toContain('id="post-email" name="email" aria-invalid="true" aria-describedby="form-error"')
    expect(noEmail.body).toContain('value="Kept title"')
    expect(noEmail.body).toContain('>Kept body</textarea>')
    expect(noEmail.headers.get('cache-control')).toBe('private, no-store')

    const long = await who.post(`${portal()}/boards/ideas/posts`, { title: 'x'.repeat(201), email: 'a@customer.example' })
    expect(long.status).toBe(422)
    expect(long.body).toContain('Give your idea a title (at most 200 characters).')
    expect(long.body).toContain('id="post-title" name="title" aria-invalid="true"')

    const badEmail = await who.post(`${portal()}/posts/${ids.dark}/comments`, { body: 'Hi', email: 'not-an-address' })
    expect(badEmail.status).toBe(422)
    expect(badEmail.body).toContain('id="comment-email" name="email" aria-invalid="true"')
    expect(badEmail.body).toContain('>Hi</textarea>')
    expect((await h.db.select().from(posts).where(eq(posts.title, 'Kept title'))).length).toBe(0)

    // A post merged meanwhile: the vote is refused and the visitor lands on the post it went into.
    const merged = await who.post(`${portal()}/posts/${ids.dupe}/vote`, { email: 'a@customer.example' })
    expect(merged.status).toBe(303)
    expect(merged.headers.get('location')).toBe(`${portal()}/posts/${ids.dark}`)
    expect((await h.db.select().from(votes).where(eq(votes.postId, ids.dupe!))).length).toBe(0)
  })

  test('a filter the board cannot use is named on the page', async () => {
    const res = await visitor().get(`${portal()}/boards/ideas?status=Nope&sort=sideways&page=0`)
    expect(res.status).toBe(200)
    expect(res.body).toContain('There is no status “Nope”. Sort by most votes, newest or trending. That page number does not exist.')
  })

  test('an invalid or expired sso_token: back to the clean URL with a message, no cookie', async () => {
    const who = visitor()
    const forged = await customerToken('not-the-secret-of-this-workspace-0123456789')
    const res = await who.get(`${portal()}/roadmap?sso_token=${forged}`)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`${portal()}/roadmap?sso=failed`)
    expect(res.headers.get('set-cookie')).toBeNull()
    const page = await who.get(res.headers.get('location')!)
    expect(page.body).toContain('That sign-in link is invalid or has expired')
    const expired = await customerToken(secret, { expiresIn: -60 })
    expect((await who.get(`${portal()}?sso_token=${expired}`)).headers.get('location')).toBe(`${portal()}?sso=failed`)
    // A workspace without a JWT configuration cannot identify anyone.
    const elsewhere = await who.get(`/portal/${other.slug}?sso_token=${await customerToken(secret)}`)
    expect(elsewhere.headers.get('location')).toBe(`/portal/${other.slug}?sso=failed`)
  })

  test('a workspace that takes identified users only shows no anonymous forms and refuses anonymous posts (401)', async () => {
    await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { allow_anonymous: false } })
    try {
      const who = visitor()
      const page = (await who.get(`${portal()}/posts/${ids.dark}`)).body as string
      expect(page).toContain('takes feedback from signed-in customers only')
      // An empty state invites only those who can act on it.
      const empty = (await who.get(`${portal()}/boards/ideas?q=zebra`)).body as string
      expect(empty).toContain('<p class="muted">No posts match these filters.</p>')
      expect(empty).not.toContain('suggest it')
      expect(page).not.toContain('<form class="stack card" method="post"')
      const refused = await who.post(`${portal()}/posts/${ids.dark}/comments`, { body: 'Let me in', email: 'x@customer.example' })
      expect(refused.status).toBe(401)
      expect(refused.body).toContain('role="alert"')
      expect(refused.body).toContain('identified users only')
    } finally {
      await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { allow_anonymous: true } })
    }
  })

  test('a lapsed subscription keeps the portal readable but its forms refuse (403 in the page)', async () => {
    await setSubscription(h, ws.id, { subscriptionStatus: 'canceled' })
    try {
      const who = visitor()
      expect((await who.get(portal())).status).toBe(200)
      const refused = await who.post(`${portal()}/posts/${ids.dark}/comments`, { body: 'Hello', email: 'x@customer.example' })
      expect(refused.status).toBe(403)
      expect(refused.body).toContain('This portal is not taking new feedback right now.')
    } finally {
      await setSubscription(h, ws.id, { subscriptionStatus: 'trialing' })
    }
  })

  test("the forms share the widget's per-IP rate limit: 429 in the page with Retry-After", async () => {
    const limited = await startHarness({ TRUST_PROXY: 'true', RATE_LIMIT_PER_IP: '3' })
    try {
      const fixture = await workspaceFixture(limited)
      await boardFixture(limited, fixture.id, 'ideas')
      await freshRateWindow()
      const headers = { 'x-forwarded-for': '203.0.113.77', 'sec-fetch-site': 'same-origin', ...FORM }
      const client = limited.client()
      // Two through the widget's JSON route, one through the portal: the budget of three is spent.
      for (let i = 0; i < 2; i++) expect((await client.post(`/api/v1/public/${fixture.slug}/boards/ideas/posts`, { title: `Widget ${i}`, email: 'w@customer.example' }, { headers: { 'x-forwarded-for': '203.0.113.77' } })).status).toBe(201)
      expect((await client.call('POST', `/portal/${fixture.slug}/boards/ideas/posts`, { raw: form({ title: 'Portal one', email: 'w@customer.example' }), headers })).status).toBe(303)
      // A new browser from the same network (no session cookie).
      const refused = await client.call('POST', `/portal/${fixture.slug}/boards/ideas/posts`, { raw: form({ title: 'One too many', email: 'w@customer.example' }), headers, anonymous: true })
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(refused.body).toContain('Too many submissions from your network. Wait a minute and try again.')
      expect(refused.body).toContain('value="One too many"')
      expect((await limited.db.select().from(posts).where(eq(posts.title, 'One too many'))).length).toBe(0)
    } finally {
      await limited.close()
    }
  }, 90_000)
})

describe('security', () => {
  test('user-provided text is escaped everywhere: titles, bodies, comments, meta tags', async () => {
    for (const path of ['', '/boards/ideas', `/posts/${ids.xss}`, '/changelog']) {
      const page = (await visitor().get(`${portal()}${path}`)).body as string
      expect(page).not.toContain('<script>alert(1)</script>')
      expect(page).not.toContain('<img src=x onerror')
      expect(page).not.toMatch(/<script(?! src="\/portal\/_\/portal\.js\?v=[0-9a-f]+" defer><\/script>)/)
    }
    const page = (await visitor().get(`${portal()}/posts/${ids.xss}`)).body as string
    expect(page).toContain('<h1>Title &quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;</h1>')
    expect(page).toContain('content="Title &quot;&gt;&lt;script&gt;')
    expect(page).toContain('Comment &quot;&gt;&lt;script&gt;')
  })

  test('private boards, their posts, internal comments and e-mail addresses never appear on any page', async () => {
    const who = visitor()
    const paths = ['', '/boards/ideas', '/boards/bugs', `/posts/${ids.dark}`, `/posts/${ids.xss}`, `/posts/${ids.keys}`, '/roadmap', '/changelog', '/sitemap.xml']
    for (const path of paths) {
      const page = (await who.get(`${portal()}${path}`)).body as string
      expect(page).not.toContain('Acquisition plan')
      expect(page).not.toContain(ids.secret!)
      expect(page).not.toContain('/boards/secret')
      expect(page).not.toContain('INTERNAL-NOTE')
      expect(page).not.toMatch(/[\w.+-]+@[\w-]+\.example/)
      expect(page).not.toContain(`owner-${ws.slug}@`)
    }
  })

  test('CSRF: a cross-site form is refused for everyone; an identified session also needs its form token', async () => {
    const anon = visitor()
    const cross = await anon.post(`${portal()}/posts/${ids.keys}/comments`, { body: 'From evil', email: 'e@customer.example' }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })
    expect(cross.status).toBe(403)
    expect(cross.body).toContain('This form expired or was sent from another site.')
    const fetchSite = await anon.client.call('POST', `${portal()}/posts/${ids.keys}/comments`, { raw: form({ body: 'From evil', email: 'e@customer.example' }), headers: { ...FORM, 'sec-fetch-site': 'cross-site' } })
    expect(fetchSite.status).toBe(403)

    const who = await identified({ sub: 'cust-csrf', name: 'Csrf Target' })
    const csrf = csrfOf((await who.get(`${portal()}/posts/${ids.keys}`)).body)!
    expect(csrf).toMatch(/^[\w-]{43}$/)
    expect((await who.post(`${portal()}/posts/${ids.keys}/comments`, { body: 'No token' })).status).toBe(403)
    expect((await who.post(`${portal()}/posts/${ids.keys}/comments`, { body: 'Wrong token', csrf: csrf.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) })).status).toBe(403)
    // Another session's token does not fit this session.
    const second = await identified({ sub: 'cust-csrf-2', name: 'Someone else' })
    const theirs = csrfOf((await second.get(`${portal()}/posts/${ids.keys}`)).body)!
    expect((await who.post(`${portal()}/posts/${ids.keys}/comments`, { body: 'Their token', csrf: theirs })).status).toBe(403)
    expect((await who.post(`${portal()}/posts/${ids.keys}/comments`, { body: 'Right token', csrf })).status).toBe(303)
    const bodies = (await h.db.select().from(comments).where(eq(comments.postId, ids.keys!))).map((row) => row.body)
    expect(bodies).toEqual(['Right token'])
    // Signing out needs the token too.
    expect((await who.post(`${portal()}/signout`, { csrf: theirs })).status).toBe(403)
  })

  test('a session cookie works only in its own workspace; a forged one is dropped, not trusted', async () => {
    const who = await identified({ sub: 'cust-scope', name: 'Scoped Person' })
    const cookie = who.client.jar.get('chorus_portal')!
    const elsewhere = await h.client({ 'x-forwarded-for': nextIp() }).get(`/portal/${other.slug}`, { headers: { cookie: `chorus_portal=${cookie}` } })
    expect(elsewhere.status).toBe(200)
    expect(elsewhere.body).not.toContain('Signed in as')
    expect(elsewhere.headers.get('set-cookie')).toContain('chorus_portal=;')
    const forged = await h.client().get(portal(), { headers: { cookie: 'chorus_portal=eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' } })
    expect(forged.body).not.toContain('Signed in as')
    expect(forged.headers.get('set-cookie')).toContain('Max-Age=0')
  })

  test('the vote redirect never leaves the portal', async () => {
    for (const target of ['https://evil.example/', '//evil.example/x', `/portal/${other.slug}`, `${portal()}//evil.example`]) {
      const res = await visitor().post(`${portal()}/posts/${ids.csv}/vote`, { email: 'redirect@customer.example', return_to: target })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toMatch(new RegExp(`^/portal/${ws.slug}/posts/${ids.csv}\\?done=`))
    }
  })

  test('pages forbid framing and inline script; the sso_token never reaches a rendered page', async () => {
    const res = await visitor().get(portal())
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("form-action 'self'")
    const who = visitor()
    const token = await customerToken(secret, { claims: { sub: 'cust-leak' } })
    const signed = await who.get(`${portal()}/posts/${ids.dark}?sso_token=${token}`)
    expect(signed.status).toBe(303)
    expect(signed.headers.get('location')).not.toContain('sso_token')
    expect(signed.headers.get('cache-control')).toBe('no-store')
  })
})
