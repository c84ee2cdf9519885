import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, like, sql } from 'drizzle-orm'
import { dkimVerify } from 'mailauth/lib/dkim/verify'
import { Resolver } from 'node:dns/promises'
import { emailOutbox, notificationEvents, posts } from '../../server/db/schema/index.ts'
import { nextDigestAt } from '../../server/modules/notifications/digest-time.ts'
import { createMailer } from '../../server/lib/mail.ts'
import { startDnsServer } from '../helpers/dns-server.ts'
import { addMember, boardFixture, setSubscription, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { eventually } from '../helpers/receiver.ts'
import { startMailLoops } from '../helpers/mail-loops.ts'
import { startSmtp } from '../helpers/smtp.ts'

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let dns: Awaited<ReturnType<typeof startDnsServer>>
// The dispatcher and the mailer alone: notifications do not need the webhook delivery loop.
let loops: ReturnType<typeof startMailLoops>
let api: TestClient
let member: { client: TestClient; userId: string }
const subs = (slug = ws.slug) => `/api/v1/workspaces/${slug}/notifications/subscriptions`
const feed = (slug = ws.slug) => `/api/v1/workspaces/${slug}/notifications/events`
const domainPath = (slug = ws.slug) => `/api/v1/workspaces/${slug}/notifications/custom-domain`
const ownerEmail = () => `owner-${ws.slug}@example.com`

beforeAll(async () => {
  dns = await startDnsServer()
  h = await startHarness({ DNS_RESOLVER: dns.address })
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
  loops = startMailLoops(h)
}, 60_000)
afterAll(async () => {
  await loops?.stop()
  await dns?.close()
  await h.close()
})

const domain = 'mail.acme-example.com'

describe('happy', () => {
  test('a member subscribes per channel and delivery; a second one of the same is 409; the owner starts with a daily digest of new posts', async () => {
    const [digest, ...none] = (await ws.owner.get(subs())).body
    expect(none).toEqual([])
    expect(digest).toMatchObject({ user_id: ws.ownerId, events: ['post.created'], channel: 'email', delivery: 'daily', enabled: true })
    const email = await ws.owner.post(subs(), { events: ['post.created', 'status.changed'], channel: 'email' })
    expect(email.status).toBe(201)
    expect(email.body).toMatchObject({ user_id: ws.ownerId, events: ['post.created', 'status.changed'], channel: 'email', delivery: 'instant', enabled: true })
    expect(email.body.id).toMatch(/^nsub_/)
    expect((await ws.owner.post(subs(), { events: ['post.created'], channel: 'in_app' })).status).toBe(201)
    const again = await ws.owner.post(subs(), { events: ['vote.created'], channel: 'email' })
    expect(again.status).toBe(409)
    expect((await ws.owner.post(subs(), { events: ['vote.created'], channel: 'email', delivery: 'daily' })).status).toBe(409)
    expect((await ws.owner.get(subs())).body.map((s: any) => `${s.channel}/${s.delivery}`).sort()).toEqual(['email/daily', 'email/instant', 'in_app/instant'])
  })

  test('an outbox event becomes one notification per subscribed channel; the e-mail goes out through the mail module', async () => {
    const post = await api.post('/api/v1/boards/ideas/posts', { title: 'Notify me' })
    expect(post.status).toBe(201)
    const list = await eventually(async () => {
      const res = await ws.owner.get(feed())
      return res.body.items?.filter((item: any) => item.data.post?.id === post.body.id).length === 3 && res.body
    })
    // The instant e-mail, the in-app one, and the owner's daily digest (it waits for NOTIFY_DIGEST_HOUR).
    const all = list.items.filter((item: any) => item.data.post?.id === post.body.id)
    expect(all.map((item: any) => `${item.channel}/${item.delivery}`).sort()).toEqual(['email/daily', 'email/instant', 'in_app/instant'])
    expect(all.find((item: any) => item.delivery === 'daily').email_status).toBe('pending')
    const items = all.filter((item: any) => item.delivery === 'instant')
    expect(items[0]).toMatchObject({ user_id: ws.ownerId, event_type: 'post.created', subject: 'New post: Notify me' })
    expect(items.find((item: any) => item.channel === 'in_app').email_status).toBeNull()
    await eventually(async () => (await h.db.select().from(notificationEvents).where(and(eq(notificationEvents.eventId, items[0].event_id), eq(notificationEvents.channel, 'email'), eq(notificationEvents.digest, false))))[0]?.emailStatus === 'sent')
    const [mail] = await h.db.select().from(emailOutbox).where(and(eq(emailOutbox.to, ownerEmail()), eq(emailOutbox.subject, `[Workspace ${ws.slug}] New post: Notify me`)))
    expect(mail?.text).toContain('post.created')
    // The member has no subscription to post.created: nothing for them.
    expect((await member.client.get(feed())).body.items.filter((item: any) => item.event_type === 'post.created')).toEqual([])
  })

  test('paging with page and page_size; out-of-range values are 422', async () => {
    await api.post('/api/v1/boards/ideas/posts', { title: 'Second' })
    // Two posts, each an instant e-mail, an in-app notification and a digest row.
    await eventually(async () => (await ws.owner.get(feed())).body.total >= 6)
    const first = await ws.owner.get(`${feed()}?page=1&page_size=4`)
    expect(first.body).toMatchObject({ page: 1, page_size: 4, total: 6, total_pages: 2 })
    expect(first.body.items).toHaveLength(4)
    expect(first.body.items[0].subject).toBe('New post: Second')
    expect((await ws.owner.get(`${feed()}?page=2&page_size=4`)).body.items).toHaveLength(2)
    expect((await ws.owner.get(feed())).body.page_size).toBe(50)
    expect((await api.get(feed())).body.total).toBe(6)
    for (const query of ['page=0', 'page_size=0', 'page_size=101', 'page=x', 'limit=5']) expect((await ws.owner.get(`${feed()}?${query}`)).status).toBe(422)
  })

  test('the fan-out: one row per enabled subscription, a digest held for its hour; a disabled subscription and another workspace get nothing', async () => {
    const disabled = await member.client.post(subs(), { events: ['post.created'], channel: 'in_app' })
    expect(disabled.status).toBe(201)
    expect((await member.client.patch(`${subs()}/${disabled.body.id}`, { enabled: false })).status).toBe(200)
    const post = await api.post('/api/v1/boards/ideas/posts', { title: 'Fanned out' })
    expect(post.status).toBe(201)
    const rows = await eventually(async () => {
      const found = await h.db.select().from(notificationEvents).where(sql`${notificationEvents.data} -> 'post' ->> 'id' = ${post.body.id}`)
      return found.length === 3 && found
    })
    // In server/lib/ids.ts's format, each its own.
    expect(rows.every((row) => /^ntf_[0-9a-z]{25}$/.test(row.id))).toBe(true)
    expect(new Set(rows.map((row) => row.id)).size).toBe(3)
    // Only the owner's three subscriptions: not the member's disabled one, not the other workspace's owner's.
    expect(rows.map((row) => [row.workspaceId, row.userId])).toEqual(rows.map(() => [ws.id, ws.ownerId]))
    const digest = rows.find((row) => row.digest)!
    expect(digest).toMatchObject({ emailStatus: 'pending', subject: 'New post: Fanned out', data: expect.objectContaining({ post: expect.objectContaining({ id: post.body.id }) }) })
    expect(digest.digestAt!.getTime()).toBeGreaterThan(Date.now())
    expect(digest.emailLeaseUntil!.getTime()).toBe(digest.digestAt!.getTime())
    expect(rows.find((row) => row.channel === 'in_app')).toMatchObject({ emailStatus: null, digestAt: null, emailLeaseUntil: null })
    expect((await member.client.delete(`${subs()}/${disabled.body.id}`)).status).toBe(204)
  })

  test('create returns the DNS records; pending until every record is found, then verified', async () => {
    // The domain routes need the Business plan; set here so the case does not lean on the plan test's side effect.
    await setSubscription(h, ws.id, { plan: 'business' })
    const created = await ws.owner.post(domainPath(), { domain: 'Mail.Acme-Example.com' })
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({ domain, status: 'pending', from_address: `notifications@${domain}`, verified_at: null })
    const records = Object.fromEntries(created.body.records.map((record: any) => [record.purpose, record]))
    expect(records.spf).toMatchObject({ type: 'TXT', name: domain, value: 'v=spf1 include:_spf.localhost ~all', verified: false })
    expect(records.dkim.type).toBe('TXT')
    expect(records.dkim.name).toMatch(new RegExp(`^chorus[a-z0-9]{6}\\._domainkey\\.${domain.replace(/\./g, '\\.')}$`))
    expect(records.dkim.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/)
    expect(records.return_path).toMatchObject({ type: 'CNAME', name: `bounces.${domain}`, value: 'bounces.localhost' })
    expect((await ws.owner.post(domainPath(), { domain: 'other.example.com' })).status).toBe(409)
    await setSubscription(h, other.id, { plan: 'business' })
    expect((await other.owner.post(domainPath(other.slug), { domain })).status).toBe(409)

    expect((await ws.owner.get(domainPath())).body).toMatchObject({ status: 'pending', records: expect.arrayContaining([expect.objectContaining({ verified: false })]) })
    dns.records.TXT.set(domain, ['some-other=1', records.spf.value])
    const partial = await ws.owner.get(domainPath())
    expect(partial.body.status).toBe('pending')
    expect(partial.body.records.map((record: any) => [record.purpose, record.verified])).toEqual([['spf', true], ['dkim', false], ['return_path', false]])
    expect(partial.body.last_checked_at).not.toBeNull()
    dns.records.TXT.set(records.dkim.name, [records.dkim.value])
    dns.records.CNAME.set(`bounces.${domain}`, 'bounces.localhost')
    const verified = await ws.owner.get(domainPath())
    expect(verified.body.status).toBe('verified')
    expect(verified.body.verified_at).not.toBeNull()
    expect(verified.body.records.every((record: any) => record.verified)).toBe(true)
  })

  test('notification e-mail from a verified domain is DKIM-signed and verifies against the published key', async () => {
    const smtp = await startSmtp()
    const defaultMail = h.ctx.mail
    h.ctx.mail = createMailer({ ...h.ctx.config, smtpUrl: smtp.url }, h.ctx.database.sql, h.ctx.log)
    try {
      await api.post('/api/v1/boards/ideas/posts', { title: 'Signed' })
      const mail = await smtp.waitFor(ownerEmail())
      expect(mail.raw).toMatch(new RegExp(`^From: "Workspace ${ws.slug}" <notifications@${domain.replace(/\./g, '\\.')}>`, 'm'))
      expect(mail.raw).toMatch(/^DKIM-Signature: /m)
      const resolver = new Resolver()
      resolver.setServers([dns.address])
      // Bun's resolveTxt hands back the 255-byte strings of one record as separate records; rejoin the key record.
      const txt = async (name: string) => [[(await resolver.resolveTxt(name)).flat().join('')]]
      const result = await dkimVerify(Buffer.from(mail.raw), { resolver: (name: string, type: string) => (type === 'TXT' ? txt(name) : resolver.resolve(name, type as 'A')) })
      expect(result.results[0]).toMatchObject({ signingDomain: domain, status: { result: 'pass' } })
    } finally {
      h.ctx.mail = defaultMail
      await smtp.close()
    }
  })

  test('delete returns mail to the default sender', async () => {
    expect((await ws.owner.delete(domainPath())).status).toBe(204)
    expect((await ws.owner.get(domainPath())).status).toBe(404)
    expect((await ws.owner.delete(domainPath())).status).toBe(404)
  })
})

describe('daily digest', () => {
  test('a new workspace\'s owner gets its new posts as one e-mail at NOTIFY_DIGEST_HOUR, and can switch to one at once', async () => {
    const fresh = await workspaceFixture(h)
    await boardFixture(h, fresh.id, 'ideas')
    const key = h.client({ authorization: `Bearer ${await fresh.key()}` })
    const owner = `owner-${fresh.slug}@example.com`
    for (const title of ['Dark mode', 'CSV export']) expect((await key.post('/api/v1/boards/ideas/posts', { title })).status).toBe(201)
    const rows = () => h.db.select().from(notificationEvents).where(eq(notificationEvents.workspaceId, fresh.id))
    // Each row is written scheduled for the next digest time (and wakes no mailer); nothing is sent yet.
    const scheduled = await eventually(async () => { const found = await rows(); return found.length === 2 && found.every((row) => row.digestAt) && found })
    const next = nextDigestAt(new Date(), 8).toISOString()
    for (const row of scheduled) {
      expect(row).toMatchObject({ digest: true, channel: 'email', emailStatus: 'pending', eventType: 'post.created' })
      expect([row.digestAt!.toISOString(), row.emailLeaseUntil!.toISOString()]).toEqual([next, next])
    }
    const notificationMail = () => h.db.select().from(emailOutbox).where(and(eq(emailOutbox.to, owner), like(emailOutbox.subject, `[Workspace ${fresh.slug}]%`)))
    expect(await notificationMail()).toEqual([])

    // The digest hour comes (the rows' time moved, and the mailer woken as a new row would wake it).
    await h.db.update(notificationEvents).set({ digestAt: sql`now() - interval '1 second'`, emailLeaseUntil: sql`now() - interval '1 second'` }).where(eq(notificationEvents.workspaceId, fresh.id))
    await h.db.execute(sql`select pg_notify('chorus_work_notification_events', '')`)
    await eventually(async () => (await rows()).every((row) => row.emailStatus === 'sent'))
    const mails = await notificationMail()
    expect(mails).toHaveLength(1)
    expect(mails[0]!.subject).toBe(`[Workspace ${fresh.slug}] Your daily digest: 2 new posts`)
    const postIds = (await h.db.select().from(posts).where(eq(posts.workspaceId, fresh.id)).orderBy(posts.createdAt)).map((post) => post.id)
    expect(mails[0]!.text).toContain(`- New post: Dark mode\n  http://localhost:3000/dashboard/${fresh.slug}/posts/${postIds[0]}\n- New post: CSV export\n  http://localhost:3000/dashboard/${fresh.slug}/posts/${postIds[1]}`)

    // The member prefers each one at once.
    const [digest] = (await fresh.owner.get(subs(fresh.slug))).body
    const switched = await fresh.owner.patch(`${subs(fresh.slug)}/${digest.id}`, { delivery: 'instant' })
    expect(switched.status).toBe(200)
    expect(switched.body).toMatchObject({ id: digest.id, delivery: 'instant', enabled: true })
    await key.post('/api/v1/boards/ideas/posts', { title: 'Keyboard shortcuts' })
    await eventually(async () => (await h.db.select().from(emailOutbox).where(and(eq(emailOutbox.to, owner), eq(emailOutbox.subject, `[Workspace ${fresh.slug}] New post: Keyboard shortcuts`)))).length === 1)
  })
})

describe('errors', () => {
  test.each([
    ['an unknown event kind', { events: ['post.exploded'], channel: 'email' }],
    ['no events', { events: [], channel: 'email' }],
    ['an unknown channel', { events: ['post.created'], channel: 'sms' }],
    ['an unknown field', { events: ['post.created'], channel: 'email', user_id: 'usr_x' }],
    ['an unknown delivery', { events: ['post.created'], channel: 'email', delivery: 'weekly' }],
    ['a daily in-app subscription', { events: ['post.created'], channel: 'in_app', delivery: 'daily' }],
  ])('%s is 422', async (_, body) => {
    const res = await ws.owner.post(subs(), body)
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('VALIDATION_ERROR')
  })

  test('a change needs something to change, a known delivery, and e-mail for a digest; nothing is half-written', async () => {
    const [inApp] = (await ws.owner.get(subs())).body.filter((sub: any) => sub.channel === 'in_app')
    for (const body of [{}, { delivery: 'weekly' }, { enabled: 'yes' }, { delivery: 'daily' }]) {
      const res = await ws.owner.patch(`${subs()}/${inApp.id}`, body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
    }
    expect((await ws.owner.get(subs())).body.find((sub: any) => sub.id === inApp.id)).toMatchObject({ delivery: 'instant', enabled: true })
    // The owner already has a daily e-mail subscription: turning the instant one daily would make two.
    const [instant] = (await ws.owner.get(subs())).body.filter((sub: any) => sub.channel === 'email' && sub.delivery === 'instant')
    expect((await ws.owner.patch(`${subs()}/${instant.id}`, { delivery: 'daily' })).status).toBe(409)
  })
})

describe('security', () => {
  test("members see and change only their own; a key sees and toggles every member's but cannot create", async () => {
    const mine = await member.client.post(subs(), { events: ['comment.created'], channel: 'in_app' })
    expect(mine.status).toBe(201)
    expect((await member.client.get(subs())).body.map((s: any) => s.id)).toEqual([mine.body.id])
    const ownersEmail = (await ws.owner.get(subs())).body.find((s: any) => s.channel === 'email')
    expect((await member.client.patch(`${subs()}/${ownersEmail.id}`, { enabled: false })).status).toBe(404)
    expect((await member.client.patch(`${subs()}/${ownersEmail.id}`, { delivery: 'daily' })).status).toBe(404)
    expect((await member.client.delete(`${subs()}/${ownersEmail.id}`)).status).toBe(404)

    const all = await api.get(subs())
    expect(all.status).toBe(200)
    expect(new Set(all.body.map((s: any) => s.user_id))).toEqual(new Set([ws.ownerId, member.userId]))
    const toggled = await api.patch(`${subs()}/${mine.body.id}`, { enabled: false })
    expect(toggled.body.enabled).toBe(false)
    const created = await api.post(subs(), { events: ['post.created'], channel: 'email' })
    expect(created.status).toBe(403)
    expect(created.body.code).toBe('DASHBOARD_ONLY')
    expect((await api.patch(`${subs()}/${mine.body.id}`, { enabled: 'yes' })).status).toBe(422)
    expect((await api.delete(`${subs()}/${mine.body.id}`)).status).toBe(204)
    expect((await api.delete(`${subs()}/${mine.body.id}`)).status).toBe(404)
  })

  test('scopes and other workspaces', async () => {
    const narrow = h.client({ authorization: `Bearer ${await ws.key(['posts:read'])}` })
    expect((await narrow.get(subs())).body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'notifications:read' })
    expect((await narrow.get(feed())).body.required_scope).toBe('notifications:read')
    const reader = h.client({ authorization: `Bearer ${await ws.key(['notifications:read'])}` })
    expect((await reader.patch(`${subs()}/nsub_x`, { enabled: false })).body.required_scope).toBe('notifications:write')
    expect((await api.get(subs(other.slug))).status).toBe(404)
    const theirs = await other.owner.post(subs(other.slug), { events: ['post.created'], channel: 'email' })
    expect((await api.patch(`${subs()}/${theirs.body.id}`, { enabled: false })).status).toBe(404)
  })

  test('Business plan, owner only, dashboard only', async () => {
    // Back to the default plan: the happy cases above moved this workspace to Business.
    await setSubscription(h, ws.id, { plan: 'startup' })
    const below = await ws.owner.post(domainPath(), { domain })
    expect(below.status).toBe(403)
    expect(below.body.code).toBe('PLAN_REQUIRED')
    expect((await ws.owner.get(domainPath())).body.code).toBe('PLAN_REQUIRED')
    await setSubscription(h, ws.id, { plan: 'business' })
    expect((await member.client.post(domainPath(), { domain })).body.code).toBe('OWNER_ONLY')
    const admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
    expect((await admin.client.get(domainPath())).body.code).toBe('OWNER_ONLY')
    expect((await api.post(domainPath(), { domain })).body.code).toBe('DASHBOARD_ONLY')
    for (const bad of ['localhost', 'not a domain', '-x.example.com', 'a..b.com', '127.0.0.1']) expect((await ws.owner.post(domainPath(), { domain: bad })).status).toBe(422)
    expect((await ws.owner.get(domainPath())).status).toBe(404)
  })
})
