import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { comments, endUsers, inboundEmails, posts } from '../../server/db/schema/index.ts'
import { createMailer } from '../../server/lib/mail.ts'
import { startEventDispatcher } from '../../server/background/dispatcher.ts'
import { startMailer } from '../../server/background/mailer.ts'
import { startWebhookRunner, type WebhookRunner } from '../../server/background/delivery-runner.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { startSmtp } from '../helpers/smtp.ts'

const DOMAIN = 'in.chorus.test'
let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let api: TestClient
let member: { client: TestClient; userId: string }
let admin: { client: TestClient; userId: string }

const fixture = (name: string, fill: Record<string, string> = {}) => {
  let text = require('node:fs').readFileSync(`${import.meta.dir}/../fixtures/email/${name}.eml`, 'utf8') as string
  for (const [key, value] of Object.entries({ TO: 'intake', ...fill })) text = text.replaceAll(`{{${key}}}`, value)
  return text
}

async function tokenOf(workspace: WorkspaceFixture) {
  return (await workspace.owner.get(`/api/v1/workspaces/${workspace.slug}`)).body.email_intake_token as string
}

async function deliver(token: string, message: string, contentType = 'message/rfc822') {
  const response = await h.app.handle(new Request(`${BASE}/api/v1/inbound/email/${token}`, { method: 'POST', headers: { 'content-type': contentType }, body: message }))
  return { status: response.status, body: (await response.json()) as any }
}

const postsOf = (workspaceId: string) => h.db.select().from(posts).where(eq(posts.workspaceId, workspaceId))

beforeAll(async () => {
  h = await startHarness({ INBOUND_EMAIL_DOMAIN: DOMAIN, INBOUND_TRUSTED_AUTHSERV_IDS: 'mx.chorus.test' })
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'internal', true)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, other.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
  admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
}, 60_000)
afterAll(() => h.close())

describe('happy', () => {
  test('owners and admins see the intake token; members and keys see null', async () => {
    const token = await tokenOf(ws)
    expect(token).toMatch(/^[0-9a-f]{32}$/)
    expect((await admin.client.get(`/api/v1/workspaces/${ws.slug}`)).body.email_intake_token).toBe(token)
    expect((await member.client.get(`/api/v1/workspaces/${ws.slug}`)).body.email_intake_token).toBeNull()
    const viaKey = await api.get(`/api/v1/workspaces/${ws.slug}`)
    expect(viaKey.status).toBe(200)
    expect(viaKey.body.email_intake_token).toBeNull()
    expect(await tokenOf(other)).not.toBe(token)
  })

  test('a plain message becomes a post on the oldest public board, by the sender as end user', async () => {
    const res = await deliver(await tokenOf(ws), fixture('plain'))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ outcome: 'post', comment_id: null, reason: null })
    const post = await api.get(`/api/v1/posts/${res.body.post_id}`)
    expect(post.body).toMatchObject({ title: 'Please add a dark mode', board: 'ideas' })
    expect(post.body.body).toBe('The dashboard is too bright at night.\nA dark theme would help.')
    expect(post.body.author).toMatchObject({ type: 'end_user', name: 'Ada Lovelace', email: 'ada@example.com' })
    const [row] = await h.db.select().from(inboundEmails).where(eq(inboundEmails.postId, res.body.post_id))
    expect(row).toMatchObject({ workspaceId: ws.id, messageId: '<plain-1@mail.example.com>' })
  })

  test('the same Message-ID again is a duplicate and changes nothing', async () => {
    const before = (await postsOf(ws.id)).length
    const res = await deliver(await tokenOf(ws), fixture('plain'))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ outcome: 'duplicate', post_id: null, comment_id: null, reason: null })
    expect((await postsOf(ws.id)).length).toBe(before)
  })

  test('an HTML-only message is posted as its text', async () => {
    const res = await deliver(await tokenOf(ws), fixture('html-only'))
    expect(res.body.outcome).toBe('post')
    const [post] = await h.db.select().from(posts).where(eq(posts.id, res.body.post_id))
    expect(post!.title).toBe('Export to CSV')
    expect(post!.body).toContain('We need CSV export of all posts.')
    expect(post!.body).not.toContain('<')
  })

  test('an RFC 2047 subject and sender name and a quoted-printable body are decoded', async () => {
    const res = await deliver(await tokenOf(ws), fixture('rfc2047'))
    const [post] = await h.db.select().from(posts).where(eq(posts.id, res.body.post_id))
    expect(post!.title).toBe('Grüße aus München 🍂')
    expect(post!.body).toBe('Bitte mehr Sprachen, z.B. Deutsch – danke!')
    const [author] = await h.db.select().from(endUsers).where(eq(endUsers.id, post!.authorEndUserId!))
    expect(author).toMatchObject({ email: 'juergen@example.de', name: 'Jürgen Müller' })
  })

  test.each([
    ['an Outlook auto-reply', 'outlook-auto-reply', 'auto_reply'],
    ['a Gmail vacation reply', 'gmail-vacation', 'auto_submitted'],
    ['a delivery status notification', 'dsn', 'bounce'],
    ['mailing-list mail', 'list', 'list_mail'],
  ])('%s is dropped without a post', async (_, name, reason) => {
    const before = (await postsOf(ws.id)).length
    const res = await deliver(await tokenOf(ws), fixture(name, { IN_REPLY_TO: '<whatever@example.com>' }))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ outcome: 'dropped', post_id: null, comment_id: null, reason })
    expect((await postsOf(ws.id)).length).toBe(before)
  })

  test('replies to a notification e-mail are threaded as comments (the recipient as member, others as end users)', async () => {
    const smtp = await startSmtp()
    const defaultMail = h.ctx.mail
    h.ctx.mail = createMailer({ ...h.ctx.config, smtpUrl: smtp.url }, h.ctx.database.sql, h.ctx.log)
    let runner: WebhookRunner | undefined
    let mailer: ReturnType<typeof startMailer> | undefined
    let dispatcher: ReturnType<typeof startEventDispatcher> | undefined
    try {
      expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/notifications/subscriptions`, { events: ['post.created'], channel: 'email' })).status).toBe(201)
      // The background work of a server process: fan-out, deliveries, mail.
      dispatcher = startEventDispatcher({ db: h.database.sql, log: h.ctx.log, listenForWork: h.database.listenForWork })
      runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl })
      await runner.ready()
      mailer = startMailer(h.ctx)
      const created = await api.post('/api/v1/boards/ideas/posts', { title: 'Keyboard shortcuts' })
      expect(created.status).toBe(201)
      const ownerEmail = `owner-${ws.slug}@example.com`
      // Events from earlier tests are fanned out too once the runner starts: wait for this post's mail.
      let mail = await smtp.waitFor(ownerEmail, 15_000)
      while (!mail.decoded.includes('Keyboard shortcuts')) mail = await smtp.waitFor(ownerEmail, 15_000)
      const messageId = /^Message-ID: (<ntf_[0-9a-z]+@in\.chorus\.test>)/im.exec(mail.raw)?.[1]
      expect(messageId).toBeDefined()
      const token = await tokenOf(ws)
      expect(mail.raw).toMatch(new RegExp(`^Reply-To: ${token}@${DOMAIN.replace(/\./g, '\\.')}`, 'm'))
      expect(mail.raw).toMatch(/^Auto-Submitted: auto-generated/m)

      // The receiving server vouches for the sender (docs/security.md); an unauthenticated reply would be an end user's.
      const fromOwner = `Authentication-Results: mx.chorus.test; dmarc=pass header.from=example.com\r\n${fixture('quoted-reply', { IN_REPLY_TO: messageId! }).replace('From: Ada Lovelace <ada@example.com>', `From: Owner <${ownerEmail}>`)}`
      const reply = await deliver(token, fromOwner)
      expect(reply.body).toMatchObject({ outcome: 'comment', post_id: created.body.id })
      const comment = await api.get(`/api/v1/comments/${reply.body.comment_id}`)
      expect(comment.body.body).toBe('Yes, and please make it follow the system setting.')
      expect(comment.body.author).toMatchObject({ type: 'team', id: ws.ownerId })
      expect(comment.body.internal).toBe(false)

      // Someone else (the notification was forwarded, or the address spoofed) comments as an end user.
      const fromOther = fixture('quoted-reply', { IN_REPLY_TO: messageId! }).replace('<reply-1@mail.example.com>', '<reply-2@mail.example.com>')
      const second = await deliver(token, fromOther)
      expect(second.body).toMatchObject({ outcome: 'comment', post_id: created.body.id })
      const [row] = await h.db.select().from(comments).where(eq(comments.id, second.body.comment_id))
      expect(row!.authorUserId).toBeNull()
      expect(row!.authorEndUserId).not.toBeNull()

      // A reply to the reply names our thread only through References: still the same post.
      const deeper = fixture('quoted-reply', { IN_REPLY_TO: '<reply-2@mail.example.com>' }).replace('<reply-1@mail.example.com>', '<reply-3@mail.example.com>')
      expect((await deliver(token, deeper)).body).toMatchObject({ outcome: 'comment', post_id: created.body.id })
    } finally {
      await mailer?.stop()
      await runner?.stop()
      await dispatcher?.stop()
      h.ctx.mail = defaultMail
      await smtp.close()
    }
  }, 60_000)
})

describe('errors', () => {
  test('an unknown or malformed token is 404', async () => {
    for (const token of ['0'.repeat(32), 'not-a-token', 'ABCDEF0123456789ABCDEF0123456789']) {
      const res = await deliver(token, fixture('plain'))
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', request_id: expect.any(String) })
    }
  })

  test('a rotated token is refused at once; the new one works', async () => {
    const old = await tokenOf(ws)
    const rotated = await admin.client.post(`/api/v1/workspaces/${ws.slug}/email-intake/rotate-token`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.email_intake_token).toMatch(/^[0-9a-f]{32}$/)
    expect(rotated.body.email_intake_token).not.toBe(old)
    expect(rotated.body.email_intake_address).toBe(`${rotated.body.email_intake_token}@${DOMAIN}`)
    expect(await tokenOf(ws)).toBe(rotated.body.email_intake_token)
    const message = fixture('plain').replace('<plain-1@mail.example.com>', '<plain-rotated@mail.example.com>')
    expect((await deliver(old, message)).status).toBe(404)
    expect((await deliver(rotated.body.email_intake_token, message)).body.outcome).toBe('post')
  })

  test('another content type is 415', async () => {
    for (const type of ['application/json', 'text/plain']) {
      const res = await deliver(await tokenOf(ws), fixture('plain'), type)
      expect(res.status).toBe(415)
      expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE')
    }
  })

  test('a message over 2 MiB is 413, with or without Content-Length, and nothing is posted', async () => {
    const before = (await postsOf(ws.id)).length
    const big = fixture('plain').replace('<plain-1@mail.example.com>', '<big@mail.example.com>') + 'x'.repeat(2 * 1024 * 1024)
    const sized = await deliver(await tokenOf(ws), big)
    expect(sized.status).toBe(413)
    expect(sized.body.code).toBe('PAYLOAD_TOO_LARGE')
    const bytes = new TextEncoder().encode(big)
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 64 * 1024) controller.enqueue(bytes.slice(offset, offset + 64 * 1024))
        controller.close()
      },
    })
    const streamed = await h.app.handle(new Request(`${BASE}/api/v1/inbound/email/${await tokenOf(ws)}`, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: chunked, duplex: 'half' } as RequestInit))
    expect(streamed.status).toBe(413)
    expect((await postsOf(ws.id)).length).toBe(before)
  })

  test('a workspace without boards answers 409 (the provider bounces it to the sender)', async () => {
    const empty = await workspaceFixture(h)
    const res = await deliver(await tokenOf(empty), fixture('plain'))
    expect(res.status).toBe(409)
    expect(res.body.code).toBe('CONFLICT')
    expect(await h.db.select().from(inboundEmails).where(eq(inboundEmails.workspaceId, empty.id))).toEqual([])
  })
})

describe('security', () => {
  test('rotation is for admins in the dashboard: members 403, keys 403, strangers 404', async () => {
    const path = `/api/v1/workspaces/${ws.slug}/email-intake/rotate-token`
    const before = await tokenOf(ws)
    expect((await member.client.post(path)).body.code).toBe('FORBIDDEN')
    const viaKey = await api.post(path)
    expect(viaKey.status).toBe(403)
    expect(viaKey.body.code).toBe('DASHBOARD_ONLY')
    expect((await other.owner.post(path)).status).toBe(404)
    expect(await tokenOf(ws)).toBe(before)
  })

  test("a reply naming another workspace's notification is not threaded there", async () => {
    const [foreign] = await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id)).limit(1)
    // Even a real post id of another workspace, dressed as one of our Message-IDs, threads nothing.
    const message = fixture('quoted-reply', { IN_REPLY_TO: `<ntf_${'0'.repeat(25)}@${DOMAIN}>` }).replace('<reply-1@mail.example.com>', `<${foreign!.id}@x>`)
    const res = await deliver(await tokenOf(other), message)
    expect(res.body.outcome).toBe('post')
    const [created] = await h.db.select().from(posts).where(and(eq(posts.id, res.body.post_id), eq(posts.workspaceId, other.id)))
    expect(created).toBeDefined()
  })

  test('mail carrying our own Message-ID domain (a loop) is dropped', async () => {
    const looped = fixture('plain').replace('<plain-1@mail.example.com>', `<ntf_loop@${DOMAIN}>`)
    expect((await deliver(await tokenOf(ws), looped)).body).toMatchObject({ outcome: 'dropped', reason: 'own_mail' })
  })
})
