// Security round 3, part B (issue 41): end-user identity, logs and idempotency across a crash.
// Each test reproduces one finding of the audit; docs/security.md#end-user-identity states the rules.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import { seedDemo } from '../../scripts/seed.ts'
import type { Database } from '../../server/db/client.ts'
import { endUsers, idempotencyKeys, posts, votes } from '../../server/db/schema/index.ts'
import { getConfig } from '../../server/config.ts'
import { createMailer } from '../../server/lib/mail.ts'
import { customerToken } from '../helpers/end-users.ts'
import { boardFixture, workspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, TestClient, TEST_SECRET, type Harness } from '../helpers/harness.ts'
import { lastOutboxMail } from '../helpers/session.ts'
import { freshPostgresDatabase, startServerProcess, type ServerProcess } from '../helpers/server-process.ts'
import { startSmtp, tokenFromMail } from '../helpers/smtp.ts'

describe('idempotency across a crash (real server processes on PostgreSQL)', () => {
  let database: Database
  let databaseUrl: string
  let apiKey: string
  let drop: () => Promise<void>
  const children = new Set<ReturnType<typeof Bun.spawn>>()

  beforeAll(async () => {
    const fresh = await freshPostgresDatabase('chorus_idem', 'The idempotency crash tests')
    ;({ database, url: databaseUrl, drop } = fresh)
    apiKey = (await seedDemo(database.db, BASE)).apiKey!
  }, 60_000)
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL')
    await drop?.()
  })

  const start = (crashAt?: string) => startServerProcess({
    DATABASE_URL: databaseUrl, SECRET_KEY: TEST_SECRET, BASE_URL: BASE, RATE_LIMIT_PER_KEY: '100000', WEB_CONCURRENCY: '1',
    ...(crashAt ? { CHORUS_TEST_CRASH_AT: crashAt } : {}),
  }, children)
  const send = (server: ServerProcess, key: string, title: string) =>
    fetch(`http://127.0.0.1:${server.port}/api/v1/boards/ideas/posts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ title }),
    })
  const postsTitled = async (title: string) => (await database.db.select({ id: posts.id }).from(posts).where(eq(posts.title, title))).length

  // Each named point of a keyed write: before the handler, inside the effect's transaction (before its
  // commit), after the commit and before the stored answer, after the answer. The process dies there
  // (SIGKILL), a new one starts, the lease runs out, and the client retries with the same key.
  const cases: { point: string; retry: number; replayed?: boolean }[] = [
    { point: 'idempotency:after-claim', retry: 201 },
    { point: 'idempotency:in-transaction', retry: 201 },
    { point: 'idempotency:before-answer', retry: 409 },
    { point: 'idempotency:after-answer', retry: 201, replayed: true },
  ]
  for (const { point, retry, replayed } of cases) {
    test(`killed at ${point}: exactly one post for the key`, async () => {
      const key = `crash-${point}`
      const title = `Crash test ${point}`
      const doomed = await start(point)
      const lost = await send(doomed, key, title).then((response) => response.status, () => 'connection lost')
      expect(lost).toBe('connection lost')
      expect(await doomed.child.exited).not.toBe(0)

      const server = await start()
      // The dead request's lease (60 s) has run out by the time the client retries.
      await database.db.update(idempotencyKeys).set({ createdAt: sql`now() - interval '2 minutes'` }).where(eq(idempotencyKeys.key, key))
      const again = await send(server, key, title)
      expect(again.status).toBe(retry)
      const body = await again.json()
      if (retry === 409) expect(body.code).toBe('CONFLICT')
      else expect(body.title).toBe(title)
      expect(again.headers.get('idempotent-replayed')).toBe(replayed ? 'true' : null)
      // And once more, now that the key is settled either way.
      expect((await send(server, key, title)).status).toBe(retry)
      expect(await postsTitled(title)).toBe(1)
      server.child.kill('SIGTERM')
      await server.child.exited
    }, 90_000)
  }
})

/** A client of a real server process, on BASE's paths. */
function processClient(port: number, defaults: Record<string, string> = {}) {
  return new TestClient((request) => {
    const url = new URL(request.url)
    return fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body: request.body })
  }, defaults)
}

describe('logs carry no e-mail address and no name (finding 7)', () => {
  test('a full lifecycle on a real server process: none of the addresses or names it used is in its log', async () => {
    const fresh = await freshPostgresDatabase('chorus_logs', 'The log test')
    const smtp = await startSmtp()
    const children = new Set<ReturnType<typeof Bun.spawn>>()
    try {
      const server = await startServerProcess({ DATABASE_URL: fresh.url, SECRET_KEY: TEST_SECRET, BASE_URL: BASE, SMTP_URL: smtp.url, LOG_LEVEL: 'debug', WEB_CONCURRENCY: '1', RATE_LIMIT_PER_IP: '100000' }, children)
      const people = {
        owner: { email: 'ada.lovelace@owner-logs.example', name: 'Augusta Ada King' },
        member: { email: 'charles.babbage@member-logs.example', name: 'Charles Babbage' },
        visitor: { email: 'grace.hopper@visitor-logs.example' },
        identified: { email: 'katherine.johnson@customer-logs.example', name: 'Katherine Coleman Johnson' },
      }
      const signIn = async (client: TestClient, email: string) => {
        expect((await client.post('/api/v1/auth/magic-link', { email })).status).toBe(200)
        const verified = await client.post('/api/v1/auth/magic-link/verify', { token: tokenFromMail(await smtp.waitFor(email)) })
        expect(verified.status).toBe(200)
        return verified.body as { id: string }
      }
      const owner = processClient(server.port)
      await signIn(owner, people.owner.email)
      expect((await owner.patch('/api/v1/user/profile', { name: people.owner.name })).status).toBe(200)
      const slug = 'logs-ws'
      expect((await owner.post('/api/v1/workspaces', { name: 'Log Test Inc', slug })).status).toBe(201)
      const team = processClient(server.port, { 'x-workspace': slug })
      for (const [name, value] of owner.jar) team.jar.set(name, value)
      expect((await team.post(`/api/v1/workspaces/${slug}/members`, { email: people.member.email, role: 'member' })).status).toBe(201)
      await smtp.waitFor(people.member.email)
      const member = processClient(server.port)
      const memberUser = await signIn(member, people.member.email)
      expect((await member.patch('/api/v1/user/profile', { name: people.member.name })).status).toBe(200)
      expect((await member.post(`/api/v1/workspaces/${slug}/members/accept`)).status).toBe(200)

      expect((await team.post(`/api/v1/workspaces/${slug}/boards`, { name: 'Ideas', slug: 'ideas' })).status).toBe(201)
      const post = await team.post('/api/v1/boards/ideas/posts', { title: 'Dark mode', body: 'Please' })
      expect(post.status).toBe(201)
      expect((await team.post(`/api/v1/posts/${post.body.id}/comments`, { body: 'On it' })).status).toBe(201)
      expect((await team.post(`/api/v1/posts/${post.body.id}/votes`, { email: 'voter.named@vouched-logs.example' })).status).toBe(200)

      // An anonymous visitor writes, then confirms by the link in the e-mail.
      const visitor = processClient(server.port)
      const anonymous = await visitor.post(`/api/v1/public/${slug}/posts/${post.body.id}/votes`, { email: people.visitor.email })
      expect(anonymous.status).toBeLessThan(300)
      const confirmation = await smtp.waitFor(people.visitor.email)
      const link = new URL(/https?:\/\/\S+visitors\/confirm\?token=[\w-]+/.exec(confirmation.decoded)![0])
      expect((await visitor.get(`${link.pathname}${link.search}`)).status).toBe(200)

      // An identified end user with a name and an address in the customer's token.
      const secret = (await team.post(`/api/v1/workspaces/${slug}/jwt-config`, { algorithm: 'HS256' })).body.secret as string
      const identified = await visitor.post(`/api/v1/workspaces/${slug}/identify`, { token: await customerToken(secret, { claims: { sub: 'kj-1', ...people.identified } }) })
      expect(identified.status).toBe(200)
      expect((await visitor.post(`/api/v1/public/${slug}/posts/${post.body.id}/comments`, { body: 'Me too' }, { headers: { authorization: `Bearer ${identified.body.session_token}` } })).status).toBe(201)

      // Deletion: the member erases their account, the owner deletes the workspace.
      expect((await team.delete(`/api/v1/workspaces/${slug}/members/${memberUser.id}`)).status).toBe(204)
      expect((await member.delete('/api/v1/user/account')).status).toBeLessThan(300)
      expect((await team.delete(`/api/v1/workspaces/${slug}`)).status).toBeLessThan(300)
      await Bun.sleep(300)

      server.child.kill('SIGTERM')
      await server.child.exited
      const log = `${server.stdout()}\n${await server.stderr}`
      expect(log).toContain('"msg":"email sent"')
      expect(log).toContain('"msg":"request"')
      const used = [...Object.values(people).flatMap((person) => Object.values(person)), 'voter.named@vouched-logs.example']
      for (const value of used) {
        expect(log.toLowerCase()).not.toContain(value.toLowerCase())
        // Nor the part before the @, which is often the person's name.
        if (value.includes('@')) expect(log.toLowerCase()).not.toContain(value.split('@')[0]!.toLowerCase())
      }
      expect(log).not.toMatch(/[\w.+-]+@[\w-]+\.[\w.-]+/)
    } finally {
      for (const child of children) child.kill('SIGKILL')
      await smtp.close()
      await fresh.drop()
    }
  }, 120_000)

  test('without SMTP the outbox line names the links only, never the address, subject or text', async () => {
    const lines: string[] = []
    const log = { debug: () => {}, warn: () => {}, error: () => {}, info: (msg: string, fields?: Record<string, unknown>) => void lines.push(JSON.stringify({ msg, ...fields })) }
    const fresh = await freshPostgresDatabase('chorus_outbox_log', 'The outbox log test')
    try {
      const mailer = createMailer(getConfig({ SECRET_KEY: TEST_SECRET, BASE_URL: BASE }), fresh.database.sql, log)
      await mailer.send({ to: 'dorothy.vaughan@outbox-logs.example', subject: 'Dorothy Vaughan, sign in', text: 'Hello Dorothy Vaughan: https://chorus.example/auth?token=abc' })
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain('https://chorus.example/auth?token=abc')
      expect(lines[0]).not.toContain('dorothy')
      expect(lines[0]).not.toContain('Dorothy')
    } finally {
      await fresh.drop()
    }
  }, 60_000)
})

describe('end-user writes on one harness', () => {
  let h: Harness
  beforeAll(async () => (h = await startHarness()), 60_000)
  afterAll(() => h.close())

  async function publicPost() {
    const ws = await workspaceFixture(h)
    await boardFixture(h, ws.id, 'ideas')
    const created = await ws.owner.post('/api/v1/boards/ideas/posts', { title: 'Dark mode' }, { headers: { 'x-workspace': ws.slug } })
    expect(created.status).toBe(201)
    return { ws, post: created.body as { id: string }, votes: `/api/v1/public/${ws.slug}/posts/${created.body.id}/votes` }
  }
  const voteCount = async (postId: string) => (await database(h).select({ votes: posts.voteCount }).from(posts).where(eq(posts.id, postId)))[0]!.votes
  const database = (harness: Harness) => harness.db

  test('a write without the visitor\'s session adds a vote for an address, never removes one (portal and widget)', async () => {
    const { ws, post, votes } = await publicPost()
    const owner = h.client()
    const cast = await owner.post(votes, { email: 'voter@example.com' })
    expect(cast.body).toEqual({ voted: true, votes: 1, verified: false })
    const ownSession = cast.headers.get('chorus-session-token')!

    // Someone else types the same (unconfirmed) address: the vote stays, the count too.
    const stranger = h.client()
    const again = await stranger.post(votes, { email: 'VOTER@example.com' })
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ voted: true, votes: 1, verified: false })
    expect(await voteCount(post.id)).toBe(1)
    // The session that write received is not the one that cast the vote: it cannot take it back either.
    const strangerSession = again.headers.get('chorus-session-token')!
    expect(strangerSession).not.toBe(ownSession)
    const withStrangerSession = await h.client({ authorization: `Bearer ${strangerSession}` }).post(votes, {})
    expect(withStrangerSession.body).toMatchObject({ voted: true, votes: 1 })
    // The portal's form without a session cookie is the same write path.
    const portal = await h.client().call('POST', `/portal/${ws.slug}/posts/${post.id}/vote`, { raw: new URLSearchParams({ email: 'voter@example.com' }), headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', origin: BASE } })
    expect(portal.status).toBe(200)
    expect(portal.body).toMatchObject({ voted: true, votes: 1 })
    expect(await voteCount(post.id)).toBe(1)

    // The session that cast it takes it back.
    const undo = await h.client({ authorization: `Bearer ${ownSession}` }).post(votes, {})
    expect(undo.body).toMatchObject({ voted: false, votes: 0 })
    expect(await voteCount(post.id)).toBe(0)
  })

  test('a confirmed identity takes back a vote whichever session cast it', async () => {
    const { ws, post, votes } = await publicPost()
    const cast = await h.client().post(votes, { email: 'confirmer@example.com' })
    expect(cast.body).toMatchObject({ voted: true, votes: 1 })
    const claim = await h.client().post(`/api/v1/public/${ws.slug}/visitors`, { email: 'confirmer@example.com' })
    expect(claim.status).toBe(202)
    const link = /https?:\/\/\S+visitors\/confirm\?token=[\w-]+/.exec((await lastOutboxMail(h, 'confirmer@example.com')).text)![0]
    expect((await h.client().get(new URL(link).pathname + new URL(link).search)).status).toBe(200)
    const polled = await h.client().get(`/api/v1/public/${ws.slug}/visitors/${claim.body.claim_id}`)
    expect(polled.status).toBe(200)
    const undo = await h.client({ authorization: `Bearer ${polled.body.session_token}` }).post(votes, {})
    expect(undo.body).toMatchObject({ voted: false, votes: 0, verified: true })
    expect(await voteCount(post.id)).toBe(0)
  })

  test('an anonymous write answers the same whether its address is confirmed or not, and a confirmed address is never written as (finding 6)', async () => {
    const ws = await workspaceFixture(h)
    await boardFixture(h, ws.id, 'ideas')
    const team = { headers: { 'x-workspace': ws.slug } }
    const teamPost = async (title: string) => (await ws.owner.post('/api/v1/boards/ideas/posts', { title }, team)).body.id as string
    // An address the team named is confirmed; the other one was never seen.
    const confirmed = 'known-customer@example.com'
    const fresh = 'first-visit@example.com'
    expect((await ws.owner.post(`/api/v1/posts/${await teamPost('Seen before')}/votes`, { email: confirmed }, team)).status).toBe(200)
    const [owner] = await h.db.select().from(endUsers).where(and(eq(endUsers.workspaceId, ws.id), eq(endUsers.email, confirmed)))
    expect(owner!.verifiedAt).not.toBeNull()

    const base = `/api/v1/public/${ws.slug}`
    const answers = async (email: string) => {
      const post = await h.client().post(`${base}/boards/ideas/posts`, { title: 'Same title', body: 'Same body', email })
      const vote = await h.client().post(`${base}/posts/${await teamPost(`Vote target ${email}`)}/votes`, { email })
      const comment = await h.client().post(`${base}/posts/${await teamPost(`Comment target ${email}`)}/comments`, { body: 'Same comment', email })
      return [post, vote, comment]
    }
    // Ids and times differ by nature; everything else (status, body, which headers) must not.
    const comparable = (res: { status: number; body: unknown; headers: Headers }) => ({
      status: res.status,
      body: JSON.stringify(res.body).replace(/\b[a-z]+_[0-9a-z]{20,}\b/g, '<id>').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>').replace(/Vote target \S+|Comment target \S+/g, '<title>'),
      headers: [...res.headers.keys()].filter((name) => !['content-length', 'date'].includes(name)).sort(),
    })
    const forConfirmed = await answers(confirmed)
    const forFresh = await answers(fresh)
    expect(forConfirmed.map((res) => res.status)).toEqual([201, 200, 201])
    expect(forConfirmed.map(comparable)).toEqual(forFresh.map(comparable))
    for (const answered of [forConfirmed, forFresh]) {
      for (const res of answered) expect(res.headers.get('chorus-session-token')).toMatch(/^ey/)
      // The first write of the day starts a claim (one e-mail a day per address), the others do not.
      expect(answered.map((res) => res.headers.get('chorus-claim-id') !== null)).toEqual([true, false, false])
    }

    // The confirmed customer authored nothing and cast no vote: the writes went to an address-less, unverified stand-in.
    expect(await h.db.select().from(posts).where(eq(posts.authorEndUserId, owner!.id))).toHaveLength(0)
    expect(await h.db.select().from(votes).where(eq(votes.endUserId, owner!.id))).toHaveLength(1)
    const [standIn] = await h.db.select().from(endUsers).innerJoin(posts, eq(posts.authorEndUserId, endUsers.id)).where(and(eq(posts.workspaceId, ws.id), eq(posts.id, forConfirmed[0]!.body.id)))
    expect(standIn!.end_users).toMatchObject({ email: null, verifiedAt: null })

    // The claim started for the confirmed address: its owner gets a link; opening it gives the browser that wrote a confirmed session.
    const link = /https?:\/\/\S+visitors\/confirm\?token=[\w-]+/.exec((await lastOutboxMail(h, confirmed)).text)![0]
    expect((await h.client().get(new URL(link).pathname + new URL(link).search)).status).toBe(200)
    const polled = await h.client().get(`${base}/visitors/${forConfirmed[0]!.headers.get('chorus-claim-id')}`)
    expect(polled.status).toBe(200)
    expect(polled.body).toMatchObject({ status: 'confirmed', end_user: { id: owner!.id, email: confirmed, verified: true } })
    // The session of the unconfirmed write keeps acting as the stand-in, never as the customer.
    const asStandIn = await h.client({ authorization: `Bearer ${forConfirmed[0]!.headers.get('chorus-session-token')}` }).post(`${base}/boards/ideas/posts`, { title: 'Still the stand-in' })
    expect(asStandIn.status).toBe(201)
    expect(asStandIn.body.verified).toBe(false)
  })

  test('no part of an e-mail address is shown in public: an anonymous author is "Anonymous", a member without a name "Team member"', async () => {
    const { ws, post } = await publicPost()
    const anonymous = await h.client().post(`/api/v1/public/${ws.slug}/boards/ideas/posts`, { title: 'Exports', email: 'visitor1@example.com' })
    expect(anonymous.status).toBe(201)
    expect(anonymous.body.author).toMatchObject({ type: 'end_user', name: 'Anonymous', email: null })
    const read = await h.client().get(`/api/v1/public/${ws.slug}/posts/${post.id}`)
    expect(read.body.author).toMatchObject({ type: 'member', name: 'Team member', email: null })
    for (const id of [anonymous.body.id, post.id]) {
      const page = await h.client().get(`/portal/${ws.slug}/posts/${id}`)
      expect(page.status).toBe(200)
      expect(page.body).not.toContain('visitor1')
      expect(page.body).not.toContain(`owner-${ws.slug}`)
    }
    // The team still sees the address.
    const team = await ws.owner.get(`/api/v1/posts/${anonymous.body.id}`, { headers: { 'x-workspace': ws.slug } })
    expect(team.body.author).toMatchObject({ email: 'visitor1@example.com' })
  })
})
