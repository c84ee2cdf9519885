// Security round 3, part A (issue 41): each finding reproduced over HTTP, then the rule that now holds.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { dkimSign } from 'mailauth/lib/dkim/sign'
import type * as oauth from 'oauth4webapi'
import { comments, endUsers, oauthGrants, workspaces } from '../../server/db/schema/index.ts'
import type { Logger } from '../../server/lib/log.ts'
import { startDnsServer } from '../helpers/dns-server.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, type Harness } from '../helpers/harness.ts'
import { authorizeAndExchange, bearer, discover, REDIRECT, refreshTokens, register } from '../helpers/oauth.ts'
import { eventually } from '../helpers/receiver.ts'

const lines: Record<string, unknown>[] = []
const capture = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ level, msg, ...fields })
const log: Logger = { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') }

let h: Harness
let as: oauth.AuthorizationServer
let ws: WorkspaceFixture
beforeAll(async () => {
  h = await startHarness({ LOG_LEVEL: 'info' }, { log })
  as = await discover(h)
  ws = await workspaceFixture(h)
}, 60_000)
afterAll(() => h.close())

const basic = (raw: string) => `Basic ${btoa(raw)}`
const tokenRequest = (headers: Record<string, string>, form: Record<string, string> = { grant_type: 'refresh_token', refresh_token: 'chorus_rt_x' }) =>
  h.app.handle(new Request(`${BASE}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form) }))

describe('finding 2: a grant follows its user\'s current role', () => {
  test('demoted to member: webhooks stop at once, other scopes keep working, a refresh says what is left', async () => {
    const own = await workspaceFixture(h)
    const admin = await addMember(h, own, `grantor-${own.slug}@example.com`, 'admin')
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, admin.client, own.id, { scope: 'webhooks:read webhooks:write posts:read' })
    expect(tokens.scope).toBe('webhooks:read webhooks:write posts:read')
    const webhook = { url: 'https://hooks.example.com/in', events: ['post.created'] }
    const hooks = `/api/v1/workspaces/${own.slug}/webhooks`
    expect((await h.client().get(hooks, { headers: bearer(tokens.access_token) })).status).toBe(200)

    expect((await own.owner.patch(`/api/v1/workspaces/${own.slug}/members/${admin.userId}`, { role: 'member' })).status).toBe(200)
    const read = await h.client().get(hooks, { headers: bearer(tokens.access_token) })
    expect(read.status).toBe(403)
    expect(read.body).toMatchObject({ code: 'FORBIDDEN' })
    expect(read.body.request_id).toMatch(/^req_/)
    const write = await h.client().post(hooks, webhook, { headers: bearer(tokens.access_token) })
    expect(write.status).toBe(403)
    expect((await h.client().get('/api/v1/boards', { headers: bearer(tokens.access_token) })).status).toBe(403) // boards:read was never granted
    expect((await h.client().get('/api/v1/boards/none/posts', { headers: bearer(tokens.access_token) })).status).toBe(404) // posts:read still works

    const refreshed = await refreshTokens(h, as, rc, tokens.refresh_token!)
    expect(refreshed.scope).toBe('posts:read')
    expect((await h.client().get(hooks, { headers: bearer(refreshed.access_token) })).status).toBe(403)

    // Promoted again: the grant (never rewritten) is whole again.
    expect((await own.owner.patch(`/api/v1/workspaces/${own.slug}/members/${admin.userId}`, { role: 'admin' })).status).toBe(200)
    expect((await h.client().get(hooks, { headers: bearer(refreshed.access_token) })).status).toBe(200)
  })

  test('removed from the workspace: the grant is revoked (REST, MCP and refresh), and stays revoked after a re-invitation', async () => {
    const own = await workspaceFixture(h)
    const email = `leaver-${own.slug}@example.com`
    const admin = await addMember(h, own, email, 'admin')
    const rc = await register(h, as)
    const { tokens } = await authorizeAndExchange(h, as, rc, admin.client, own.id, { scope: 'posts:read boards:read' })
    const mcp = () => h.app.handle(new Request(`${BASE}/mcp`, {
      method: 'POST',
      headers: { ...bearer(tokens.access_token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_boards', arguments: {} } }),
    }))
    expect((await mcp()).status).toBe(200)

    expect((await own.owner.delete(`/api/v1/workspaces/${own.slug}/members/${admin.userId}`)).status).toBe(204)
    const [grant] = await h.db.select().from(oauthGrants).where(eq(oauthGrants.userId, admin.userId))
    expect(grant!.revokedAt).not.toBeNull()
    expect(grant!.revokedReason).toBe('member_removed')
    expect((await h.client().get('/api/v1/boards', { headers: bearer(tokens.access_token) })).status).toBe(401)
    expect((await mcp()).status).toBe(401)
    const refreshed = await tokenRequest({}, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: rc.client.client_id })
    expect(refreshed.status).toBe(400)
    expect(await refreshed.json()).toMatchObject({ error: 'invalid_grant' })

    await addMember(h, own, email, 'admin')
    expect((await h.client().get('/api/v1/boards', { headers: bearer(tokens.access_token) })).status).toBe(401)
  })
})

describe('finding 3: no request without credentials causes a 5xx', () => {
  test.each(['%E0%A4%A', '%', 'ok%ZZ'])('Basic credentials with malformed percent-encoding (%s) are 401 invalid_client', async (bad) => {
    for (const raw of [`${bad}:secret`, `client:${bad}`]) {
      const response = await tokenRequest({ authorization: basic(raw) })
      expect(response.status).toBe(401)
      const body = await response.json()
      expect(body).toMatchObject({ error: 'invalid_client', code: 'UNAUTHENTICATED' })
      expect(body.request_id).toBe(response.headers.get('x-request-id'))
    }
  })

  test('the same at the revocation endpoint', async () => {
    const response = await h.app.handle(new Request(`${BASE}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('%:%') }, body: 'token=x' }))
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ error: 'invalid_client' })
  })
})

describe('finding 4: the CSRF check follows the credential actually used', () => {
  const foreign = { origin: 'https://evil.example' }

  test('a session cookie from a foreign origin with `Authorization: Basic` is refused and changes nothing', async () => {
    const response = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { name: 'Renamed by a stranger' }, { headers: { ...foreign, authorization: basic('anything:else') } })
    expect(response.status).toBe(403)
    expect(response.body).toMatchObject({ code: 'CSRF_REJECTED' })
    expect(response.body.request_id).toBe(response.headers.get('x-request-id'))
    const [row] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(row!.name).not.toBe('Renamed by a stranger')
  })

  test('other schemes too; a key request with a stray cookie is decided by the key', async () => {
    for (const authorization of ['Digest username="x"', 'Negotiate abc', 'Bearer']) {
      const response = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { name: 'x' }, { headers: { ...foreign, authorization } })
      // `Bearer` without a token names no key either: the cookie would be used, so the origin check applies.
      expect(response.status).toBe(403)
      expect(response.body.code).toBe('CSRF_REJECTED')
    }
    const key = await ws.key()
    const viaKey = await ws.owner.post('/api/v1/labels', { name: 'Keyed' }, { headers: { ...foreign, authorization: `Bearer ${key}` } })
    expect(viaKey.status).toBe(201)
  })
})

describe('finding 5: at authorize, a loopback redirect URI is held to the registration rules (only the port may vary)', () => {
  const authorize = async (clientId: string, redirectUri: string) => {
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256', state: 's' }).toString()
    return ws.owner.get(`${url.pathname}${url.search}`)
  }

  test('fragment or user info: an error page, never a redirect', async () => {
    const rc = await register(h, as)
    for (const uri of ['http://127.0.0.1:9999/callback#frag', 'http://127.0.0.1:9999/callback#', 'http://user:pw@127.0.0.1:9999/callback', 'http://user@127.0.0.1:8976/callback', `${REDIRECT}#x`]) {
      const response = await authorize(rc.client.client_id, uri)
      expect(response.status).toBe(400)
      expect(response.headers.get('location')).toBeNull()
      expect(String(response.body)).toContain('The redirect_uri is not one the app registered')
    }
  })

  test('another port still matches (RFC 8252 §7.3)', async () => {
    const rc = await register(h, as)
    const response = await authorize(rc.client.client_id, 'http://127.0.0.1:40123/callback')
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toMatch(/\/oauth\/consent\/ocr_/)
  })
})

describe('every refusal has the error shape, the request id, and its real status in the access log', () => {
  test('the access log records 400 for a token request answered 400', async () => {
    const response = await tokenRequest({}, { grant_type: 'password', client_id: 'oac_unknown' })
    expect(response.status).toBe(401)
    const bad = await h.app.handle(new Request(`${BASE}/oauth/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }))
    expect(bad.status).toBe(400)
    // By request id: the access lines of earlier tests' token requests may still be arriving.
    const ids = [response, bad].map((answer) => answer.headers.get('x-request-id'))
    expect(ids.every(Boolean)).toBe(true)
    const statusOf = (id: string | null) => lines.find((line) => line.msg === 'request' && line.request_id === id)?.status
    await eventually(() => ids.every((id) => statusOf(id) !== undefined), 2000, 'both requests logged')
    expect(ids.map(statusOf)).toEqual([401, 400])
    expect(lines.filter((line) => line.msg === 'request' && ids.includes(line.request_id as string)).map((line) => line.path)).toEqual(['/oauth/token', '/oauth/token'])
  })

  test('a 3 MiB avatar over real HTTP: 413 in the error shape with the request id, before the body is read', async () => {
    const server = Bun.serve({ port: 0, fetch: (request) => h.app.handle(request), maxRequestBodySize: (h.app.config.serve as { maxRequestBodySize: number }).maxRequestBodySize })
    try {
      const form = new FormData()
      form.set('file', new Blob([new Uint8Array(3 * 1024 * 1024)], { type: 'image/png' }), 'big.png')
      const cookie = [...ws.owner.jar].map(([k, v]) => `${k}=${v}`).join('; ')
      const response = await fetch(`http://127.0.0.1:${server.port}/api/v1/user/profile/avatar`, { method: 'PUT', headers: { cookie, 'sec-fetch-site': 'same-origin' }, body: form })
      expect(response.status).toBe(413)
      const body = await response.json()
      expect(body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' })
      expect(body.request_id).toBe(response.headers.get('x-request-id'))
    } finally {
      server.stop(true)
    }
  })
})

describe('finding 1: an inbound e-mail sender is verified only when the message is authenticated for the From domain', () => {
  const TRUSTED = 'mx.chorus.test'
  let mail: Harness
  let dns: Awaited<ReturnType<typeof startDnsServer>>
  let shop: WorkspaceFixture
  let token: string
  let key: string
  const customer = 'v@x.test'
  const signer = (domain: string) => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 }) // its TXT record fits one 255-byte DNS string
    const txt = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`
    dns.records.TXT.set(`s1._domainkey.${domain}`, [txt])
    return async (message: string) => (await dkimSign(message, { signatureData: [{ signingDomain: domain, selector: 's1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string }] } as never)).signatures + message
  }
  let signX: (message: string) => Promise<string>
  let signAttacker: (message: string) => Promise<string>
  const message = (from: string, subject: string, extra = '') =>
    `${extra}From: Vera <${from}>\r\nTo: ${token}@in.chorus.test\r\nSubject: ${subject}\r\nMessage-ID: <${crypto.randomUUID()}@x.test>\r\nDate: Sat, 28 Nov 2026 05:00:00 +0000\r\n\r\nPlease add a dark mode.\r\n`
  const deliver = async (raw: string) => {
    const response = await mail.app.handle(new Request(`${BASE}/api/v1/inbound/email/${token}`, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: raw }))
    expect(response.status).toBe(200)
    return (await response.json()) as { outcome: string; post_id: string | null; comment_id: string | null }
  }
  const postAuthor = async (postId: string) => {
    const response = await mail.client({ authorization: `Bearer ${key}` }).get(`/api/v1/posts/${postId}`)
    expect(response.status).toBe(200)
    return { verified: response.body.verified as boolean, endUserId: response.body.author.id as string, email: response.body.author.email as string | null }
  }
  let confirmedId: string

  beforeAll(async () => {
    dns = await startDnsServer()
    mail = await startHarness({ DNS_RESOLVER: dns.address, INBOUND_EMAIL_DOMAIN: 'in.chorus.test', INBOUND_TRUSTED_AUTHSERV_IDS: `${TRUSTED}, other.example` })
    shop = await workspaceFixture(mail)
    await boardFixture(mail, shop.id, 'ideas')
    token = (await shop.owner.get(`/api/v1/workspaces/${shop.slug}`)).body.email_intake_token
    key = await shop.key()
    const [row] = await mail.db.insert(endUsers).values({ id: `eu_confirmed${Date.now()}`, workspaceId: shop.id, email: customer, verifiedAt: new Date() }).returning()
    confirmedId = row!.id
    signX = signer('x.test')
    signAttacker = signer('attacker.test')
  }, 60_000)
  afterAll(async () => {
    await mail.close()
    dns.close()
  })

  test('a forged From of a confirmed customer: posted as an unverified identity of its own, the customer untouched', async () => {
    const result = await deliver(message(customer, 'Forged'))
    expect(result.outcome).toBe('post')
    const author = await postAuthor(result.post_id!)
    expect(author.verified).toBe(false)
    expect(author.endUserId).not.toBe(confirmedId)
    expect(author.email).toBeNull()
    const [standIn] = await mail.db.select().from(endUsers).where(eq(endUsers.id, author.endUserId))
    expect(standIn).toMatchObject({ email: null, name: 'Vera', verifiedAt: null })
  })

  test('signed by another domain (valid, not aligned), or with a forged trusted-looking header below an untrusted one: still unverified', async () => {
    expect((await postAuthor((await deliver(await signAttacker(message(customer, 'Signed elsewhere')))).post_id!)).verified).toBe(false)
    const untrusted = `Authentication-Results: mx.attacker.test; dmarc=pass header.from=x.test\r\n`
    expect((await postAuthor((await deliver(message(customer, 'Untrusted results', untrusted))).post_id!)).verified).toBe(false)
    // A body changed after signing breaks the signature.
    const tampered = (await signX(message(customer, 'Tampered'))).replace('dark mode', 'light mode')
    expect((await postAuthor((await deliver(tampered)).post_id!)).verified).toBe(false)
  })

  test('an aligned DKIM signature that verifies: the confirmed customer, verified', async () => {
    const author = await postAuthor((await deliver(await signX(message(customer, 'Signed')))).post_id!)
    expect(author).toMatchObject({ verified: true, endUserId: confirmedId })
  })

  test('Authentication-Results of a trusted receiving server (dmarc or aligned dkim pass): verified', async () => {
    for (const header of [`Authentication-Results: ${TRUSTED}; spf=fail; dmarc=pass (p=none) header.from=x.test\r\n`, `Authentication-Results: other.example 1; dkim=pass header.d=x.test header.s=s1\r\n`]) {
      expect(await postAuthor((await deliver(message(customer, 'Relayed', header))).post_id!)).toMatchObject({ verified: true, endUserId: confirmedId })
    }
    // The trusted server's verdict about another domain proves nothing for this one.
    const other = `Authentication-Results: ${TRUSTED}; dkim=pass header.d=attacker.test\r\n`
    expect((await postAuthor((await deliver(message(customer, 'Other domain', other))).post_id!)).verified).toBe(false)
  })

  test('a new address authenticated by DKIM starts verified', async () => {
    const author = await postAuthor((await deliver(await signX(message('new@x.test', 'First mail')))).post_id!)
    expect(author).toMatchObject({ verified: true, email: 'new@x.test' })
  })

  test('a reply threaded onto an existing post follows the same rule', async () => {
    const first = message(customer, 'Thread start')
    const started = await deliver(await signX(first))
    const messageId = /Message-ID: (<[^>]+>)/.exec(first)![1]!
    const reply = (await deliver(message(customer, 'Re: Thread start', `In-Reply-To: ${messageId}\r\n`)))
    expect(reply).toMatchObject({ outcome: 'comment', post_id: started.post_id })
    const [comment] = await mail.db.select().from(comments).where(eq(comments.id, reply.comment_id!))
    expect(comment!.authorEndUserId).not.toBe(confirmedId)
    const [author] = await mail.db.select().from(endUsers).where(eq(endUsers.id, comment!.authorEndUserId!))
    expect(author!.verifiedAt).toBeNull()
    const signedReply = await deliver(await signX(message(customer, 'Re: Thread start', `In-Reply-To: ${messageId}\r\n`)))
    const [signedComment] = await mail.db.select().from(comments).where(eq(comments.id, signedReply.comment_id!))
    expect(signedComment!.authorEndUserId).toBe(confirmedId)
  })
})
