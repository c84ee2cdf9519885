import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { resealLegacySecrets, runDataMigrations } from '../../server/db/data-migrations.ts'
import { jwtConfigs, sendingDomains, webhooks } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { createSecrets, deriveKey, SEALED_PREFIX, sealContext, UnsealError } from '../../server/lib/secrets.ts'
import { senderFor } from '../../server/modules/sending-domain/service.ts'
import { customerToken, identify } from '../helpers/end-users.ts'
import { workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, TEST_SECRET, type Harness } from '../helpers/harness.ts'

// The two formats written before `sealed:v2:`, re-implemented here from their wire description so the
// test does not lean on the code that replaced them.
const encoder = new TextEncoder()
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
async function legacySeal(secretKey: string, purpose: string, plaintext: string, context?: string) {
  const key = await crypto.subtle.importKey('raw', new Uint8Array(await deriveKey(secretKey, purpose)), 'AES-GCM', false, ['encrypt'])
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const params = context === undefined ? { name: 'AES-GCM', iv } : { name: 'AES-GCM', iv, additionalData: encoder.encode(context) }
  const data = new Uint8Array(await crypto.subtle.encrypt(params, key, encoder.encode(plaintext)))
  // crypto.ts (jwt-config secrets): base64url with the workspace as context; seal.ts (webhooks, DKIM): base64, no context.
  return context === undefined ? `v1.${b64(iv)}.${b64(data)}` : `v1.${b64url(iv)}.${b64url(data)}`
}
const oldJwtSeal = (plaintext: string, workspaceId: string, secretKey = TEST_SECRET) => legacySeal(secretKey, 'jwt-config-secrets', plaintext, `jwt-config:${workspaceId}`)
const oldPlainSeal = (plaintext: string, secretKey = TEST_SECRET) => legacySeal(secretKey, 'sealed-secrets', plaintext)

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
beforeAll(async () => {
  h = await startHarness()
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
}, 60_000)
afterAll(() => h.close())

async function insertWebhook(workspaceId: string, secret: string, previousSecret: string | null = null) {
  const id = newId('webhook')
  await h.db.insert(webhooks).values({ id, workspaceId, url: 'https://hooks.example.com/in', events: ['post.created'], secret, previousSecret, previousSecretExpiresAt: previousSecret ? new Date(Date.now() + 3600_000) : null })
  return id
}

describe('happy', () => {
  test('seal and unseal round-trip under a self-describing prefix, with a fresh IV each time', async () => {
    const one = await h.ctx.secrets.seal('hunter2', 'test:1')
    const two = await h.ctx.secrets.seal('hunter2', 'test:1')
    expect(one.startsWith(SEALED_PREFIX)).toBe(true)
    expect(one).not.toBe(two)
    expect(one).not.toContain('hunter2')
    expect(await h.ctx.secrets.unseal(one, 'test:1')).toBe('hunter2')
    expect(await h.ctx.secrets.unseal(two, 'test:1')).toBe('hunter2')
  })

  test('values of both old formats open after the start-up migration, through the routes that use them', async () => {
    const jwtSecret = 'legacy-hs256-secret-0123456789abcdefghijklmnop'
    const previousJwt = 'legacy-previous-secret-0123456789abcdefghijkl'
    await h.db.insert(jwtConfigs).values({ workspaceId: ws.id, algorithm: 'HS256', secretSealed: await oldJwtSeal(jwtSecret, ws.id), previousSecretSealed: await oldJwtSeal(previousJwt, ws.id), previousSecretExpiresAt: new Date(Date.now() + 3600_000) })
    const webhookId = await insertWebhook(ws.id, await oldPlainSeal('whsec_current'), await oldPlainSeal('whsec_previous'))
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIE-legacy\n-----END PRIVATE KEY-----\n'
    await h.db.insert(sendingDomains).values({ workspaceId: ws.id, domain: `${ws.slug}.example.com`, status: 'verified', dkimSelector: 'chorusabc', dkimPublicKey: 'AAAA', dkimPrivateKey: await oldPlainSeal(pem) })

    // Before the migration the current format refuses them: it never guesses which old format a `v1.` value is.
    await expect(h.ctx.secrets.unseal((await h.db.select().from(webhooks).where(eq(webhooks.id, webhookId)))[0]!.secret, sealContext.webhookSecret(webhookId))).rejects.toBeInstanceOf(UnsealError)

    const report = await runDataMigrations(h.db, TEST_SECRET)
    expect(report).toEqual({ resealed: 5, unreadable: 0 })

    const [config] = await h.db.select().from(jwtConfigs).where(eq(jwtConfigs.workspaceId, ws.id))
    const [hook] = await h.db.select().from(webhooks).where(eq(webhooks.id, webhookId))
    const [domain] = await h.db.select().from(sendingDomains).where(eq(sendingDomains.workspaceId, ws.id))
    for (const value of [config!.secretSealed, config!.previousSecretSealed, hook!.secret, hook!.previousSecret, domain!.dkimPrivateKey]) expect(value!.startsWith(SEALED_PREFIX)).toBe(true)

    // The identify route verifies with the re-sealed secret and, in the overlap, the previous one.
    expect((await identify(h, ws.slug, await customerToken(jwtSecret))).status).toBe(200)
    expect((await identify(h, ws.slug, await customerToken(previousJwt))).status).toBe(200)
    expect(await h.ctx.secrets.unseal(hook!.secret, sealContext.webhookSecret(webhookId))).toBe('whsec_current')
    expect(await h.ctx.secrets.unseal(hook!.previousSecret!, sealContext.webhookSecret(webhookId))).toBe('whsec_previous')
    expect((await senderFor(h.db, h.ctx.secrets, ws.id, 'Acme'))!.dkim.privateKey).toBe(pem)

    // Idempotent: a second start changes nothing.
    expect(await runDataMigrations(h.db, TEST_SECRET)).toEqual({ resealed: 0, unreadable: 0 })
    const [again] = await h.db.select().from(webhooks).where(eq(webhooks.id, webhookId))
    expect(again!.secret).toBe(hook!.secret)
  })

  test('the migration runs inside Database.migrate, after the schema', async () => {
    const webhookId = await insertWebhook(other.id, await oldPlainSeal('whsec_via_migrate'))
    await h.database.migrate((db) => runDataMigrations(db, TEST_SECRET).then(() => {}))
    const [hook] = await h.db.select().from(webhooks).where(eq(webhooks.id, webhookId))
    expect(await h.ctx.secrets.unseal(hook!.secret, sealContext.webhookSecret(webhookId))).toBe('whsec_via_migrate')
  })
})

describe('errors', () => {
  test('malformed and old-format values throw UnsealError', async () => {
    for (const value of ['', 'v1.abc.def', `${SEALED_PREFIX}`, `${SEALED_PREFIX}abc`, `${SEALED_PREFIX}a:b:c`, await oldPlainSeal('x')]) {
      await expect(h.ctx.secrets.unseal(value, 'ctx')).rejects.toBeInstanceOf(UnsealError)
    }
  })

  test('an old value sealed under another SECRET_KEY is counted and left alone; start-up goes on', async () => {
    const foreign = await oldPlainSeal('whsec_foreign', 'another-secret-key-that-is-long-enough-000')
    const webhookId = await insertWebhook(other.id, foreign)
    const report = await resealLegacySecrets(h.db, h.ctx.secrets, TEST_SECRET)
    expect(report).toEqual({ resealed: 0, unreadable: 1 })
    const [hook] = await h.db.select().from(webhooks).where(eq(webhooks.id, webhookId))
    expect(hook!.secret).toBe(foreign)
    await h.db.delete(webhooks).where(eq(webhooks.id, webhookId))
  })
})

describe('security', () => {
  test('a value sealed for one row does not open for another, nor for another purpose', async () => {
    const sealed = await h.ctx.secrets.seal('whsec_a', sealContext.webhookSecret('wh_a'))
    await expect(h.ctx.secrets.unseal(sealed, sealContext.webhookSecret('wh_b'))).rejects.toBeInstanceOf(UnsealError)
    await expect(h.ctx.secrets.unseal(sealed, sealContext.jwtConfigSecret('wh_a'))).rejects.toBeInstanceOf(UnsealError)
  })

  test('a re-sealed secret copied into another workspace\'s row does not verify there', async () => {
    const [config] = await h.db.select().from(jwtConfigs).where(eq(jwtConfigs.workspaceId, ws.id))
    await h.db.insert(jwtConfigs).values({ workspaceId: other.id, algorithm: 'HS256', secretSealed: config!.secretSealed })
    const res = await identify(h, other.slug, await customerToken('legacy-hs256-secret-0123456789abcdefghijklmnop'))
    expect(res.status).not.toBe(200)
    await expect(h.ctx.secrets.unseal(config!.secretSealed!, sealContext.jwtConfigSecret(other.id))).rejects.toBeInstanceOf(UnsealError)
  })

  test('tampered ciphertext and another SECRET_KEY do not open', async () => {
    const sealed = await h.ctx.secrets.seal('value', 'ctx')
    const tail = sealed.at(-2) === 'A' ? 'B' : 'A'
    await expect(h.ctx.secrets.unseal(`${sealed.slice(0, -2)}${tail}${sealed.at(-1)}`, 'ctx')).rejects.toBeInstanceOf(UnsealError)
    const otherKey = await createSecrets('another-secret-key-that-is-long-enough-000')
    await expect(otherKey.unseal(sealed, 'ctx')).rejects.toBeInstanceOf(UnsealError)
  })

  test('purpose-bound keys differ by purpose and are stable per purpose', async () => {
    const a = await h.ctx.secrets.deriveKey('purpose-a')
    expect(a).toHaveLength(32)
    expect(Buffer.from(a).equals(Buffer.from(await h.ctx.secrets.deriveKey('purpose-b')))).toBe(false)
    expect(Buffer.from(a).equals(Buffer.from(await deriveKey(TEST_SECRET, 'purpose-a')))).toBe(true)
  })
})
