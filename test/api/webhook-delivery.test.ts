import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { webhookDeliveries, webhookDeliveryLogs, webhooks } from '../../server/db/schema/index.ts'
import { startWebhookRunner, type WebhookRunner } from '../../server/modules/webhooks/runner.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { eventually, startReceiver } from '../helpers/receiver.ts'

let h: Harness
let ws: WorkspaceFixture
let runner: WebhookRunner
let receiver: Awaited<ReturnType<typeof startReceiver>>
let api: ReturnType<Harness['client']>
const base = () => `/api/v1/workspaces/${ws.slug}/webhooks`

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.001' })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  receiver = await startReceiver()
  runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl })
  await runner.ready()
}, 60_000)
afterAll(async () => {
  await runner?.stop()
  receiver?.stop()
  await h.close()
})

const hook = async (path: string, events = ['post.created']) => {
  const res = await api.post(base(), { url: receiver.url(path), events })
  expect(res.status).toBe(201)
  return res.body as { id: string; secret: string }
}

describe('delivery', () => {
  test('a post made over HTTP reaches the receiver within 1 s, signed so standardwebhooks verifies it', async () => {
    const { id, secret } = await hook('/fast')
    const started = Date.now()
    const post = await api.post('/api/v1/boards/ideas/posts', { title: 'Dark mode' })
    expect(post.status).toBe(201)
    const [hit] = await receiver.waitFor('/fast', 1, 1000)
    expect(hit!.at - started).toBeLessThan(1000)
    const headers = Object.fromEntries(hit!.headers)
    const event = new Webhook(secret).verify(hit!.body, headers) as any
    expect(event).toMatchObject({ type: 'post.created', workspace_id: ws.id, data: { post: { id: post.body.id, title: 'Dark mode' } } })
    expect(event.id).toMatch(/^evt_/)
    expect(headers['webhook-id']).toBe(event.id)
    expect(headers['x-chorus-event']).toBe('post.created')
    expect(Object.keys(JSON.parse(hit!.body))).toEqual(['id', 'type', 'timestamp', 'workspace_id', 'data'])
    const logs = await eventually(async () => (await api.get(`${base()}/${id}/logs`)).body.length && (await api.get(`${base()}/${id}/logs`)).body)
    expect(logs[0]).toMatchObject({ webhook_id: id, event_id: event.id, event_type: 'post.created', attempt: 1, success: true, response_status: 200, response_body: 'ok', error: null })
  })
})
