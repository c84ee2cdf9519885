import { afterAll, beforeAll, describe, expect, setSystemTime, test } from 'bun:test'
import { createChallenge, solveChallenge, type Challenge } from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2'
import { contactChallengesUsed, contactMessages } from '../../server/db/schema/index.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { startSmtp } from '../helpers/smtp.ts'

const CONTACT = 'sales@chorus.example'
let h: Harness
let smtp: Awaited<ReturnType<typeof startSmtp>>
let ipCounter = 0
/** Each test speaks from its own address, so the per-IP limit of one does not leak into another. */
const visitor = () => h.client({ 'x-forwarded-for': `203.0.113.${++ipCounter}` })

beforeAll(async () => {
  smtp = await startSmtp()
  h = await startHarness({ SMTP_URL: smtp.url, CONTACT_EMAIL: CONTACT, TRUST_PROXY: 'true', RATE_LIMIT_PER_IP: '5' })
}, 60_000)
afterAll(async () => {
  await h.close()
  await smtp.close()
})

const encode = (challenge: Challenge, solution: unknown) => btoa(JSON.stringify({ challenge, solution }))

/** Fetches a challenge and solves it with altcha-lib's own solver, as the ALTCHA widget would. */
async function solved(client: TestClient) {
  const res = await client.get('/api/v1/contact/challenge')
  expect(res.status).toBe(200)
  const challenge = res.body as Challenge
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 60_000 })
  if (!solution) throw new Error('altcha-lib could not solve the challenge')
  return { challenge, solution, payload: encode(challenge, solution) }
}

const message = (challenge?: string) => ({ name: 'Ada Lovelace', email: 'Ada@Example.com', message: 'We would like a demo.', ...(challenge !== undefined && { challenge }) })
const stored = async () => (await h.db.select().from(contactMessages)).length

async function expectChallengeFailed(client: TestClient, challenge: string | undefined, why: RegExp) {
  const before = await stored()
  const res = await client.post('/api/v1/contact', message(challenge))
  expect(res.status).toBe(422)
  expect(res.body).toMatchObject({ code: 'CHALLENGE_FAILED', request_id: expect.any(String) })
  expect(res.body.message).toMatch(why)
  expect(await stored()).toBe(before)
}

describe('happy', () => {
  test('a challenge is a signed ALTCHA v2 challenge expiring within 10 minutes, never cached', async () => {
    const res = await visitor().get('/api/v1/contact/challenge')
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.body.signature).toMatch(/^[0-9a-f]{64}$/)
    expect(res.body.parameters).toMatchObject({ algorithm: 'PBKDF2/SHA-256', cost: expect.any(Number), keyPrefix: expect.any(String), keySignature: expect.any(String) })
    const ttl = res.body.parameters.expiresAt - Date.now() / 1000
    expect(ttl).toBeGreaterThan(590)
    expect(ttl).toBeLessThanOrEqual(600)
  })

  test("a solution made by altcha-lib's solver is accepted once, stored and e-mailed; its replay is refused", async () => {
    const client = visitor()
    const { payload } = await solved(client)
    const res = await client.post('/api/v1/contact', message(payload))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ id: expect.stringMatching(/^ctm_[0-9a-z]{25}$/), status: 'received', created_at: expect.any(String) })

    const rows = await h.db.select().from(contactMessages)
    expect(rows.find((row) => row.id === res.body.id)).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.com', message: 'We would like a demo.' })
    expect((await h.db.select().from(contactChallengesUsed)).length).toBeGreaterThanOrEqual(1)

    const mail = await smtp.waitFor(CONTACT)
    expect(mail.raw).toMatch(/^Reply-To: ada@example\.com/m)
    expect(mail.raw).toMatch(/^Subject: Contact form: Ada Lovelace/m)
    expect(mail.decoded).toContain('We would like a demo.')

    await expectChallengeFailed(client, payload, /already used/)
    // From another address too: the spent mark is in the database, not in a process or per IP.
    await expectChallengeFailed(visitor(), payload, /already used/)
  })
})

describe('errors', () => {
  test('a missing, garbled or foreign challenge is 422 CHALLENGE_FAILED and stores nothing', async () => {
    const client = visitor()
    await expectChallengeFailed(client, undefined, /no solution/)
    await expectChallengeFailed(client, '', /no solution/)
    await expectChallengeFailed(visitor(), 'not base64 json!', /not base64 JSON/)
    await expectChallengeFailed(visitor(), btoa(JSON.stringify({ challenge: 'x', solution: 1 })), /not base64 JSON/)
    // Signed by someone else's key: the solver finds a solution, the signature gives it away.
    const foreign = await createChallenge({ algorithm: 'PBKDF2/SHA-256', cost: 1, deriveKey, hmacSignatureSecret: 'another-servers-secret', expiresAt: new Date(Date.now() + 60_000) })
    const solution = await solveChallenge({ challenge: foreign, deriveKey })
    await expectChallengeFailed(visitor(), encode(foreign, solution), /not issued by this server/)
  })

  test('a tampered challenge or a wrong solution is refused; the untouched one then passes', async () => {
    const client = visitor()
    const { challenge, solution, payload } = await solved(client)
    const cheaper = { ...challenge, parameters: { ...challenge.parameters, cost: 1 } }
    await expectChallengeFailed(client, encode(cheaper, solution), /not issued by this server/)
    const longer = { ...challenge, parameters: { ...challenge.parameters, expiresAt: challenge.parameters.expiresAt! + 3600 } }
    await expectChallengeFailed(client, encode(longer, solution), /expiry|not issued/)
    // The server checks the derived key against its signature (one HMAC), so a key nobody worked for is wrong.
    await expectChallengeFailed(client, encode(challenge, { ...solution, derivedKey: '00'.repeat(32) }), /wrong/)
    expect((await client.post('/api/v1/contact', message(payload))).status).toBe(200)
  })

  test('an expired challenge is refused', async () => {
    const client = visitor()
    const { payload } = await solved(client)
    setSystemTime(new Date(Date.now() + 11 * 60 * 1000))
    try {
      await expectChallengeFailed(client, payload, /expired/)
    } finally {
      setSystemTime()
    }
    // The same payload in time passes: expiry was the only reason.
    expect((await client.post('/api/v1/contact', message(payload))).status).toBe(200)
  })

  test('bad fields are 422 VALIDATION_ERROR before any challenge is spent', async () => {
    const client = visitor()
    for (const body of [{ ...message('x'), email: 'not-an-email' }, { ...message('x'), name: '' }, { ...message('x'), message: 'x'.repeat(5001) }, { ...message('x'), phone: '1' }, { email: 'a@b.co' }]) {
      const res = await client.post('/api/v1/contact', body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
    }
  })
})

describe('security', () => {
  test('POST /contact is rate-limited per IP, before the proof is checked', async () => {
    const client = visitor()
    for (let i = 0; i < 5; i++) expect((await client.post('/api/v1/contact', message('garbage'))).status).toBe(422)
    const limited = await client.post('/api/v1/contact', message('garbage'))
    expect(limited.status).toBe(429)
    expect(limited.body.code).toBe('RATE_LIMITED')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')
    // Another address is not affected.
    expect((await visitor().post('/api/v1/contact', message('garbage'))).status).toBe(422)
  })
})
