import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { endUsers, visitorConfirmations, votes } from '../../server/db/schema/index.ts'
import { configureHs256, customerToken, identify, nextIp } from '../helpers/end-users.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { startSmtp, tokenFromMail, type ReceivedMail } from '../helpers/smtp.ts'

let smtp: Awaited<ReturnType<typeof startSmtp>>
let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
beforeAll(async () => {
  smtp = await startSmtp()
  h = await startHarness({ SMTP_URL: smtp.url, TRUST_PROXY: 'true' })
  ws = await workspaceFixture(h, undefined, smtp)
  other = await workspaceFixture(h, undefined, smtp)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'bugs')
  await boardFixture(h, ws.id, 'secret', true)
  await boardFixture(h, other.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
}, 90_000)
afterAll(async () => {
  await h.close()
  await smtp.close()
})

const base = (slug = ws.slug) => `/api/v1/public/${slug}`
const anonymous = () => h.client({ 'x-forwarded-for': nextIp() })
const withSession = (token: string) => h.client({ authorization: `Bearer ${token}`, 'x-forwarded-for': nextIp() })
let n = 0
const address = (label: string) => `${label}-${++n}@customer.example`
const identityOf = async (email: string, workspaceId = ws.id) => (await h.db.select().from(endUsers).where(eq(endUsers.email, email))).find((row) => row.workspaceId === workspaceId)
/** The link's path, as a browser would follow it. */
const linkOf = (mail: ReceivedMail) => {
  const match = /http:\/\/localhost:3000(\/api\/v1\/public\/[^\s"<>]+\/visitors\/confirm\?token=[A-Za-z0-9_-]+)/.exec(mail.decoded)
  if (!match) throw new Error('no confirmation link in the e-mail')
  return match[1]!
}
let jwtSecret: string | undefined
const customerSecret = async () => (jwtSecret ??= await configureHs256(ws.owner, ws.slug))
const keyPost = async (title = `Key post ${Math.random()}`) => (await api.post('/api/v1/boards/ideas/posts', { title })).body as { id: string }

describe('happy', () => {
  test('an anonymous post is accepted unverified, answers a session in headers (exposed to CORS) and sends one confirmation e-mail a day', async () => {
    const email = address('grace')
    const res = await anonymous().post(`${base()}/boards/ideas/posts`, { title: 'Dark mode', email }, { headers: { origin: 'https://customer.example' } })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ title: 'Dark mode', verified: false, author: { type: 'end_user', email: null } })
    expect(res.body.voted).toBeUndefined()
    const token = res.headers.get('chorus-session-token')!
    expect(token).toMatch(/^ey/)
    expect(new Date(res.headers.get('chorus-session-expires')!).getTime() - Date.now()).toBeGreaterThan(23 * 3600_000)
    const exposed = res.headers.get('access-control-expose-headers')!
    expect(exposed).toContain('Chorus-Session-Token')
    expect(exposed).toContain('Chorus-Session-Expires')

    const mail = await smtp.waitFor(email)
    expect(mail.decoded).toContain(`Confirm your e-mail address for Workspace ${ws.slug}`)
    expect(linkOf(mail)).toStartWith(`/api/v1/public/${ws.slug}/visitors/confirm?token=`)
    const identity = (await identityOf(email))!
    expect(identity.verifiedAt).toBeNull()
    expect(identity.confirmationSentAt).not.toBeNull()
    // The token is stored hashed, never as sent.
    const [stored] = await h.db.select().from(visitorConfirmations).where(eq(visitorConfirmations.endUserId, identity.id))
    expect(stored!.tokenHash).not.toBe(tokenFromMail(mail))
    expect(stored!.tokenHash).toMatch(/^[0-9a-f]{64}$/)

    // A second write the same day: accepted, a new session, no second e-mail.
    const vote = await anonymous().post(`${base()}/posts/${res.body.id}/votes`, { email })
    expect(vote.status).toBe(200)
    expect(vote.body).toEqual({ voted: true, votes: 1, verified: false })
    expect(vote.headers.get('chorus-session-token')).toMatch(/^ey/)
    await Bun.sleep(300)
    expect(smtp.inbox.filter((m) => m.to.includes(email))).toHaveLength(0)
    expect(await h.db.select().from(visitorConfirmations).where(eq(visitorConfirmations.endUserId, identity.id))).toHaveLength(1)

    // The session of the write reads the visitor's own votes back after a reload.
    const list = await withSession(token).get(`${base()}/boards/ideas/posts`)
    expect(list.status).toBe(200)
    expect(list.body.items.find((p: any) => p.id === res.body.id)).toMatchObject({ voted: true, verified: false })
  })

  test('the link confirms the identity: every post and vote of it reads verified, in lists, voters and metrics', async () => {
    const email = address('ada')
    const post = (await anonymous().post(`${base()}/boards/ideas/posts`, { title: 'Verify me', email })).body
    const target = await keyPost()
    await anonymous().post(`${base()}/posts/${target.id}/votes`, { email })
    const before = (await api.get(`/api/v1/workspaces/${ws.slug}/metrics`)).body
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.verified).toBe(false)
    expect((await api.get(`/api/v1/posts/${target.id}/votes`)).body.items[0]).toMatchObject({ verified: false, voter: { type: 'end_user', email, verified: false } })

    const page = await h.client().get(linkOf(await smtp.waitFor(email)))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toStartWith('text/html')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.body).toContain('<html lang="en">')
    expect(page.body).toContain('<h1>Your e-mail is confirmed</h1>')

    expect((await identityOf(email))!.verifiedAt).not.toBeNull()
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.verified).toBe(true)
    expect((await h.client().get(`${base()}/posts/${post.id}`)).body.verified).toBe(true)
    expect((await api.get(`/api/v1/posts/${target.id}/votes`)).body.items[0]).toMatchObject({ verified: true, voter: { verified: true } })
    const after = (await api.get(`/api/v1/workspaces/${ws.slug}/metrics`)).body
    expect(after.votes.total).toBe(before.votes.total)
    // Two votes of that identity: the vote on the target, and its post's own first vote (docs/notifications.md).
    expect(after.votes.verified).toBe(before.votes.verified + 2)
    expect(after.end_users.verified).toBe(before.end_users.verified + 1)
  })

  test('verified=true|false filters the private and public post lists, the workspace search and the voters', async () => {
    const email = address('filter')
    const unverified = (await anonymous().post(`${base()}/boards/bugs/posts`, { title: 'Unverified bug report', email })).body
    const keyed = (await api.post('/api/v1/boards/bugs/posts', { title: 'Team bug report' })).body
    await anonymous().post(`${base()}/posts/${keyed.id}/votes`, { email })
    await api.post(`/api/v1/posts/${keyed.id}/votes`, { email: address('vouched') })
    const ids = (res: any) => res.body.items.map((p: any) => p.id)

    expect(ids(await api.get('/api/v1/boards/bugs/posts?verified=false'))).toEqual([unverified.id])
    expect(ids(await api.get('/api/v1/boards/bugs/posts?verified=true'))).toEqual([keyed.id])
    expect(ids(await h.client().get(`${base()}/boards/bugs/posts?verified=false`))).toEqual([unverified.id])
    expect((await h.client().get(`${base()}/boards/bugs/posts?verified=false`)).body.total).toBe(1)
    expect(ids(await h.client().get(`${base()}/posts?q=bug&verified=true`))).toEqual([keyed.id])
    const voters = await api.get(`/api/v1/posts/${keyed.id}/votes?verified=false`)
    expect(voters.body.items.map((v: any) => v.voter.email)).toEqual([email])
    expect(voters.body.total).toBe(1)
    expect((await api.get(`/api/v1/posts/${keyed.id}/votes?verified=true`)).body.items.map((v: any) => v.verified)).toEqual([true])
  })

  test('claim: 202 pending until the link is clicked, then the session once; it acts as the confirmed identity', async () => {
    const email = address('claim')
    const claimer = anonymous()
    const started = await claimer.post(`${base()}/visitors`, { email })
    expect(started.status).toBe(202)
    expect(started.body.claim_id.length).toBeGreaterThanOrEqual(43)
    expect(new Date(started.body.expires_at).getTime()).toBeGreaterThan(Date.now())
    const poll = () => claimer.get(`${base()}/visitors/${started.body.claim_id}`)
    const pending = await poll()
    expect(pending.status).toBe(202)
    expect(pending.body).toEqual({ status: 'pending' })
    expect(pending.headers.get('cache-control')).toBe('no-store')

    expect((await h.client().get(linkOf(await smtp.waitFor(email)))).status).toBe(200)
    const confirmed = await poll()
    expect(confirmed.status).toBe(200)
    expect(confirmed.body).toMatchObject({ status: 'confirmed', end_user: { email, verified: true, external_id: null } })
    expect((await poll()).status).toBe(404)

    const session = confirmed.body.session_token as string
    const target = await keyPost()
    const vote = await withSession(session).post(`${base()}/posts/${target.id}/votes`, {})
    expect(vote.body).toEqual({ voted: true, votes: 1, verified: true })
    // Repeating the session's own address is fine; the write carries no new session header.
    const again = await withSession(session).post(`${base()}/posts/${target.id}/votes`, { email })
    expect(again.body).toEqual({ voted: false, votes: 0, verified: true })
    expect(again.headers.get('chorus-session-token')).toBeNull()
  })

  test('voted: with a session each post says whether that end user voted, and the answer is private; without one it is absent and public', async () => {
    const secret = await customerSecret()
    const session = (await identify(h, ws.slug, await customerToken(secret, { claims: { sub: 'cust-voted', email: 'voted@customer.example' } }))).body
    expect(session.verified).toBe(true)
    const liked = await keyPost('Liked post')
    const skipped = await keyPost('Skipped post')
    await withSession(session.session_token).post(`${base()}/posts/${liked.id}/votes`, {})

    const mine = await withSession(session.session_token).get(`${base()}/boards/ideas/posts?per_page=100`)
    expect(mine.status).toBe(200)
    const flag = (res: any, id: string) => res.body.items.find((p: any) => p.id === id)
    expect(flag(mine, liked.id).voted).toBe(true)
    expect(flag(mine, skipped.id).voted).toBe(false)
    expect(mine.body.items.every((p: any) => typeof p.voted === 'boolean')).toBe(true)
    expect(mine.headers.get('cache-control')).toBe('private, no-cache')
    expect(mine.headers.get('vary')).toBe('Authorization')

    const detail = await withSession(session.session_token).get(`${base()}/posts/${liked.id}`)
    expect(detail.body).toMatchObject({ id: liked.id, voted: true, verified: true })
    expect(detail.headers.get('cache-control')).toBe('private, no-cache')
    const search = await withSession(session.session_token).get(`${base()}/posts?q=liked&per_page=5`)
    expect(search.body.items.map((p: any) => [p.id, p.voted])).toEqual([[liked.id, true]])

    const publicList = await h.client().get(`${base()}/boards/ideas/posts?per_page=100`)
    expect(flag(publicList, liked.id).voted).toBeUndefined()
    expect(publicList.headers.get('cache-control')).toStartWith('public')
    expect(publicList.headers.get('vary')).toBe('Authorization')
    const etag = publicList.headers.get('etag')!
    expect((await h.client().get(`${base()}/boards/ideas/posts?per_page=100`, { headers: { 'if-none-match': etag } })).status).toBe(304)

    // Constant queries per list: the personalised list costs one lookup more, whatever its size. Both
    // pages read once first, so both are answered from the public cache (docs/scaling.md) plus the lookup.
    await h.client().get(`${base()}/boards/ideas/posts?per_page=2`)
    h.queries.length = 0
    await withSession(session.session_token).get(`${base()}/boards/ideas/posts?per_page=100`)
    const personal = h.queries.length
    h.queries.length = 0
    await withSession(session.session_token).get(`${base()}/boards/ideas/posts?per_page=2`)
    expect(h.queries.length).toBe(personal)
  })

  test('the public workspace tells the widget its default board, accent colour, logo and whether anonymous visitors may write', async () => {
    let res = await h.client().get(base())
    expect(res.body.workspace).toMatchObject({ logo_url: null, settings: { allow_anonymous: true, accent_color: null, default_board: 'ideas' } })
    await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { default_board: 'bugs', brand_color: '#8b5cf6' } }, { headers: { 'x-workspace': ws.slug } })
    res = await h.client().get(base())
    expect(res.body.workspace.settings).toMatchObject({ default_board: 'bugs', accent_color: '#8b5cf6', brand_color: '#8b5cf6' })
    // A private board is never the default, whatever the setting says.
    await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { default_board: 'secret' } }, { headers: { 'x-workspace': ws.slug } })
    expect((await h.client().get(base())).body.workspace.settings.default_board).toBe('ideas')
    await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { settings: { default_board: null, brand_color: null } }, { headers: { 'x-workspace': ws.slug } })
  })

  test('workspace search finds posts across public boards only, best match first, paged small', async () => {
    await api.post('/api/v1/boards/ideas/posts', { title: 'Export to spreadsheet' })
    await api.post('/api/v1/boards/bugs/posts', { title: 'Spreadsheet export is broken' })
    await api.post('/api/v1/boards/secret/posts', { title: 'Spreadsheet secret plan' })
    const res = await h.client().get(`${base()}/posts?q=spreadsheet&per_page=5`)
    expect(res.status).toBe(200)
    expect(res.body.items.map((p: any) => p.board).sort()).toEqual(['bugs', 'ideas'])
    expect(res.body).toMatchObject({ page: 1, per_page: 5, total: 2 })
    expect(res.body.items.every((p: any) => p.author.email === null && p.owner_user_id === null)).toBe(true)
  })
})

describe('errors', () => {
  test('an anonymous write naming a confirmed address without its session is written as an address-less stand-in, never as the customer', async () => {
    const email = address('ceo')
    await api.post(`/api/v1/posts/${(await keyPost()).id}/votes`, { email })
    const customer = (await identityOf(email))!
    expect(customer.verifiedAt).not.toBeNull()
    const res = await anonymous().post(`${base()}/boards/ideas/posts`, { title: 'I am the CEO', email })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ verified: false, author: { type: 'end_user', name: 'Anonymous', email: null } })
    expect(res.headers.get('chorus-session-token')).toMatch(/^ey/)
    const team = await api.get(`/api/v1/posts/${res.body.id}`)
    expect(team.body).toMatchObject({ verified: false, author: { email: null } })
    expect(team.body.author.id).not.toBe(customer.id)
    // The customer's owner is asked by e-mail (a claim link); nothing was written in their name.
    expect(linkOf(await smtp.waitFor(email))).toContain('/visitors/confirm?token=')
    expect((await identityOf(email))!.updatedAt).toEqual(customer.updatedAt)
  })

  test('confirmation links: unknown, used and expired links answer a 400 page and verify nothing', async () => {
    const unknown = await h.client().get(`${base()}/visitors/confirm?token=nope`)
    expect(unknown.status).toBe(400)
    expect(unknown.body).toContain('This link cannot be used')

    const email = address('used')
    await anonymous().post(`${base()}/boards/ideas/posts`, { title: 'Used link', email })
    const link = linkOf(await smtp.waitFor(email))
    expect((await h.client().get(link)).status).toBe(200)
    expect((await h.client().get(link)).status).toBe(400)

    const late = address('late')
    await anonymous().post(`${base()}/boards/ideas/posts`, { title: 'Late link', email: late })
    const lateLink = linkOf(await smtp.waitFor(late))
    const identity = (await identityOf(late))!
    await h.db.update(visitorConfirmations).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(visitorConfirmations.endUserId, identity.id))
    expect((await h.client().get(lateLink)).status).toBe(400)
    expect((await identityOf(late))!.verifiedAt).toBeNull()
    expect((await h.client().get(`${base()}/visitors/confirm`)).status).toBe(422)
  })

  test('claims: unknown and expired claims are 404; a bad address is 422; a third claim an hour for one address is 429', async () => {
    expect((await anonymous().get(`${base()}/visitors/not-a-claim`)).status).toBe(404)
    const email = address('expired')
    const claimer = anonymous()
    const started = (await claimer.post(`${base()}/visitors`, { email })).body
    await h.db.update(visitorConfirmations).set({ claimExpiresAt: sql`now() - interval '1 second'` }).where(eq(visitorConfirmations.endUserId, (await identityOf(email))!.id))
    const expired = await claimer.get(`${base()}/visitors/${started.claim_id}`)
    expect(expired.status).toBe(404)
    expect(expired.body.code).toBe('NOT_FOUND')
    expect((await anonymous().post(`${base()}/visitors`, { email: 'not-an-address' })).status).toBe(422)
    expect((await anonymous().post(`${base()}/visitors`, { email, extra: true })).status).toBe(422)

    const busy = address('busy')
    for (let i = 0; i < 3; i++) expect((await anonymous().post(`${base()}/visitors`, { email: busy })).status).toBe(202)
    const limited = await anonymous().post(`${base()}/visitors`, { email: busy.toUpperCase() })
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).not.toBeNull()
  })

  test('public reads ignore a malformed, expired or foreign credential: the anonymous view, without voted', async () => {
    const post = await keyPost('Read with a bad token')
    for (const authorization of ['Bearer garbage', 'Basic abc', `Bearer ${await ws.key()}`]) {
      const res = await h.client({ authorization }).get(`${base()}/posts/${post.id}`)
      expect(res.status).toBe(200)
      expect(res.body.voted).toBeUndefined()
      expect(res.headers.get('cache-control')).toBe('private, no-cache')
    }
  })
})

describe('security', () => {
  test('a session minted while the address was unconfirmed stops working once it is confirmed', async () => {
    const email = address('squatter')
    const squatter = await anonymous().post(`${base()}/boards/ideas/posts`, { title: 'Typed someone else’s address', email })
    const squatterSession = squatter.headers.get('chorus-session-token')!
    const before = await withSession(squatterSession).get(`${base()}/posts/${squatter.body.id}`)
    // A post starts with its author's own vote.
    expect(before.body.voted).toBe(true)
    // The address's owner clicks the link in their inbox.
    expect((await h.client().get(linkOf(await smtp.waitFor(email)))).status).toBe(200)
    const refused = await withSession(squatterSession).post(`${base()}/posts/${squatter.body.id}/votes`, {})
    expect(refused.status).toBe(401)
    expect(refused.body.detail).toContain('confirm it by e-mail')
    expect((await withSession(squatterSession).get(`${base()}/posts/${squatter.body.id}`)).body.voted).toBeUndefined()
    // Only the post's first vote, written with it; the refused session added none.
    expect(await h.db.select().from(votes).where(eq(votes.postId, squatter.body.id))).toHaveLength(1)
  })

  test("another workspace's link, claim and session do not work here", async () => {
    const email = address('foreign')
    await anonymous().post(`${base(other.slug)}/boards/ideas/posts`, { title: 'Elsewhere', email })
    const foreignLink = linkOf(await smtp.waitFor(email))
    expect(foreignLink).toContain(`/public/${other.slug}/`)
    const token = new URL(foreignLink, 'http://x').searchParams.get('token')!
    expect((await h.client().get(`${base()}/visitors/confirm?token=${token}`)).status).toBe(400)
    expect((await identityOf(email, other.id))!.verifiedAt).toBeNull()

    const claim = (await anonymous().post(`${base(other.slug)}/visitors`, { email: address('foreign-claim') })).body
    expect((await anonymous().get(`${base()}/visitors/${claim.claim_id}`)).status).toBe(404)

    const otherSession = (await anonymous().post(`${base(other.slug)}/boards/ideas/posts`, { title: 'Other session', email: address('other') })).headers.get('chorus-session-token')!
    const read = await withSession(otherSession).get(`${base()}/boards/ideas/posts`)
    expect(read.status).toBe(200)
    expect(read.body.items.every((p: any) => p.voted === undefined)).toBe(true)
    const write = await withSession(otherSession).post(`${base()}/boards/ideas/posts`, { title: 'Cross' })
    expect(write.status).toBe(401)
    expect(write.body.detail).toContain('another workspace')
  })

  test('identified (JWT) end users and addresses named by the team are verified; a claim reveals nothing about the address', async () => {
    const secret = await customerSecret()
    const identified = await identify(h, ws.slug, await customerToken(secret, { claims: { sub: 'cust-jwt', email: 'jwt@customer.example' } }))
    expect(identified.body.verified).toBe(true)
    const post = await withSession(identified.body.session_token).post(`${base()}/boards/ideas/posts`, { title: 'From an identified user' })
    expect(post.body.verified).toBe(true)
    expect(post.headers.get('chorus-session-token')).toBeNull()
    expect((await api.post('/api/v1/boards/ideas/posts', { title: 'On behalf', email: address('vouched') })).body.verified).toBe(true)

    const known = address('known')
    await api.post(`/api/v1/posts/${(await keyPost()).id}/votes`, { email: known })
    const a = await anonymous().post(`${base()}/visitors`, { email: known })
    const b = await anonymous().post(`${base()}/visitors`, { email: address('stranger') })
    expect([a.status, b.status]).toEqual([202, 202])
    expect(Object.keys(a.body).sort()).toEqual(Object.keys(b.body).sort())
  })
})
