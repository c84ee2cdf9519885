import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { exportSPKI, generateKeyPair } from 'jose'
import { jwtConfigs } from '../../server/db/schema/index.ts'
import { SEALED_PREFIX, sealContext } from '../../server/lib/secrets.ts'
import { addMember, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
beforeAll(async () => {
  h = await startHarness()
}, 60_000)
afterAll(() => h.close())

const path = (ws: WorkspaceFixture, tail = '') => `/api/v1/workspaces/${ws.slug}/jwt-config${tail}`
const rsaPem = async () => exportSPKI((await generateKeyPair('RS256', { extractable: true })).publicKey)
const row = async (ws: WorkspaceFixture) => (await h.db.select().from(jwtConfigs).where(eq(jwtConfigs.workspaceId, ws.id)))[0]!

describe('jwt-config: happy paths', () => {
  test('create returns the generated secret once; it is stored sealed, never in plain text', async () => {
    const ws = await workspaceFixture(h)
    expect((await ws.owner.get(path(ws))).status).toBe(404)
    const created = await ws.owner.post(path(ws), { algorithm: 'HS256', issuer: 'https://acme.example', audience: 'chorus' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ algorithm: 'HS256', issuer: 'https://acme.example', audience: 'chorus', jwks_url: null, public_key: null, has_secret: true, previous_secret_expires_at: null })
    expect(created.body.secret).toMatch(/^[0-9A-Za-z]{48}$/)
    expect(created.body.created_at).toMatch(/Z$/)

    const stored = await row(ws)
    expect(stored.secretSealed).toStartWith(SEALED_PREFIX)
    expect(JSON.stringify(stored)).not.toContain(created.body.secret)
    expect(await h.ctx.secrets.unseal(stored.secretSealed!, sealContext.jwtConfigSecret(ws.id))).toBe(created.body.secret)
    // Bound to its workspace: the same sealed value does not open under another workspace's context.
    await expect(h.ctx.secrets.unseal(stored.secretSealed!, sealContext.jwtConfigSecret('ws_other'))).rejects.toThrow()

    const read = await ws.owner.get(path(ws))
    expect(read.status).toBe(200)
    expect(read.body.secret).toBeUndefined()
    expect(read.body.has_secret).toBe(true)
    expect((await ws.owner.post(path(ws), { algorithm: 'HS256' })).status).toBe(409)
  })

  test('rotation returns a new secret and keeps the previous one for the overlap; 0 revokes it at once', async () => {
    const ws = await workspaceFixture(h)
    const first = (await ws.owner.post(path(ws), { algorithm: 'HS256' })).body.secret
    const rotated = await ws.owner.post(path(ws, '/rotate-secret'))
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).not.toBe(first)
    const until = Date.parse(rotated.body.previous_secret_expires_at)
    expect(Math.abs(until - (Date.now() + 24 * 3600_000))).toBeLessThan(60_000)
    const stored = await row(ws)
    expect(await h.ctx.secrets.unseal(stored.previousSecretSealed!, sealContext.jwtConfigSecret(ws.id))).toBe(first)

    const revoked = await ws.owner.post(path(ws, '/rotate-secret'), { overlap_seconds: 0 })
    expect(revoked.body.previous_secret_expires_at).toBeNull()
    expect((await row(ws)).previousSecretSealed).toBeNull()
    expect((await ws.owner.post(path(ws, '/rotate-secret'), { overlap_seconds: 8 * 86_400 })).status).toBe(422)
  })

  test('RS256, ES256 and EdDSA with a PEM key; the key must match the algorithm', async () => {
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      const ws = await workspaceFixture(h)
      const pem = await exportSPKI((await generateKeyPair(alg, { extractable: true })).publicKey)
      const created = await ws.owner.post(path(ws), { algorithm: alg, public_key: pem })
      expect(created.status).toBe(201)
      expect(created.body).toMatchObject({ algorithm: alg, public_key: pem.trim(), has_secret: false })
      expect(created.body.secret).toBeUndefined()
      expect((await ws.owner.post(path(ws, '/rotate-secret'))).status).toBe(409)
    }
    const ws = await workspaceFixture(h)
    const mismatch = await ws.owner.post(path(ws), { algorithm: 'ES256', public_key: await rsaPem() })
    expect(mismatch.status).toBe(422)
    expect(mismatch.body.detail[0].loc).toEqual(['body', 'public_key'])
  })

  test('issuer and audience change and clear; switching algorithms swaps the secret and the key', async () => {
    const ws = await workspaceFixture(h)
    await ws.owner.post(path(ws), { algorithm: 'HS256', issuer: 'a', audience: 'b' })
    const cleared = await ws.owner.patch(path(ws), { issuer: null, audience: 'chorus' })
    expect(cleared.status).toBe(200)
    expect(cleared.body).toMatchObject({ issuer: null, audience: 'chorus', has_secret: true })
    expect(cleared.body.secret).toBeUndefined()

    const pem = await rsaPem()
    const toRsa = await ws.owner.patch(path(ws), { algorithm: 'RS256', public_key: pem })
    expect(toRsa.body).toMatchObject({ algorithm: 'RS256', has_secret: false, public_key: pem.trim(), audience: 'chorus' })
    expect((await row(ws)).secretSealed).toBeNull()

    const toJwks = await ws.owner.patch(path(ws), { jwks_url: 'https://93.184.216.34/.well-known/jwks.json' })
    expect(toJwks.body).toMatchObject({ public_key: null, jwks_url: 'https://93.184.216.34/.well-known/jwks.json' })
    expect((await ws.owner.patch(path(ws), { jwks_url: null })).status).toBe(422)
    expect((await ws.owner.patch(path(ws), { algorithm: 'ES256' })).status).toBe(200)

    const back = await ws.owner.patch(path(ws), { algorithm: 'HS256' })
    expect(back.body).toMatchObject({ algorithm: 'HS256', has_secret: true, jwks_url: null, public_key: null })
    expect(back.body.secret).toMatch(/^[0-9A-Za-z]{48}$/)
    expect((await ws.owner.patch(path(ws), {})).status).toBe(422)
  })
})

describe('jwt-config: errors', () => {
  test('key source rules: exactly one of public_key and jwks_url; HS256 takes neither; unsafe JWKS addresses are refused', async () => {
    const ws = await workspaceFixture(h)
    const pem = await rsaPem()
    const cases: [Record<string, unknown>, string][] = [
      [{ algorithm: 'RS256' }, 'public_key'],
      [{ algorithm: 'RS256', public_key: pem, jwks_url: 'https://example.com/jwks.json' }, 'public_key'],
      [{ algorithm: 'RS256', public_key: 'not a key' }, 'public_key'],
      [{ algorithm: 'HS256', public_key: pem }, 'public_key'],
      [{ algorithm: 'HS256', jwks_url: 'https://example.com/jwks.json' }, 'jwks_url'],
      [{ algorithm: 'RS256', jwks_url: 'http://example.com/jwks.json' }, 'jwks_url'],
      [{ algorithm: 'RS256', jwks_url: 'https://127.0.0.1/jwks.json' }, 'jwks_url'],
      [{ algorithm: 'RS256', jwks_url: 'https://169.254.169.254/latest' }, 'jwks_url'],
      [{ algorithm: 'RS256', jwks_url: 'https://[::1]/jwks.json' }, 'jwks_url'],
      [{ algorithm: 'RS256', jwks_url: 'https://localhost/jwks.json' }, 'jwks_url'],
    ]
    for (const [body, field] of cases) {
      const res = await ws.owner.post(path(ws), body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(res.body.detail[0].loc).toEqual(['body', field])
    }
    for (const body of [{ algorithm: 'none' }, { algorithm: 'HS512' }, { algorithm: 'HS256', extra: true }, {}]) {
      expect((await ws.owner.post(path(ws), body)).status).toBe(422)
    }
    expect((await ws.owner.get(path(ws))).status).toBe(404)
  })

  test('PATCH without a configuration is 404', async () => {
    const ws = await workspaceFixture(h)
    expect((await ws.owner.patch(path(ws), { issuer: 'x' })).status).toBe(404)
  })

  test('wrong types are 422 on create, update and rotation, and change nothing', async () => {
    const ws = await workspaceFixture(h)
    for (const body of [{ algorithm: 42 }, { algorithm: 'HS256', issuer: 7 }, { algorithm: 'HS256', audience: ['a'] }, { algorithm: 'RS256', public_key: 12 }]) {
      const res = await ws.owner.post(path(ws), body)
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 422, code: 'VALIDATION_ERROR' })
    }
    expect(await h.db.select().from(jwtConfigs).where(eq(jwtConfigs.workspaceId, ws.id))).toHaveLength(0)
    await ws.owner.post(path(ws), { algorithm: 'HS256', issuer: 'kept' })
    for (const body of [{ issuer: 7 }, { algorithm: 'HS384' }, { unknown: true }]) {
      expect((await ws.owner.patch(path(ws), body)).status).toBe(422)
    }
    for (const body of [{ overlap_seconds: 'soon' }, { overlap_seconds: -1 }, { overlap_seconds: 1.5 }]) {
      expect((await ws.owner.post(path(ws, '/rotate-secret'), body)).status).toBe(422)
    }
    expect((await row(ws)).issuer).toBe('kept')
    expect((await row(ws)).previousSecretSealed).toBeNull()
  })
})

describe('jwt-config: security', () => {
  test('dashboard only: every API key gets 403 DASHBOARD_ONLY; members need the admin role', async () => {
    const ws = await workspaceFixture(h)
    await ws.owner.post(path(ws), { algorithm: 'HS256' })
    const key = h.client({ authorization: `Bearer ${await ws.key()}` })
    for (const res of [await key.get(path(ws)), await key.post(path(ws), { algorithm: 'HS256' }), await key.patch(path(ws), { issuer: 'x' }), await key.post(path(ws, '/rotate-secret'))]) {
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('DASHBOARD_ONLY')
    }
    const member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
    const denied = await member.client.get(path(ws))
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe('FORBIDDEN')
    const admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
    expect((await admin.client.post(path(ws, '/rotate-secret'))).status).toBe(200)
    // Another workspace's admin sees nothing.
    const other = await workspaceFixture(h)
    expect((await other.owner.get(path(ws))).status).toBe(404)
    expect((await h.client().get(path(ws))).status).toBe(401)
  })

  test('a revoked key and a foreign-origin cookie write change nothing', async () => {
    const ws = await workspaceFixture(h)
    await ws.owner.post(path(ws), { algorithm: 'HS256', issuer: 'original' })
    const doomed = await ws.key(undefined, 'doomed')
    const [{ id: keyId }] = (await ws.owner.get(`/api/v1/workspaces/${ws.slug}/api-keys`)).body.filter((k: { name: string }) => k.name === 'doomed')
    await ws.owner.delete(`/api/v1/workspaces/${ws.slug}/api-keys/${keyId}`)
    const revoked = await h.client({ authorization: `Bearer ${doomed}` }).patch(path(ws), { issuer: 'hijacked' })
    // The identify setup is dashboard-only: any bearer credential is refused before it is looked up (docs/api.md#credentials).
    expect(revoked.status).toBe(403)
    expect(revoked.body.code).toBe('DASHBOARD_ONLY')
    const forged = await ws.owner.patch(path(ws), { issuer: 'hijacked' }, { headers: { origin: 'https://evil.example' } })
    expect(forged.status).toBe(403)
    expect(forged.body.code).toBe('CSRF_REJECTED')
    const rotated = await ws.owner.post(path(ws, '/rotate-secret'), undefined, { headers: { origin: 'https://evil.example' } })
    expect(rotated.status).toBe(403)
    expect((await row(ws)).issuer).toBe('original')
    expect((await row(ws)).previousSecretSealed).toBeNull()
  })
})
