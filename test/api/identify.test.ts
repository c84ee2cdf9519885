import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { decodeProtectedHeader, decodeJwt, exportJWK, exportSPKI, generateKeyPair } from 'jose'
import { endUsers, jwtConfigs } from '../../server/db/schema/index.ts'
import { configureHs256, customerToken, HOUR, identify, nextIp, unsignedToken } from '../helpers/end-users.ts'
import { workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { freshRateWindow, startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let ws: WorkspaceFixture
let secret: string
beforeAll(async () => {
  // Private JWKS addresses are allowed here: the JWKS server of these tests listens on 127.0.0.1.
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true', TRUST_PROXY: 'true' })
  ws = await workspaceFixture(h)
  secret = await configureHs256(ws.owner, ws.slug)
}, 60_000)
afterAll(() => h.close())

const refusal = async (slug: string, token: string, reason: RegExp) => {
  const res = await identify(h, slug, token)
  expect(res.status).toBe(401)
  expect(res.body.code).toBe('UNAUTHENTICATED')
  expect(res.body.message).toMatch(reason)
}

describe('happy', () => {
  test('upserts the end user by sub and returns a widget session of its own kind', async () => {
    const token = await customerToken(secret, { claims: { sub: 'cust-1', email: 'Ada@Example.com', name: 'Ada', avatar_url: 'https://cdn.example.com/ada.png', company: 'Acme' } })
    const res = await identify(h, ws.slug, token)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ external_id: 'cust-1', email: 'ada@example.com', name: 'Ada', avatar_url: 'https://cdn.example.com/ada.png', company: 'Acme' })
    expect(res.body.id).toMatch(/^eu_/)
    expect(res.body.created_at).toMatch(/Z$/)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')

    const session = res.body.session_token as string
    expect(decodeProtectedHeader(session)).toMatchObject({ alg: 'HS256', typ: 'chorus-widget+jwt' })
    const claims = decodeJwt(session)
    expect(claims).toMatchObject({ sub: res.body.id, aud: 'chorus:widget', ws: ws.id })
    expect(claims.exp! - claims.iat!).toBe(24 * HOUR)
    expect(Date.parse(res.body.session_expires_at)).toBe(claims.exp! * 1000)

    // Again with a new name: the same end user, updated; claims left out keep their values.
    const again = await identify(h, ws.slug, await customerToken(secret, { claims: { sub: 'cust-1', name: 'Ada L.', email: undefined } }))
    expect(again.body).toMatchObject({ id: res.body.id, name: 'Ada L.', email: 'ada@example.com', company: 'Acme' })
    const rows = await h.db.select().from(endUsers).where(and(eq(endUsers.workspaceId, ws.id), eq(endUsers.externalId, 'cust-1')))
    expect(rows).toHaveLength(1)
  })

  test('RS256, ES256 and EdDSA with a PEM key; an HS256 token made with the public key is refused', async () => {
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      const pair = await generateKeyPair(alg, { extractable: true })
      const pem = await exportSPKI(pair.publicKey)
      const w = await workspaceFixture(h)
      expect((await w.owner.post(`/api/v1/workspaces/${w.slug}/jwt-config`, { algorithm: alg, public_key: pem })).status).toBe(201)
      const ok = await identify(h, w.slug, await customerToken(pair.privateKey, { alg, claims: { sub: `${alg}-user` } }))
      expect(ok.status).toBe(200)
      expect(ok.body.external_id).toBe(`${alg}-user`)
      // Algorithm confusion: the PEM text used as an HMAC secret.
      await refusal(w.slug, await customerToken(pem), new RegExp(alg))
      const stranger = await generateKeyPair(alg)
      await refusal(w.slug, await customerToken(stranger.privateKey, { alg }), /signature/)
    }
  })

  test('RS256 with a JWKS URL: fetched once and cached; an unknown kid is refused', async () => {
    const pair = await generateKeyPair('RS256', { extractable: true })
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
    let fetches = 0
    const jwks = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => (fetches++, Response.json({ keys: [jwk] })) })
    try {
      const w = await workspaceFixture(h)
      const created = await w.owner.post(`/api/v1/workspaces/${w.slug}/jwt-config`, { algorithm: 'RS256', jwks_url: `http://127.0.0.1:${jwks.port}/jwks.json` })
      expect(created.status).toBe(201)
      expect(created.body.jwks_url).toBe(`http://127.0.0.1:${jwks.port}/jwks.json`)
      for (const sub of ['j1', 'j2']) {
        const res = await identify(h, w.slug, await customerToken(pair.privateKey, { alg: 'RS256', kid: 'k1', claims: { sub } }))
        expect(res.status).toBe(200)
      }
      expect(fetches).toBe(1)
      await refusal(w.slug, await customerToken(pair.privateKey, { alg: 'RS256', kid: 'unknown' }), /kid/)
      const stranger = await generateKeyPair('RS256')
      await refusal(w.slug, await customerToken(stranger.privateKey, { alg: 'RS256', kid: 'k1' }), /signature/)
    } finally {
      jwks.stop(true)
    }
  })

  test('preflight from any origin', async () => {
    const res = await h.client().call('OPTIONS', `/api/v1/workspaces/${ws.slug}/identify`, { headers: { origin: 'https://customer.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-methods')).toContain('POST')
    expect(res.headers.get('access-control-allow-headers')).toContain('Content-Type')
  })
})

describe('errors', () => {
  test('malformed profile claims are the integrator\'s bug: 422 naming the claim', async () => {
    for (const claims of [{ email: 'not-an-email' }, { avatar_url: 'javascript:alert(1)' }, { name: 42 }]) {
      const res = await identify(h, ws.slug, await customerToken(secret, { claims }))
      expect(res.status).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', 'token', Object.keys(claims)[0]])
    }
  })

  test('no configuration is 409; an unknown workspace is 404', async () => {
    const bare = await workspaceFixture(h)
    const res = await identify(h, bare.slug, await customerToken(secret))
    expect(res.status).toBe(409)
    expect(res.body.message).toMatch(/no JWT configuration/)
    expect((await identify(h, 'no-such-workspace', await customerToken(secret))).status).toBe(404)
  })

  test('a JWKS that cannot be fetched refuses with a clear reason', async () => {
    const w = await workspaceFixture(h)
    const dead = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('nope', { status: 500 }) })
    try {
      await w.owner.post(`/api/v1/workspaces/${w.slug}/jwt-config`, { algorithm: 'RS256', jwks_url: `http://127.0.0.1:${dead.port}/jwks.json` })
      const pair = await generateKeyPair('RS256')
      await refusal(w.slug, await customerToken(pair.privateKey, { alg: 'RS256', kid: 'k1' }), /JWKS|key/)
    } finally {
      dead.stop(true)
    }
  })

  test('per IP: past RATE_LIMIT_PER_IP a minute it is 429 with Retry-After; another address is not affected', async () => {
    const limited = await startHarness({ TRUST_PROXY: 'true', RATE_LIMIT_PER_IP: '3' })
    try {
      const w = await workspaceFixture(limited)
      const token = await customerToken(await configureHs256(w.owner, w.slug))
      const ip = nextIp()
      await freshRateWindow()
      for (let i = 0; i < 3; i++) expect((await identify(limited, w.slug, token, ip)).status).toBe(200)
      const refused = await identify(limited, w.slug, token, ip)
      expect(refused.status).toBe(429)
      expect(refused.body.code).toBe('RATE_LIMITED')
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(refused.headers.get('access-control-allow-origin')).toBe('*')
      expect((await identify(limited, w.slug, token)).status).toBe(200)
    } finally {
      await limited.close()
    }
  }, 60_000)
})

describe('security', () => {
  test('the widget session opens nothing else: not the dashboard, not key routes', async () => {
    const session = (await identify(h, ws.slug, await customerToken(secret))).body.session_token
    expect((await h.client().get('/api/v1/auth/me', { headers: { cookie: `access_token=${session}` } })).status).toBe(401)
    const asKey = await h.client().get('/api/v1/workspaces', { headers: { authorization: `Bearer ${session}` } })
    expect(asKey.status).toBe(401)
    expect(asKey.body.code).toBe('INVALID_API_KEY')
  })

  test('refuses forged, expired, exp-less, unsigned and too long-lived tokens with the reason', async () => {
    await refusal(ws.slug, await customerToken('another-secret-entirely-0123456789abcdef'), /signature/)
    await refusal(ws.slug, await customerToken(secret, { expiresIn: -HOUR }), /expired/)
    await refusal(ws.slug, await customerToken(secret, { expiresIn: null }), /"exp"/)
    await refusal(ws.slug, unsignedToken(), /HS256/)
    await refusal(ws.slug, await customerToken(secret, { expiresIn: 48 * HOUR }), /24 hours/)
    await refusal(ws.slug, await customerToken(secret, { claims: { sub: undefined } }), /"sub"/)
    await refusal(ws.slug, await customerToken(secret, { alg: 'HS512' }), /HS256/)
    await refusal(ws.slug, 'not.a.jwt', /well-formed/)
    await refusal(ws.slug, 'garbage', /well-formed/)
    // A token one minute short of the 24 h limit passes.
    expect((await identify(h, ws.slug, await customerToken(secret, { expiresIn: 24 * HOUR - 60 }))).status).toBe(200)
  })

  test('issuer and audience are checked when configured', async () => {
    const other = await workspaceFixture(h)
    const key = await configureHs256(other.owner, other.slug, { issuer: 'https://acme.example', audience: 'chorus' })
    const sign = (claims: Record<string, unknown>) => customerToken(key, { claims })
    await refusal(other.slug, await sign({ aud: 'chorus' }), /"iss"/)
    await refusal(other.slug, await sign({ iss: 'https://evil.example', aud: 'chorus' }), /issuer/)
    await refusal(other.slug, await sign({ iss: 'https://acme.example', aud: 'someone-else' }), /audience/)
    expect((await identify(h, other.slug, await sign({ iss: 'https://acme.example', aud: 'chorus' }))).status).toBe(200)
    // The same sub in two workspaces is two end users.
    const theirs = (await identify(h, other.slug, await sign({ iss: 'https://acme.example', aud: ['chorus', 'x'] }))).body
    const ours = (await identify(h, ws.slug, await customerToken(secret))).body
    expect(theirs.id).not.toBe(ours.id)
  })

  test('rotation: the previous secret verifies during the overlap, not after it', async () => {
    const rotating = await workspaceFixture(h)
    const old = await configureHs256(rotating.owner, rotating.slug)
    const fresh = (await rotating.owner.post(`/api/v1/workspaces/${rotating.slug}/jwt-config/rotate-secret`)).body.secret
    expect((await identify(h, rotating.slug, await customerToken(old))).status).toBe(200)
    expect((await identify(h, rotating.slug, await customerToken(fresh))).status).toBe(200)
    await h.db.update(jwtConfigs).set({ previousSecretExpiresAt: new Date(Date.now() - 1000) }).where(eq(jwtConfigs.workspaceId, rotating.id))
    await refusal(rotating.slug, await customerToken(old), /signature/)
    const newest = (await rotating.owner.post(`/api/v1/workspaces/${rotating.slug}/jwt-config/rotate-secret`, { overlap_seconds: 0 })).body.secret
    await refusal(rotating.slug, await customerToken(fresh), /signature/)
    expect((await identify(h, rotating.slug, await customerToken(newest))).status).toBe(200)
  })
})
