import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { SignJWT, UnsecuredJWT } from 'jose'
import { authTokens, refreshTokens, sessions, users } from '../../server/db/schema/index.ts'
import { deriveKey, sha256Hex } from '../../server/lib/secrets.ts'
import { BASE, startHarness, TEST_SECRET, type Harness } from '../helpers/harness.ts'
import { signIn as signInWithOutbox } from '../helpers/session.ts'
import { startSmtp, tokenFromMail } from '../helpers/smtp.ts'

let h: Harness
let smtp: Awaited<ReturnType<typeof startSmtp>>
beforeAll(async () => {
  smtp = await startSmtp()
  h = await startHarness({ SMTP_URL: smtp.url })
}, 60_000)
afterAll(async () => {
  await h.close()
  await smtp.close()
})

const signIn = (harness: Harness, client: ReturnType<Harness['client']>, email: string) => signInWithOutbox(harness, client, email, smtp)
const accessKey = () => deriveKey(TEST_SECRET, 'access-token')

async function meWith(token: string) {
  const client = h.client()
  client.jar.set('access_token', token)
  return client.get('/api/v1/auth/me')
}

describe('happy', () => {
  test('a new address gets an account, an e-mail with a link, and cookies on verify', async () => {
    const client = h.client()
    const sent = await client.post('/api/v1/auth/magic-link', { email: 'Ada@Example.com', redirect_to: '/dashboard/ideas' })
    expect(sent.status).toBe(200)
    expect(sent.body).toEqual({ status: 'sent' })
    const [created] = await h.db.select().from(users).where(eq(users.email, 'ada@example.com'))
    expect(created?.emailVerified).toBe(false)

    const mail = await smtp.waitFor('ada@example.com')
    expect(mail.decoded).toContain('Subject: Your Chorus sign-in link')
    const token = tokenFromMail(mail)

    const verified = await client.post('/api/v1/auth/magic-link/verify', { token })
    expect(verified.status).toBe(200)
    expect(verified.body).toMatchObject({ id: created!.id, email: 'ada@example.com', name: null, avatar_url: null, email_verified: true, locale: 'en' })
    expect(verified.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    const cookies = verified.headers.getSetCookie().join('\n')
    expect(cookies).toMatch(/access_token=[^;]+;.*HttpOnly/i)
    expect(cookies).toMatch(/refresh_token=[^;]+;.*Path=\/api/i)
    expect(cookies).toMatch(/SameSite=Lax/i)
    expect(cookies).not.toMatch(/Secure/) // http://localhost base URL

    const me = await client.get('/api/v1/auth/me')
    expect(me.status).toBe(200)
    expect(me.body.email).toBe('ada@example.com')
    const [stored] = await h.db.select().from(sessions).where(eq(sessions.userId, created!.id))
    expect(stored?.revokedAt).toBeNull()
  })

  test('refresh issues a new pair; reusing the old refresh token revokes the session', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'rotate@example.com')
    const firstRefresh = client.jar.get('refresh_token')!

    const refreshed = await client.post('/api/v1/auth/refresh')
    expect(refreshed.status).toBe(200)
    expect(refreshed.body).toMatchObject({ token_type: 'cookie', expires_in: 900 })
    const secondRefresh = client.jar.get('refresh_token')!
    expect(secondRefresh).not.toBe(firstRefresh)
    expect((await client.get('/api/v1/auth/me')).status).toBe(200)

    const thief = h.client()
    thief.jar.set('refresh_token', firstRefresh)
    const reuse = await thief.post('/api/v1/auth/refresh')
    expect(reuse.status).toBe(401)

    const [session] = await h.db.select().from(sessions).where(eq(sessions.userId, user.id))
    expect(session?.revokedAt).not.toBeNull()
    // The legitimate holder is out too: both the new refresh token and the access token stop working.
    expect((await client.get('/api/v1/auth/me')).status).toBe(401)
    expect((await client.post('/api/v1/auth/refresh')).status).toBe(401)
  })

  test('logout revokes the session and clears the cookies', async () => {
    const client = h.client()
    await signIn(h, client, 'bye@example.com')
    const access = client.jar.get('access_token')!
    const refresh = client.jar.get('refresh_token')!
    const out = await client.post('/api/v1/auth/logout')
    expect(out.status).toBe(200)
    expect(client.jar.has('access_token')).toBe(false)
    const [token] = await h.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, await sha256Hex(refresh)))
    const [session] = await h.db.select().from(sessions).where(eq(sessions.id, token!.sessionId))
    expect(session?.revokedAt).not.toBeNull()
    // The old access token is dead even before its 15 minutes are up.
    const replay = h.client()
    replay.jar.set('access_token', access)
    expect((await replay.get('/api/v1/auth/me')).status).toBe(401)
    expect((await h.client().post('/api/v1/auth/logout')).status).toBe(401)
  })

  test('the access token is read among other cookies, quoted or not; a session reaches workspace routes', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'crumbs@example.com')
    const access = client.jar.get('access_token')!
    const me = (cookie: string) => h.client().get('/api/v1/auth/me', { headers: { cookie } })
    for (const cookie of [`theme=dark; access_token=${access}; lang=en`, `access_token="${access}"`, `access_token=${access};other=1`]) {
      const res = await me(cookie)
      expect({ cookie, status: res.status, id: res.body.id }).toEqual({ cookie, status: 200, id: user.id })
    }
    // A name that only ends in access_token is another cookie.
    expect((await me(`x_access_token=${access}`)).status).toBe(401)
    const created = await client.post('/api/v1/workspaces', { name: 'Crumbs', slug: 'crumbs' })
    expect(created.status).toBe(201)
    const boards = await h.client().get('/api/v1/boards', { headers: { cookie: `a=b; access_token=${access}`, 'x-workspace': 'crumbs' } })
    expect(boards.status).toBe(200)
    expect(Array.isArray(boards.body.items ?? boards.body)).toBe(true)
  })

  test('resend sends a link; verify-email marks the address verified once', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'verify@example.com')
    await h.db.update(users).set({ emailVerified: false }).where(eq(users.id, user.id))
    smtp.inbox.length = 0
    const resend = await client.post('/api/v1/auth/resend-verification')
    expect(resend.status).toBe(200)
    expect(resend.body).toEqual({ status: 'sent' })
    const token = tokenFromMail(await smtp.waitFor('verify@example.com'))
    const verified = await h.client().post('/api/v1/auth/verify-email', { token })
    expect(verified.status).toBe(200)
    const [row] = await h.db.select().from(users).where(eq(users.id, user.id))
    expect(row?.emailVerified).toBe(true)
    expect((await h.client().post('/api/v1/auth/verify-email', { token })).status).toBe(401)
    expect((await client.post('/api/v1/auth/resend-verification')).body).toEqual({ status: 'already_verified' })
  })
})

describe('errors', () => {
  test('bad input: invalid e-mail, absolute redirect, missing token', async () => {
    const client = h.client()
    expect((await client.post('/api/v1/auth/magic-link', { email: 'not-an-email' })).status).toBe(422)
    const redirect = await client.post('/api/v1/auth/magic-link', { email: 'x@example.com', redirect_to: 'https://evil.example' })
    expect(redirect.status).toBe(422)
    expect(redirect.body.detail[0].loc).toEqual(['body', 'redirect_to'])
    expect((await client.post('/api/v1/auth/magic-link', { email: 'x@example.com', redirect_to: '//evil.example' })).status).toBe(422)
    expect((await client.post('/api/v1/auth/magic-link/verify', {})).status).toBe(422)
    expect((await client.post('/api/v1/auth/magic-link/verify', { token: 'made-up' })).status).toBe(401)
  })

  test('per-address limit: the sixth request in 15 minutes is 429 with Retry-After', async () => {
    const client = h.client()
    for (let i = 0; i < 5; i++) {
      const res = await client.post('/api/v1/auth/magic-link', { email: 'spam@example.com' })
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-limit')).toBe('5')
    }
    const limited = await client.post('/api/v1/auth/magic-link', { email: 'spam@example.com' })
    expect(limited.status).toBe(429)
    expect(limited.body.code).toBe('RATE_LIMITED')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
  })
})

describe('security', () => {
  test('the link works once', async () => {
    const client = h.client()
    await client.post('/api/v1/auth/magic-link', { email: 'once@example.com' })
    const token = tokenFromMail(await smtp.waitFor('once@example.com'))
    expect((await client.post('/api/v1/auth/magic-link/verify', { token })).status).toBe(200)
    const again = await h.client().post('/api/v1/auth/magic-link/verify', { token })
    expect(again.status).toBe(401)
    expect(again.body.code).toBe('UNAUTHENTICATED')
  })

  test('an expired link is refused', async () => {
    await h.client().post('/api/v1/auth/magic-link', { email: 'late@example.com' })
    const token = tokenFromMail(await smtp.waitFor('late@example.com'))
    await h.db.update(authTokens).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(authTokens.tokenHash, await sha256Hex(token)))
    const res = await h.client().post('/api/v1/auth/magic-link/verify', { token })
    expect(res.status).toBe(401)
  })

  test('only the token hash is stored', async () => {
    await h.client().post('/api/v1/auth/magic-link', { email: 'hash@example.com' })
    const token = tokenFromMail(await smtp.waitFor('hash@example.com'))
    const rows = await h.db.select().from(authTokens).where(eq(authTokens.email, 'hash@example.com'))
    expect(rows).toHaveLength(1)
    expect(rows[0]!.tokenHash).toBe(await sha256Hex(token))
    expect(JSON.stringify(rows)).not.toContain(token)
  })

  test('refresh without a cookie or with garbage is 401', async () => {
    expect((await h.client().post('/api/v1/auth/refresh')).status).toBe(401)
    const client = h.client()
    client.jar.set('refresh_token', 'garbage')
    expect((await client.post('/api/v1/auth/refresh')).status).toBe(401)
  })

  test('alg none is refused', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'none@example.com')
    const [session] = await h.db.select().from(sessions).where(eq(sessions.userId, user.id))
    const unsigned = new UnsecuredJWT({ sid: session!.id }).setSubject(user.id).setIssuer(BASE).setAudience('chorus:dashboard').setExpirationTime('10m').encode()
    expect((await meWith(unsigned)).status).toBe(401)
  })

  test('a token signed with another key, expired, or for another audience is refused', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'forge@example.com')
    const [session] = await h.db.select().from(sessions).where(eq(sessions.userId, user.id))
    const sign = (key: Uint8Array, audience: string, exp: number) =>
      new SignJWT({ sid: session!.id }).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuer(BASE).setAudience(audience).setExpirationTime(exp).sign(key)
    const now = Math.floor(Date.now() / 1000)
    expect((await meWith(await sign(new TextEncoder().encode('x'.repeat(32)), 'chorus:dashboard', now + 600))).status).toBe(401)
    expect((await meWith(await sign(await accessKey(), 'chorus:dashboard', now - 10))).status).toBe(401)
    expect((await meWith(await sign(await accessKey(), 'chorus:widget', now + 600))).status).toBe(401)
    // Control: the same construction with the right key and audience is accepted, so the refusals above mean something.
    expect((await meWith(await sign(await accessKey(), 'chorus:dashboard', now + 600))).status).toBe(200)
  })

  test('a genuine token for another user id than its session is refused', async () => {
    const a = h.client()
    const userA = await signIn(h, a, 'a-swap@example.com')
    const userB = await signIn(h, h.client(), 'b-swap@example.com')
    const [session] = await h.db.select().from(sessions).where(eq(sessions.userId, userA.id))
    const token = await new SignJWT({ sid: session!.id }).setProtectedHeader({ alg: 'HS256' }).setSubject(userB.id).setIssuer(BASE).setAudience('chorus:dashboard').setExpirationTime('10m').sign(await accessKey())
    expect((await meWith(token)).status).toBe(401)
  })

  test('resend needs a session', async () => {
    expect((await h.client().post('/api/v1/auth/resend-verification')).status).toBe(401)
  })

  test('a cookie-authenticated write from a foreign Origin is 403 CSRF_REJECTED; the own origin passes', async () => {
    const client = h.client()
    await signIn(h, client, 'csrf@example.com')
    const foreign = await client.patch('/api/v1/user/profile', { name: 'Mallory' }, { headers: { origin: 'https://evil.example' } })
    expect(foreign.status).toBe(403)
    expect(foreign.body.code).toBe('CSRF_REJECTED')
    const own = await client.patch('/api/v1/user/profile', { name: 'Ada' }, { headers: { origin: BASE } })
    expect(own.status).toBe(200)
    expect(own.body.name).toBe('Ada')
  })
})
