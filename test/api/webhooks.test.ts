import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { events, webhookDeliveryLogs, webhooks } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { startEventDispatcher, type EventDispatcher } from '../../server/background/dispatcher.ts'
import { startWebhookRunner, type WebhookRunner } from '../../server/background/delivery-runner.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startDnsServer } from '../helpers/dns-server.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { eventually, startReceiver } from '../helpers/receiver.ts'

// The default configuration: private targets refused. Host names resolve through a local DNS server.
let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let dns: Awaited<ReturnType<typeof startDnsServer>>
let receiver: Awaited<ReturnType<typeof startReceiver>>
let runner: WebhookRunner
// As in a server process: the dispatcher fans events out, the runner's loop delivers.
let dispatcher: EventDispatcher
// hooks.example.com resolves to a public address that no test may contact: only the rebinding test makes
// a post (in its own workspace), and the events inserted for log tests are of a kind no endpoint here takes.
let api: ReturnType<Harness['client']>
const base = (slug = ws.slug) => `/api/v1/workspaces/${slug}/webhooks`
const valid = { url: 'https://hooks.example.com/chorus', events: ['post.created', 'status.changed'] }

beforeAll(async () => {
  dns = await startDnsServer()
  dns.records.A.set('hooks.example.com', ['93.184.216.34'])
  h = await startHarness({ DNS_RESOLVER: dns.address })
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  receiver = await startReceiver()
  dispatcher = startEventDispatcher({ db: h.database.sql, log: h.ctx.log, listenForWork: h.database.listenForWork })
  runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl })
  await runner.ready()
}, 60_000)
// Endpoints here resolve to a public address through the test DNS server; this machine must never
// connect there, so none stays enabled past the test that made it (events of a later test would reach it).
afterEach(async () => {
  await h.db.update(webhooks).set({ enabled: false }).where(sql`${webhooks.url} !~ '^https?://(127\.0\.0\.1|localhost)[:/]'`)
})
afterAll(async () => {
  await runner?.stop()
  await dispatcher?.stop()
  receiver?.stop()
  await dns?.close()
  await h.close()
})

let webhookId: string
const eventId = newId('event')
beforeAll(async () => {
  webhookId = (await api.post(base(), valid)).body.id
  await api.patch(`${base()}/${webhookId}`, { enabled: false })
  await h.db.insert(events).values({ id: eventId, workspaceId: ws.id, type: 'vote.deleted', data: {} })
  const start = Date.now() - 60_000
  await h.db.insert(webhookDeliveryLogs).values(Array.from({ length: 7 }, (_, i) => ({
    id: newId('deliveryLog'), webhookId, eventId, eventType: 'post.created', attempt: i + 1, success: i === 6,
    responseStatus: i === 6 ? 200 : 500, durationMs: 10 + i, createdAt: new Date(start + i * 1000),
  })))
})

describe('happy', () => {
  test('create returns the secret once; list, update and delete', async () => {
    const created = await api.post(base(), { ...valid, description: 'CRM sync' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ url: valid.url, events: valid.events, description: 'CRM sync', enabled: true, disabled_reason: null })
    expect(created.body.id).toMatch(/^wh_[0-9a-z]{25}$/)
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32)
    const [stored] = await h.db.select().from(webhooks).where(eq(webhooks.id, created.body.id))
    expect(stored!.secret).not.toContain(created.body.secret.slice(6))

    const listed = await api.get(base())
    expect(listed.status).toBe(200)
    const item = listed.body.find((w: any) => w.id === created.body.id)
    expect(item).toMatchObject({ url: valid.url, enabled: true })
    expect(item.secret).toBeUndefined()

    const updated = await api.patch(`${base()}/${created.body.id}`, { events: ['comment.created'], description: null, enabled: false })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ events: ['comment.created'], description: null, enabled: false })
    expect(updated.body.secret).toBeUndefined()
    expect((await api.patch(`${base()}/${created.body.id}`, { enabled: true })).body.enabled).toBe(true)

    expect((await api.delete(`${base()}/${created.body.id}`)).status).toBe(204)
    expect((await api.delete(`${base()}/${created.body.id}`)).status).toBe(404)
  })

  test('newest first, with limit, offset and the success filter', async () => {
    const all = (await api.get(`${base()}/${webhookId}/logs`)).body
    expect(all.map((log: any) => log.attempt)).toEqual([7, 6, 5, 4, 3, 2, 1])
    expect(all[0]).toMatchObject({ webhook_id: webhookId, event_id: eventId, event_type: 'post.created', success: true, response_status: 200, response_body: null, error: null, duration_ms: 16 })
    expect((await api.get(`${base()}/${webhookId}/logs?limit=2&offset=1`)).body.map((log: any) => log.attempt)).toEqual([6, 5])
    expect((await api.get(`${base()}/${webhookId}/logs?success=false&limit=100`)).body).toHaveLength(6)
    expect((await api.get(`${base()}/${webhookId}/logs?success=true`)).body.map((log: any) => log.attempt)).toEqual([7])
    expect((await api.get(`${base()}/${webhookId}/logs?offset=50`)).body).toEqual([])
  })
})

describe('errors', () => {
  test.each([
    ['an unknown event kind', { ...valid, events: ['post.exploded'] }],
    ['no event kinds', { ...valid, events: [] }],
    ['repeated event kinds', { ...valid, events: ['post.created', 'post.created'] }],
    ['an unknown field', { ...valid, secret: 'mine' }],
    ['no URL', { events: valid.events }],
    ['a URL that is not one', { ...valid, url: 'not a url' }],
    ['a non-http scheme', { ...valid, url: 'ftp://hooks.example.com/x' }],
    ['credentials in the URL', { ...valid, url: 'https://user:pass@hooks.example.com/x' }],
    ['a host that does not resolve', { ...valid, url: 'https://nowhere.example.com/x' }],
  ])('%s is 422', async (_, body) => {
    const res = await api.post(base(), body)
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('VALIDATION_ERROR')
    expect(res.body.detail[0].loc[0]).toBe('body')
  })

  test('an empty update is 422; an unknown webhook is 404', async () => {
    const { body } = await api.post(base(), valid)
    expect((await api.patch(`${base()}/${body.id}`, {})).status).toBe(422)
    expect((await api.patch(`${base()}/${body.id}`, { events: ['nope'] })).status).toBe(422)
    expect((await api.patch(`${base()}/wh_missing`, { enabled: false })).status).toBe(404)
  })

  test.each(['limit=0', 'limit=101', 'limit=ten', 'offset=-1', 'success=maybe', 'page=2'])('%s is 422', async (query) => {
    const res = await api.get(`${base()}/${webhookId}/logs?${query}`)
    expect(res.status).toBe(422)
    expect(res.body.code).toBe('VALIDATION_ERROR')
  })

  test('retrying a log of a disabled endpoint is 409; an unknown log is 404', async () => {
    const [log] = (await api.get(`${base()}/${webhookId}/logs?limit=1`)).body
    const res = await api.post(`${base()}/logs/${log.id}/retry`)
    expect(res.status).toBe(409)
    expect((await api.post(`${base()}/logs/dlv_unknown/retry`)).status).toBe(404)
  })
})

describe('security', () => {
  test('an admin session manages webhooks too; a member is refused', async () => {
    const session = { headers: {} }
    expect((await ws.owner.post(base(), valid, session)).status).toBe(201)
    const admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
    expect((await admin.client.get(base())).status).toBe(200)
    const member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
    const refused = await member.client.get(base())
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe('FORBIDDEN')
  })

  test.each([
    'http://127.0.0.1/hook', 'http://127.1.2.3:8080/hook', 'http://[::1]/hook', 'http://0.0.0.0/hook', 'http://[::]/hook',
    'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://10.0.0.5/hook', 'http://172.16.3.4/hook',
    'http://192.168.1.1/hook', 'http://100.64.0.1/hook', 'http://[fe80::1]/hook', 'http://[fc00::1]/hook',
    'http://[::ffff:127.0.0.1]/hook', 'http://[::ffff:a9fe:a9fe]/hook', 'http://[64:ff9b::10.0.0.1]/hook', 'http://2130706433/hook',
  ])('%s is refused at creation', async (url) => {
    const res = await api.post(base(), { ...valid, url })
    expect(res.status).toBe(422)
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'url'] })
    expect(res.body.detail[0].msg).toMatch(/address/)
  })

  test('a name that resolves to a private address is refused, even if one of its addresses is public', async () => {
    dns.records.A.set('intranet.example.com', ['192.168.10.20'])
    dns.records.A.set('mixed.example.com', ['93.184.216.34'])
    dns.records.AAAA.set('mixed.example.com', ['::1'])
    for (const host of ['intranet.example.com', 'mixed.example.com']) {
      const res = await api.post(base(), { ...valid, url: `https://${host}/hook` })
      expect(res.status).toBe(422)
      expect(res.body.detail[0].msg).toContain('resolves to')
    }
  })

  test('a name that passed at creation but resolves to loopback at delivery is refused then, without connecting', async () => {
    // Its own workspace: the endpoints of the others point at a public address that no test may contact.
    const own = await workspaceFixture(h)
    await boardFixture(h, own.id, 'ideas')
    const ownApi = h.client({ authorization: `Bearer ${await own.key()}` })
    dns.records.A.set('rebind.example.com', ['93.184.216.34'])
    const created = await ownApi.post(base(own.slug), { url: `http://rebind.example.com:${receiver.port}/rebind`, events: ['post.created'] })
    expect(created.status).toBe(201)
    dns.records.A.set('rebind.example.com', ['127.0.0.1'])
    const rebindPost = await ownApi.post('/api/v1/boards/ideas/posts', { title: 'Rebinding' })
    expect(rebindPost.status).toBe(201)
    {
      const [log] = await eventually(async () => { const logs = (await ownApi.get(`${base(own.slug)}/${created.body.id}/logs`)).body; return logs.length && logs })
      expect(log).toMatchObject({ success: false, response_status: null, attempt: 1 })
      expect(log.error).toMatch(/^Refused: rebind\.example\.com resolves to 127\.0\.0\.1/)
      expect(receiver.to('/rebind')).toHaveLength(0)
    }
  }, 20_000)

  test('keys need webhooks:read to list and webhooks:write to change', async () => {
    const reader = h.client({ authorization: `Bearer ${await ws.key(['webhooks:read'])}` })
    expect((await reader.get(base())).status).toBe(200)
    const denied = await reader.post(base(), valid)
    expect(denied.status).toBe(403)
    expect(denied.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'webhooks:write' })
    const { body } = await api.post(base(), valid)
    for (const [method, path] of [['PATCH', `${base()}/${body.id}`], ['DELETE', `${base()}/${body.id}`], ['POST', `${base()}/${body.id}/rotate-secret`], ['POST', `${base()}/logs/dlv_x/retry`]] as const) {
      const res = await reader.call(method, path, method === 'PATCH' ? { body: { enabled: false } } : {})
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'webhooks:write' })
    }
    const postsOnly = h.client({ authorization: `Bearer ${await ws.key(['posts:read'])}` })
    expect((await postsOnly.get(base())).body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'webhooks:read' })
    expect((await postsOnly.get(`${base()}/${body.id}/logs`)).body.required_scope).toBe('webhooks:read')
  })

  test("another workspace's endpoints, logs and slug are 404", async () => {
    const theirs = await other.owner.post(base(other.slug), valid)
    expect(theirs.status).toBe(201)
    // The retry below queues a real delivery: point it where the guard refuses it, never at the public address.
    await h.db.update(webhooks).set({ url: 'http://127.0.0.1:9/refused' }).where(eq(webhooks.id, theirs.body.id))
    const logId = newId('deliveryLog')
    const eventId = newId('event')
    await h.db.insert(events).values({ id: eventId, workspaceId: other.id, type: 'vote.deleted', data: {} })
    await h.db.insert(webhookDeliveryLogs).values({ id: logId, webhookId: theirs.body.id, eventId, eventType: 'post.created', attempt: 1, success: true, durationMs: 3 })
    expect((await api.get(base(other.slug))).status).toBe(404)
    expect((await api.patch(`${base()}/${theirs.body.id}`, { enabled: false })).status).toBe(404)
    expect((await api.delete(`${base()}/${theirs.body.id}`)).status).toBe(404)
    expect((await api.get(`${base()}/${theirs.body.id}/logs`)).status).toBe(404)
    expect((await api.post(`${base()}/${theirs.body.id}/rotate-secret`)).status).toBe(404)
    expect((await api.post(`${base()}/logs/${logId}/retry`)).status).toBe(404)
    expect((await other.owner.post(`${base(other.slug)}/logs/${logId}/retry`)).status).toBe(202)
  })
})
