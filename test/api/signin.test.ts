import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { authTokens, sessions, users } from '../../server/db/schema/index.ts'
import { BASE, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { lastOutboxMail } from '../helpers/session.ts'
import { tokenFromMail } from '../helpers/smtp.ts'

// The built-in sign-in pages (no separate dashboard configured), as a browser without JavaScript uses them.

let h: Harness
beforeAll(async () => {
  h = await startHarness({ IDP_ISSUER_US: 'https://idp.example.com', IDP_ISSUER_EU: 'https://idp.example.eu', IDP_CLIENT_ID: 'chorus' })
}, 60_000)
afterAll(() => h.close())

const form = (client: TestClient, path: string, fields: Record<string, string>) =>
  client.call('POST', path, { raw: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE } })

const hiddenField = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ''

describe('happy', () => {
  test('the page offers an e-mail link and each region\'s identity provider, with a CSRF token and labels', async () => {
    const client = h.client()
    const page = await client.get(`/signin?return_to=${encodeURIComponent('/oauth/authorize?client_id=abc&state=x')}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.headers.get('content-security-policy')).toContain("script-src 'none'")
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline')
    const html = page.body as string
    expect(html).toContain('<label for="email">E-mail address</label>')
    expect(html).toContain('<input id="email" name="email" type="email"')
    expect(hiddenField(html, 'return_to')).toBe('/oauth/authorize?client_id=abc&#38;state=x')
    expect(hiddenField(html, 'csrf')).toBe(client.jar.get('chorus_csrf')!)
    expect(page.headers.getSetCookie().join()).toMatch(/chorus_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Strict/)
    expect(html).toContain(`href="/api/v1/auth/idp/login?data_region=US&#38;redirect_to=%2Foauth%2Fauthorize%3Fclient_id%3Dabc%26state%3Dx"`)
    expect(html).toContain('Sign in with your identity provider (EU)')
  })

  test('e-mail link round trip: the form sends the link, the link page signs in and returns to return_to', async () => {
    const client = h.client()
    const page = await client.get(`/signin?return_to=${encodeURIComponent('/oauth/authorize?x=1')}`)
    const sent = await form(client, '/signin', { email: 'Page.User@example.com', csrf: hiddenField(page.body, 'csrf'), return_to: '/oauth/authorize?x=1' })
    expect(sent.status).toBe(303)
    expect(sent.headers.get('location')).toBe('/signin?sent=1&return_to=%2Foauth%2Fauthorize%3Fx%3D1')
    expect((await client.get(sent.headers.get('location')!)).body).toContain('Check your inbox')

    const link = new URL(/https?:\/\/\S+/.exec((await lastOutboxMail(h, 'page.user@example.com')).text)![0])
    expect(link.pathname).toBe('/auth/magic-link')
    const landing = await client.get(`${link.pathname}${link.search}`)
    expect(landing.status).toBe(200)
    // Opening the link spends nothing: only the button does.
    const token = tokenFromMail(await lastOutboxMail(h, 'page.user@example.com'))
    const [stored] = await h.db.select().from(authTokens).where(eq(authTokens.email, 'page.user@example.com'))
    expect(stored?.usedAt).toBeNull()

    const done = await form(client, '/auth/magic-link', { csrf: hiddenField(landing.body, 'csrf'), token })
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe('/oauth/authorize?x=1')
    expect(client.jar.has('access_token')).toBe(true)
    const [user] = await h.db.select().from(users).where(eq(users.email, 'page.user@example.com'))
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, user!.id))).toHaveLength(1)

    // Signed in, the page sends the browser straight on.
    const again = await client.get('/signin?return_to=%2Fdashboard%2Fideas')
    expect(again.status).toBe(303)
    expect(again.headers.get('location')).toBe('/dashboard/ideas')
  })

  test('an identity-provider error is shown in words', async () => {
    const page = await h.client().get('/signin?error=email_unverified')
    expect(page.body).toContain('role="alert"')
    expect(page.body).toContain('has not verified your e-mail address')
  })
})

describe('errors', () => {
  test('an invalid address re-renders the form with 422 and sends nothing', async () => {
    const client = h.client()
    const page = await client.get('/signin')
    const response = await form(client, '/signin', { email: 'not-an-address', csrf: hiddenField(page.body, 'csrf'), return_to: '/dashboard' })
    expect(response.status).toBe(422)
    expect(response.body).toContain('Enter a valid e-mail address.')
    expect(await h.db.select().from(users).where(eq(users.email, 'not-an-address'))).toHaveLength(0)
  })

  test('a used or unknown link shows an error page (401) and sets no session', async () => {
    const client = h.client()
    const landing = await client.get('/auth/magic-link?token=unknown')
    const response = await form(client, '/auth/magic-link', { csrf: hiddenField(landing.body, 'csrf'), token: 'unknown' })
    expect(response.status).toBe(401)
    expect(response.body).toContain('invalid, expired or already used')
    expect(client.jar.has('access_token')).toBe(false)
  })
})

describe('security', () => {
  test('a form post without the CSRF cookie, or with another token, is refused and sends nothing', async () => {
    const client = h.client()
    await client.get('/signin')
    const forged = await form(client, '/signin', { email: 'csrf-victim@example.com', csrf: 'guessed', return_to: '/dashboard' })
    expect(forged.status).toBe(403)
    const cross = await form(h.client(), '/signin', { email: 'csrf-victim@example.com', csrf: client.jar.get('chorus_csrf')!, return_to: '/dashboard' })
    expect(cross.status).toBe(403)
    expect(await h.db.select().from(users).where(eq(users.email, 'csrf-victim@example.com'))).toHaveLength(0)
  })

  test('return_to must be a relative path: anything else falls back to /dashboard (no open redirect)', async () => {
    for (const target of ['https://evil.example/', '//evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const page = await h.client().get(`/signin?return_to=${encodeURIComponent(target)}`)
      expect(hiddenField(page.body, 'return_to')).toBe('/dashboard')
      expect(page.body).not.toContain('evil.example')
    }
    const client = h.client()
    const page = await client.get('/signin')
    const sent = await form(client, '/signin', { email: 'redirect@example.com', csrf: hiddenField(page.body, 'csrf'), return_to: '//evil.example/' })
    expect(sent.headers.get('location')).toBe('/signin?sent=1&return_to=%2Fdashboard')
  })

  test('markup in the query is escaped', async () => {
    const page = await h.client().get(`/signin?return_to=${encodeURIComponent('/"><script>alert(1)</script>')}`)
    expect(page.body).not.toContain('<script>')
  })
})

describe('/accept-invite (the e-mailed invitation link)', () => {
  test('the invitee names themselves, is signed in as an active member and lands in the inbox; a used or wrong token is refused', async () => {
    const { workspaceFixture } = await import('../helpers/fixtures.ts')
    const { findOrCreateUser, createAuthToken } = await import('../../server/modules/auth/service.ts')
    const { members } = await import('../../server/db/schema/index.ts')
    const ws = await workspaceFixture(h)
    const invited = await findOrCreateUser(h.db, `invitee-${ws.slug}@example.com`)
    await h.db.insert(members).values({ workspaceId: ws.id, userId: invited.id, role: 'member', status: 'pending', invitedAt: new Date() })
    const token = await createAuthToken(h.db, { purpose: 'invitation', email: invited.email, userId: invited.id, data: { workspace_id: ws.id } })
    const client = h.client()
    const landing = await client.get(`/accept-invite?token=${token}&workspace=${ws.slug}`)
    expect(landing.status).toBe(200)
    expect(landing.headers.get('cache-control')).toBe('no-store')
    expect(landing.body).toContain('<button type="submit">Accept</button>')
    expect((await form(client, '/accept-invite', { csrf: hiddenField(landing.body, 'csrf'), token, workspace: ws.slug, name: '' })).status).toBe(422)
    expect((await form(client, '/accept-invite', { csrf: 'forged', token, workspace: ws.slug, name: 'Ada' })).status).toBe(403)
    const again = await client.get(`/accept-invite?token=${token}&workspace=${ws.slug}`)
    const done = await form(client, '/accept-invite', { csrf: hiddenField(again.body, 'csrf'), token, workspace: ws.slug, name: 'Ada <b>' })
    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe(`/dashboard/${ws.slug}`)
    const [row] = await h.db.select().from(members).where(eq(members.userId, invited.id))
    expect(row!.status).toBe('active')
    expect((await client.get(`/dashboard/${ws.slug}`)).status).toBe(200)
    const stranger = h.client()
    const reused = await stranger.get(`/accept-invite?token=${token}&workspace=${ws.slug}`)
    const refused = await form(stranger, '/accept-invite', { csrf: hiddenField(reused.body, 'csrf'), token, workspace: ws.slug, name: 'Mallory' })
    expect(refused.status).toBe(401)
    expect(refused.body).toContain('invalid, expired or already used')
  })
})
