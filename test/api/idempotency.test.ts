import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { emailOutbox, idempotencyKeys, members } from '../../server/db/schema/index.ts'
import { requestFingerprint } from '../../server/plugins/idempotency.ts'
import { workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

describe('happy', () => {
  test('the same key and body replays the first response without repeating the work', async () => {
    const ws = await workspaceFixture(h)
    const path = `/api/v1/workspaces/${ws.slug}/members`
    const body = { email: 'once-only@example.com', role: 'member' }
    const first = await ws.owner.post(path, body, { headers: { 'idempotency-key': 'invite-1' } })
    expect(first.status).toBe(201)
    const replay = await ws.owner.post(path, body, { headers: { 'idempotency-key': 'invite-1' } })
    expect(replay.status).toBe(201)
    expect(replay.body).toEqual(first.body)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(await h.db.select().from(emailOutbox).where(eq(emailOutbox.to, 'once-only@example.com'))).toHaveLength(1)
    // Without the key the same request is a new request (here: a conflict, the address is invited already).
    const again = await ws.owner.post(path, { email: 'second@example.com', role: 'member' }, { headers: { 'idempotency-key': 'invite-2' } })
    expect(again.status).toBe(201)
  })
})

describe('errors', () => {
  test('the same key with another body is 422 IDEMPOTENCY_MISMATCH', async () => {
    const ws = await workspaceFixture(h)
    const path = `/api/v1/workspaces/${ws.slug}/members`
    await ws.owner.post(path, { email: 'first-body@example.com', role: 'member' }, { headers: { 'idempotency-key': 'k' } })
    const mismatch = await ws.owner.post(path, { email: 'other-body@example.com', role: 'member' }, { headers: { 'idempotency-key': 'k' } })
    expect(mismatch.status).toBe(422)
    expect(mismatch.body.code).toBe('IDEMPOTENCY_MISMATCH')
    expect(mismatch.body.detail[0].loc).toEqual(['header', 'idempotency-key'])
    const invited = await h.db.select().from(members).where(and(eq(members.workspaceId, ws.id), eq(members.status, 'pending')))
    expect(invited).toHaveLength(1)
  })

  test('a twin still in flight is 409 CONFLICT; a failed request releases its key', async () => {
    const ws = await workspaceFixture(h)
    const path = `/api/v1/workspaces/${ws.slug}/members`
    const body = { email: 'inflight@example.com', role: 'member' }
    const scope = `${ws.id}:${ws.ownerId}`
    await h.db.insert(idempotencyKeys).values({ scope, key: 'busy', requestHash: await requestFingerprint('POST', path, body) })
    const busy = await ws.owner.post(path, body, { headers: { 'idempotency-key': 'busy' } })
    expect(busy.status).toBe(409)
    expect(busy.body.code).toBe('CONFLICT')

    const failing = { email: `owner-${ws.slug}@example.com`, role: 'member' } // already a member → 409 from the service
    expect((await ws.owner.post(path, failing, { headers: { 'idempotency-key': 'will-fail' } })).status).toBe(409)
    await Bun.sleep(50) // the key is released after the response is sent
    expect(await h.db.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, 'will-fail')))).toHaveLength(0)
  })
})

describe('security', () => {
  test('keys are scoped per workspace and credential', async () => {
    const a = await workspaceFixture(h)
    const b = await workspaceFixture(h)
    const first = await a.owner.post(`/api/v1/workspaces/${a.slug}/members`, { email: 'shared@example.com', role: 'member' }, { headers: { 'idempotency-key': 'same' } })
    const second = await b.owner.post(`/api/v1/workspaces/${b.slug}/members`, { email: 'shared@example.com', role: 'member' }, { headers: { 'idempotency-key': 'same' } })
    expect(first.status).toBe(201)
    expect(second.status).toBe(201)
    expect(second.headers.get('idempotent-replayed')).toBeNull()
  })
})
