import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { sessions, userIdentities, users } from '../../server/db/schema/index.ts'
import { findOrCreateUser } from '../../server/modules/auth/service.ts'
import { BASE, startHarness, type Harness } from '../helpers/harness.ts'
import { startTestIdp, type TestIdp } from '../helpers/oidc.ts'

// Two real OpenID providers (US and EU, distinct issuers and keys) on loopback ports; the browser is a
// cookie jar that follows redirects, handing the service's own URLs to the app and the rest to the network.

const CLIENT = { clientId: 'chorus-test', clientSecret: 'idp-client-secret-with+special/chars' }
const REDIRECT_URI = `${BASE}/api/v1/auth/idp/callback`

let us: TestIdp
let eu: TestIdp
let h: Harness

beforeAll(async () => {
  us = await startTestIdp({ ...CLIENT, redirectUris: [REDIRECT_URI], kid: 'us-1' })
  eu = await startTestIdp({ ...CLIENT, redirectUris: [REDIRECT_URI], kid: 'eu-1' })
  h = await startHarness(env())
}, 60_000)
afterAll(async () => {
  await h.close()
  await us.close()
  await eu.close()
})
afterEach(() => {
  for (const idp of [us, eu]) {
    idp.account = { sub: 'alice', email: 'alice@example.com', email_verified: true, name: 'Alice' }
    idp.denyWith = null
    idp.tamperIdToken = null
  }
  setSystemTime()
})

function env(extra: Record<string, string> = {}) {
  return {
    IDP_ISSUER_US: us.issuer, IDP_ISSUER_EU: eu.issuer, IDP_CLIENT_ID: CLIENT.clientId, IDP_CLIENT_SECRET: CLIENT.clientSecret,
    WEBHOOK_ALLOW_PRIVATE: 'true', ...extra,
  }
}

/** A browser without JavaScript: one cookie jar per host, redirects followed by hand. */
class Browser {
  readonly jars = new Map<string, Map<string, string>>()
  constructor(private readonly harness: Harness) {}

  jar(url: string) {
    const host = new URL(url).host
    let jar = this.jars.get(host)
    if (!jar) this.jars.set(host, (jar = new Map()))
    return jar
  }

  service = () => this.jar(BASE)

  async get(url: string): Promise<Response> {
    const jar = this.jar(url)
    const headers: Record<string, string> = {}
    if (jar.size) headers.cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const request = new Request(url, { headers, redirect: 'manual' })
    const response = url.startsWith(BASE) ? await this.harness.app.handle(request) : await fetch(request)
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const index = pair!.indexOf('=')
      const [name, value] = [pair!.slice(0, index), pair!.slice(index + 1)]
      if (value === '' || /max-age=0/i.test(line)) jar.delete(name)
      else jar.set(name, value)
    }
    return response
  }

  /** Follows redirects from `url` until one leads to the service outside its API (the dashboard or /signin), or `stop` says so. */
  async follow(url: string, stop: (next: string) => boolean = () => false) {
    const visited: string[] = []
    let next = url
    for (let hop = 0; hop < 12; hop++) {
      visited.push(next)
      if (stop(next)) return { landed: next, visited, response: null }
      const response = await this.get(next)
      const location = response.headers.get('location')
      if (!location) return { landed: next, visited, response }
      next = new URL(location, next).toString()
      if (next.startsWith(BASE) && !new URL(next).pathname.startsWith('/api/')) return { landed: next, visited: [...visited, next], response }
    }
    throw new Error(`too many redirects: ${visited.join(' -> ')}`)
  }
}

const login = (browser: Browser, query = '') => browser.follow(`${BASE}/api/v1/auth/idp/login${query}`)
const isCallback = (url: string) => url.startsWith(REDIRECT_URI)
const signedIn = (browser: Browser) => browser.service().has('access_token') || browser.service().has('refresh_token')
const identities = (issuer: string, sub: string) => h.db.select().from(userIdentities).where(eq(userIdentities.issuer, issuer)).then((rows) => rows.filter((row) => row.subject === sub))

describe('happy', () => {
  test('a new user signs in through the US provider, gets session cookies and lands on redirect_to', async () => {
    us.account = { sub: 'new-1', email: 'New.Person@Example.com', email_verified: true, name: 'New Person' }
    const browser = new Browser(h)
    const first = await browser.get(`${BASE}/api/v1/auth/idp/login?redirect_to=${encodeURIComponent('/boards/ideas?tab=top')}&locale=de`)
    expect(first.status).toBe(302)
    const authorize = new URL(first.headers.get('location')!)
    expect(authorize.origin).toBe(us.issuer)
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ response_type: 'code', client_id: CLIENT.clientId, redirect_uri: REDIRECT_URI, code_challenge_method: 'S256', ui_locales: 'de' })
    expect(authorize.searchParams.get('scope')!.split(' ')).toContain('openid')
    for (const name of ['state', 'nonce', 'code_challenge']) expect(authorize.searchParams.get(name)!.length).toBeGreaterThanOrEqual(43)
    const cookie = first.headers.getSetCookie().find((line) => line.startsWith('idp_oauth_state='))!
    expect(cookie).toMatch(/HttpOnly/i)
    expect(cookie).toMatch(/SameSite=Lax/i)
    expect(cookie).toMatch(/Max-Age=600/i)
    expect(cookie).toMatch(/Path=\/api/)
    // Sealed: neither the state nor the verifier can be read from the cookie.
    expect(cookie).not.toContain(authorize.searchParams.get('state')!)

    const { landed, visited } = await browser.follow(authorize.toString())
    expect(landed).toBe(`${BASE}/boards/ideas?tab=top`)
    const callback = new URL(visited.find(isCallback)!)
    expect(callback.searchParams.get('iss')).toBe(us.issuer)
    expect(browser.service().has('idp_oauth_state')).toBe(false)
    expect(signedIn(browser)).toBe(true)

    const me = await h.client().get('/api/v1/auth/me', { headers: { cookie: `access_token=${browser.service().get('access_token')}` } })
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ email: 'new.person@example.com', email_verified: true, name: 'New Person', locale: 'de' })
    const [identity] = await identities(us.issuer, 'new-1')
    expect(identity).toMatchObject({ userId: me.body.id, email: 'new.person@example.com' })
  })

  test('the same identity signs in to the same user again, whatever address it now shows', async () => {
    us.account = { sub: 'again-1', email: 'again@example.com', email_verified: true }
    expect((await login(new Browser(h))).landed).toBe(`${BASE}/dashboard`)
    const [before] = await identities(us.issuer, 'again-1')
    us.account = { sub: 'again-1', email: 'renamed@example.com', email_verified: false }
    const browser = new Browser(h)
    expect((await login(browser)).landed).toBe(`${BASE}/dashboard`)
    expect(signedIn(browser)).toBe(true)
    const rows = await identities(us.issuer, 'again-1')
    expect(rows).toHaveLength(1)
    expect(rows[0]!.userId).toBe(before!.userId)
    expect(await h.db.select().from(users).where(eq(users.email, 'renamed@example.com'))).toHaveLength(0)
  })

  test('an existing account is linked by its address when the provider says email_verified', async () => {
    const existing = await findOrCreateUser(h.db, 'bob@example.com')
    us.account = { sub: 'bob-sub', email: 'Bob@example.com', email_verified: true }
    const browser = new Browser(h)
    expect((await login(browser)).landed).toBe(`${BASE}/dashboard`)
    const [identity] = await identities(us.issuer, 'bob-sub')
    expect(identity?.userId).toBe(existing.id)
    const [user] = await h.db.select().from(users).where(eq(users.id, existing.id))
    expect(user?.emailVerified).toBe(true)
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, existing.id))).toHaveLength(1)
  })

  test('the EU region signs in through the EU issuer; the same sub there is another identity', async () => {
    eu.account = { sub: 'alice', email: 'alice.eu@example.com', email_verified: true }
    const browser = new Browser(h)
    const { landed, visited } = await login(browser, '?data_region=EU')
    expect(landed).toBe(`${BASE}/dashboard`)
    expect(visited[1]!.startsWith(eu.issuer)).toBe(true)
    expect(await identities(eu.issuer, 'alice')).toHaveLength(1)
    expect(await identities(us.issuer, 'alice')).toHaveLength(0)
  })
})

describe('errors', () => {
  test('redirect_to must be a relative path (422 in the error shape)', async () => {
    for (const target of ['https://evil.example/x', '//evil.example/x', '/\\evil.example', 'dashboard', '/a b']) {
      const response = await h.client().get(`/api/v1/auth/idp/login?redirect_to=${encodeURIComponent(target)}`)
      expect(response.status).toBe(422)
      expect(response.body).toMatchObject({ code: 'VALIDATION_ERROR' })
      expect(response.body.detail[0].loc).toEqual(['query', 'redirect_to'])
      expect(response.headers.getSetCookie().join()).not.toContain('idp_oauth_state')
    }
  })

  test('an unknown data_region is 422', async () => {
    const response = await h.client().get('/api/v1/auth/idp/login?data_region=APAC')
    expect(response.status).toBe(422)
    expect(response.body.code).toBe('VALIDATION_ERROR')
  })

  test('the provider\'s error response (the user declined) ends on /signin?error=access_denied without a session', async () => {
    us.denyWith = { error: 'access_denied', error_description: 'The user declined' }
    const browser = new Browser(h)
    expect((await login(browser)).landed).toBe(`${BASE}/signin?error=access_denied`)
    expect(signedIn(browser)).toBe(false)
    expect(browser.service().has('idp_oauth_state')).toBe(false)
  })

  test('an unverified address is not linked to the account that has it, and signs nobody in', async () => {
    const existing = await findOrCreateUser(h.db, 'carol@example.com')
    us.account = { sub: 'carol-impostor', email: 'carol@example.com', email_verified: false }
    const browser = new Browser(h)
    expect((await login(browser)).landed).toBe(`${BASE}/signin?error=email_unverified`)
    expect(signedIn(browser)).toBe(false)
    expect(await identities(us.issuer, 'carol-impostor')).toHaveLength(0)
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, existing.id))).toHaveLength(0)
  })

  test('an expired or already used code is refused by the provider and ends on an error', async () => {
    us.account = { sub: 'replay-1', email: 'replay@example.com', email_verified: true }
    const browser = new Browser(h)
    const start = await browser.follow(`${BASE}/api/v1/auth/idp/login`, isCallback)
    const sealed = browser.service().get('idp_oauth_state')!
    expect((await browser.follow(start.landed)).landed).toBe(`${BASE}/dashboard`)
    // The same callback again, with the state cookie put back: the code was spent.
    const attacker = new Browser(h)
    attacker.service().set('idp_oauth_state', sealed)
    expect((await attacker.follow(start.landed)).landed).toBe(`${BASE}/signin?error=token_exchange_failed`)
    expect(signedIn(attacker)).toBe(false)
    const [identity] = await identities(us.issuer, 'replay-1')
    expect(await h.db.select().from(sessions).where(eq(sessions.userId, identity!.userId))).toHaveLength(1)
  })

  test('a login older than 10 minutes is refused as expired', async () => {
    const browser = new Browser(h)
    const start = await browser.follow(`${BASE}/api/v1/auth/idp/login`, isCallback)
    setSystemTime(new Date(Date.now() + 11 * 60_000))
    expect((await browser.follow(start.landed)).landed).toBe(`${BASE}/signin?error=expired`)
    expect(signedIn(browser)).toBe(false)
  })

  test('a provider that cannot be reached ends on /signin?error=idp_unavailable', async () => {
    const down = await startHarness(env({ IDP_ISSUER_US: 'http://127.0.0.1:9/' }))
    try {
      const browser = new Browser(down)
      expect((await login(browser)).landed).toBe(`${BASE}/signin?error=idp_unavailable`)
      expect(browser.service().size).toBe(0)
    } finally {
      await down.close()
    }
  })
})

describe('security', () => {
  test('a forged state (not the one sealed in this browser\'s cookie) is refused', async () => {
    const browser = new Browser(h)
    const first = await browser.get(`${BASE}/api/v1/auth/idp/login`)
    const authorize = new URL(first.headers.get('location')!)
    authorize.searchParams.set('state', 'forged-state-value')
    expect((await browser.follow(authorize.toString())).landed).toBe(`${BASE}/signin?error=state_mismatch`)
    expect(signedIn(browser)).toBe(false)
  })

  test('a callback without the state cookie (login CSRF) or with a cookie this service did not seal is refused', async () => {
    const victim = new Browser(h)
    const start = await victim.follow(`${BASE}/api/v1/auth/idp/login`, isCallback)
    victim.service().delete('idp_oauth_state')
    expect((await victim.follow(start.landed)).landed).toBe(`${BASE}/signin?error=missing_state`)
    expect(signedIn(victim)).toBe(false)

    const forger = new Browser(h)
    const again = await forger.follow(`${BASE}/api/v1/auth/idp/login`, isCallback)
    forger.service().set('idp_oauth_state', 'sealed:v2:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    expect((await forger.follow(again.landed)).landed).toBe(`${BASE}/signin?error=missing_state`)
    expect(signedIn(forger)).toBe(false)
  })

  test('a response from the US issuer to a login that went to the EU issuer is refused (mix-up, RFC 9207 iss)', async () => {
    const browser = new Browser(h)
    const first = await browser.get(`${BASE}/api/v1/auth/idp/login?data_region=EU`)
    const euAuthorize = new URL(first.headers.get('location')!)
    expect(euAuthorize.origin).toBe(eu.issuer)
    // The same request, sent to the US provider instead.
    const usAuthorize = new URL(`${us.issuer}/auth${euAuthorize.search}`)
    const start = await browser.follow(usAuthorize.toString(), isCallback)
    expect(new URL(start.landed).searchParams.get('iss')).toBe(us.issuer)
    const sealed = browser.service().get('idp_oauth_state')!
    expect((await browser.follow(start.landed)).landed).toBe(`${BASE}/signin?error=issuer_mismatch`)
    expect(signedIn(browser)).toBe(false)

    // Without the iss parameter the US code still goes to the EU token endpoint only, which refuses it.
    const stripped = new URL(start.landed)
    stripped.searchParams.delete('iss')
    const other = new Browser(h)
    other.service().set('idp_oauth_state', sealed)
    expect((await other.follow(stripped.toString())).landed).toBe(`${BASE}/signin?error=token_exchange_failed`)
    expect(signedIn(other)).toBe(false)
  })

  const tampered: [string, (claims: Record<string, unknown>) => Record<string, unknown>][] = [
    ['a nonce of another login', (claims) => ({ ...claims, nonce: 'another-login' })],
    ['no nonce', ({ nonce: _, ...claims }) => claims],
    ['another audience', (claims) => ({ ...claims, aud: 'someone-else' })],
    ['the EU issuer while signed by the US key', (claims) => ({ ...claims, iss: eu.issuer })],
    ['an issuer that differs by a trailing slash', (claims) => ({ ...claims, iss: `${us.issuer}/` })],
    ['an expiry in the past', (claims) => ({ ...claims, exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 })],
  ]
  for (const [name, tamper] of tampered) {
    test(`an ID token with ${name} is refused`, async () => {
      us.account = { sub: `tampered-${name}`, email: 'tampered@example.com', email_verified: true }
      us.tamperIdToken = tamper
      const browser = new Browser(h)
      expect((await login(browser)).landed).toBe(`${BASE}/signin?error=invalid_id_token`)
      expect(signedIn(browser)).toBe(false)
      expect(await identities(us.issuer, `tampered-${name}`)).toHaveLength(0)
    })
  }

  test('an ID token signed by another provider\'s key is refused', async () => {
    us.tamperIdToken = (claims) => claims
    const sign = us.sign
    us.sign = eu.sign
    try {
      const browser = new Browser(h)
      expect((await login(browser)).landed).toBe(`${BASE}/signin?error=invalid_id_token`)
      expect(signedIn(browser)).toBe(false)
    } finally {
      us.sign = sign
    }
  })

  test('a loopback issuer is fetched only when the operator allows private addresses for its own URLs', async () => {
    const guarded = await startHarness(env({ WEBHOOK_ALLOW_PRIVATE: 'false' }))
    try {
      const browser = new Browser(guarded)
      expect((await login(browser)).landed).toBe(`${BASE}/signin?error=idp_unavailable`)
    } finally {
      await guarded.close()
    }
    const onPremises = await startHarness(env({ WEBHOOK_ALLOW_PRIVATE: 'false', OPERATOR_URLS_ALLOW_PRIVATE: 'true' }))
    try {
      us.account = { sub: 'on-prem', email: 'on-prem@example.com', email_verified: true }
      const browser = new Browser(onPremises)
      expect((await login(browser)).landed).toBe(`${BASE}/dashboard`)
      expect(signedIn(browser)).toBe(true)
    } finally {
      await onPremises.close()
    }
  })
})
