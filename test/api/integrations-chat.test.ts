import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, asc, eq, sql } from 'drizzle-orm'
import { chatChannelMappings, chatDeliveries, chatDeliveryLogs, events, integrations } from '../../server/db/schema/index.ts'
import { claimChatDeliveries } from '../../server/modules/integrations/delivery.ts'
import { dispatchEvents } from '../../server/events/dispatch.ts'
import { newOwner } from '../../server/background/leases.ts'
import { startEventDispatcher, type EventDispatcher } from '../../server/background/dispatcher.ts'
import { startWebhookRunner, type WebhookRunner } from '../../server/background/delivery-runner.ts'
import { CHAT_CLIENT, startFakeChat } from '../helpers/chat-provider.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { capturingLogger, connect, oauthState, plaintextHits } from '../helpers/integrations.ts'
import { eventually } from '../helpers/receiver.ts'
import { compileSql, type SqlRunner } from '../../server/db/sql-text.ts'

let h: Harness
let ws: WorkspaceFixture
let runner: WebhookRunner
// As in a server process: the dispatcher fans events out, the runner's loop delivers.
let dispatcher: EventDispatcher
let chat: ReturnType<typeof startFakeChat>
let api: TestClient
const log = capturingLogger()
const base = () => `/api/v1/workspaces/${ws.slug}/integrations`

beforeAll(async () => {
  chat = startFakeChat()
  h = await startHarness({
    CHAT_API_BASE: chat.base, CHAT_CLIENT_ID: CHAT_CLIENT.id, CHAT_CLIENT_SECRET: CHAT_CLIENT.secret, WEBHOOK_RETRY_SCALE: '0.001',
    // The fake provider listens on loopback: the outbound guard allows it only when the operator says so.
    OPERATOR_URLS_ALLOW_PRIVATE: 'true',
  }, { log })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, ws.id, 'bugs')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
  dispatcher = startEventDispatcher({ db: h.database.sql, log: h.ctx.log, listenForWork: h.database.listenForWork })
  runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl })
  await runner.ready()
}, 60_000)
afterAll(async () => {
  await runner?.stop()
  await dispatcher?.stop()
  chat?.stop()
  await h?.close()
})

const integrationRow = async () => (await h.db.select().from(integrations).where(and(eq(integrations.workspaceId, ws.id), eq(integrations.provider, 'chat'))))[0]
const newPost = async (title: string, board = 'ideas', body = '') => {
  const res = await api.post(`/api/v1/boards/${board}/posts`, { title, body })
  expect(res.status).toBe(201)
  return res.body as { id: string; title: string }
}
const map = async (body: Record<string, unknown>) => {
  const res = await ws.owner.post(`${base()}/chat/channel-mappings`, body)
  expect(res.status).toBe(201)
  return res.body as { id: string }
}
const messagesIn = (channel: string) => chat.state.messages.filter((message) => message.channel === channel)

describe('happy', () => {
  test('before connecting, both providers are listed as disconnected, each with an install state', async () => {
    const res = await ws.owner.get(base())
    expect(res.status).toBe(200)
    expect(res.body.map((entry: any) => entry.provider)).toEqual(['chat', 'tracker'])
    for (const entry of res.body) {
      expect(entry).toMatchObject({ id: null, status: 'disconnected', external_name: null, connected_at: null })
      expect(entry.oauth_state).toMatch(/^\d+\.[\w-]+\.[\w-]+$/)
      expect(Date.parse(entry.oauth_state_expires_at) - Date.now()).toBeGreaterThan(9 * 60_000)
    }
  })

  test('connect: the code is exchanged at oauth.v2.access and the connection stored with its team name, the token sealed', async () => {
    const res = await connect(ws.owner, ws.slug, 'chat', 'good-code')
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ provider: 'chat', status: 'connected', external_id: 'T0001', external_name: 'Acme & Co', token_expires_at: null })
    expect(res.body.id).toMatch(/^int_/)
    const exchange = chat.state.calls.find((call) => call.method === 'oauth.v2.access')!
    expect(exchange.params.get('code')).toBe('good-code')
    expect(exchange.params.get('redirect_uri')).toBe('https://app.example.com/callback')
    const row = (await integrationRow())!
    expect(row.accessToken).not.toContain('xoxb')
    expect(chat.state.tokens.size).toBe(1)
    expect(await plaintextHits(h, [...chat.state.tokens])).toEqual([])
    const listed = await ws.owner.get(base())
    expect(listed.body[0]).toMatchObject({ id: row.id, status: 'connected', external_name: 'Acme & Co' })
  })

  test('channels: the live list follows the cursor over two pages', async () => {
    const before = chat.state.calls.filter((call) => call.method === 'conversations.list').length
    const res = await ws.owner.get(`${base()}/chat/channels`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([
      { id: 'C0000FEED', name: 'feedback', is_private: false, is_member: false },
      { id: 'C0000ROAD', name: 'roadmap', is_private: false, is_member: true },
      { id: 'C0000PRIV', name: 'leadership', is_private: true, is_member: false },
    ])
    const calls = chat.state.calls.filter((call) => call.method === 'conversations.list').slice(before)
    expect(calls.map((call) => call.params.get('cursor'))).toEqual([null, 'page-2'])
    expect(calls[0]!.token).toStartWith('xoxb-')
  })

  test('mappings: create, list, update and delete', async () => {
    const created = await ws.owner.post(`${base()}/chat/channel-mappings`, { channel_id: 'C0000ROAD', events: ['status.changed'] })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ channel_id: 'C0000ROAD', board_slug: null, events: ['status.changed'] })
    expect(created.body.id).toMatch(/^map_/)
    const updated = await ws.owner.patch(`${base()}/chat/channel-mappings/${created.body.id}`, { board_slug: 'bugs', events: ['status.changed', 'comment.created'] })
    expect(updated.status).toBe(200)
    expect(updated.body).toMatchObject({ id: created.body.id, board_slug: 'bugs', events: ['status.changed', 'comment.created'] })
    const listed = await ws.owner.get(`${base()}/chat/channel-mappings`)
    expect(listed.body).toEqual([updated.body])
    expect((await ws.owner.delete(`${base()}/chat/channel-mappings/${created.body.id}`)).status).toBe(204)
    expect((await ws.owner.get(`${base()}/chat/channel-mappings`)).body).toEqual([])
  })

  test('a post made over HTTP arrives in the mapped channel within 5 s as Block Kit, the bot joining the channel first', async () => {
    await map({ channel_id: 'C0000FEED', board_slug: 'ideas', events: ['post.created'] })
    const started = Date.now()
    const post = await newPost('Dark mode <!channel> & <https://evil.example|click>', 'ideas', 'Please add *dark* mode')
    const [message] = await chat.waitForMessages('C0000FEED', 1, 5000)
    expect(message!.at - started).toBeLessThan(5000)
    // The bot was not in the channel: not_in_channel → conversations.join → the post again.
    expect(chat.state.calls.some((call) => call.method === 'conversations.join' && call.params.get('channel') === 'C0000FEED')).toBe(true)
    const link = `http://localhost:3000/portal/${ws.slug}/posts/${post.id}`
    const section = message!.blocks[0].text.text as string
    expect(section).toContain(`<${link}|Dark mode &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;>`)
    expect(section).not.toContain('<!channel>')
    expect(message!.blocks[1].elements[0].text).toBe('Board: *ideas*  ·  Status: *Open*  ·  Votes: *0*')
    expect(message!.text).toBe('New post: Dark mode &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;')
    const logs = await eventually(async () => {
      const rows = await h.db.select().from(chatDeliveryLogs).where(eq(chatDeliveryLogs.eventType, 'post.created'))
      return rows.length > 0 && rows
    })
    expect(logs[0]).toMatchObject({ attempt: 1, success: true, error: null })
  })

  test('events that match no mapping are not sent (another board, another kind)', async () => {
    const sentBefore = chat.state.messages.length
    await newPost('On the bugs board', 'bugs')
    const mapped = await newPost('A second idea')
    await api.post(`/api/v1/posts/${mapped.id}/votes`, { email: 'voter@example.com' })
    await chat.waitForMessages('C0000FEED', 2, 5000)
    await Bun.sleep(300)
    expect(chat.state.messages.slice(sentBefore).map((message) => message.text)).toEqual(['New post: A second idea'])
  })

  test('comments and status changes reach a board mapping through their post, quoted and escaped', async () => {
    await map({ channel_id: 'C0000ROAD', board_slug: 'ideas', events: ['comment.created', 'status.changed'] })
    const post = await newPost('Roadmap item')
    const other = await newPost('Elsewhere', 'bugs')
    expect((await api.post(`/api/v1/posts/${other.id}/comments`, { body: 'not for this channel' })).status).toBe(201)
    expect((await api.post(`/api/v1/posts/${post.id}/comments`, { body: 'Yes *please* <@U123>\nsoon' })).status).toBe(201)
    expect((await api.patch(`/api/v1/posts/${post.id}`, { status: 'Planned' })).status).toBe(200)
    // Jobs are sent concurrently, so the two may arrive in either order.
    const arrived = await chat.waitForMessages('C0000ROAD', 2, 5000)
    const comment = arrived.find((message) => message.text.startsWith('New comment'))
    const status = arrived.find((message) => message.text.startsWith('Status changed'))
    expect(comment!.blocks[0].text.text).toContain('> Yes *please* &lt;@U123&gt;\n> soon')
    expect(comment!.blocks[1].elements[0].text).toContain('Board: *ideas*')
    expect(status!.blocks[0].text.text).toContain('Open → *Planned*')
    expect(status!.text).toBe('Status changed: Roadmap item (Open → Planned)')
    await Bun.sleep(200)
    expect(messagesIn('C0000ROAD')).toHaveLength(2)
  })

  test('a provider outage is retried on the schedule, every attempt logged, then delivered', async () => {
    const sent = messagesIn('C0000FEED').length
    chat.state.outages = 2
    const post = await newPost('Survives an outage')
    const messages = await chat.waitForMessages('C0000FEED', sent + 1, 5000)
    expect(messages.at(-1)!.text).toBe('New post: Survives an outage')
    const [event] = await h.db.select().from(events).where(sql`${events.data}->'post'->>'id' = ${post.id}`)
    const logs = await eventually(async () => {
      const rows = await h.db.select().from(chatDeliveryLogs).where(eq(chatDeliveryLogs.eventId, event!.id)).orderBy(asc(chatDeliveryLogs.attempt))
      return rows.length >= 3 && rows
    })
    expect(logs.map((row) => [row.attempt, row.success, row.error])).toEqual([[1, false, 'HTTP 503'], [2, false, 'HTTP 503'], [3, true, null]])
  })

  test('a message claimed by a process that then died is sent by the next one (nothing lost across a crash)', async () => {
    // Both background loops stop: the dispatcher's own queue transactions would interleave with the claim's
    // statements in the query log read below.
    await runner.stop()
    await dispatcher.stop()
    const sent = messagesIn('C0000FEED').length
    const post = await newPost('Claimed, then the process crashed')
    // What a dying process leaves behind: the event fanned out and its chat job leased to an owner
    // that holds no advisory lock any more.
    await dispatchEvents(h.database.sql)
    h.queries.length = 0
    const leased = await claimChatDeliveries(h.db, newOwner(), 10)
    // The lease runs in a queue transaction (server/db/work.ts): planned for the queue's size today.
    const lease = h.queries.findIndex((query) => query.includes('with live as materialized'))
    expect(h.queries[lease - 1]).toContain("set_config('plan_cache_mode', 'force_custom_plan', true)")
    expect(leased.map((job) => job.event.data)).toEqual([expect.objectContaining({ post: expect.objectContaining({ id: post.id }) })])
    const [job] = await h.db.select().from(chatDeliveries).where(eq(chatDeliveries.eventId, leased[0]!.eventId))
    expect(job!.leaseOwner).not.toBeNull()
    dispatcher = startEventDispatcher({ db: h.database.sql, log: h.ctx.log, listenForWork: h.database.listenForWork })
    runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl })
    await runner.ready()
    const messages = await chat.waitForMessages('C0000FEED', sent + 1, 5000)
    expect(messages.at(-1)!.text).toBe('New post: Claimed, then the process crashed')
  })

  test('a chat claim that committed but whose answer was lost is sent within seconds, not when its lease lapses (60 s), and once', async () => {
    await runner.stop()
    const sent = messagesIn('C0000FEED').length
    // The database's runner, except that the first chat claim to lease a job commits and then throws, as when
    // the connection drops with the answer on its way: the loop never hears of the lease it now holds.
    let lostAt = 0
    const real = h.database.sql
    const losing: SqlRunner = {
      rows: (statement) => real.rows(statement),
      async transaction(work) {
        let chatClaim = false
        const result = await real.transaction((tx) => work({
          rows: (statement) => {
            const { text } = compileSql(statement)
            if (text.includes('with live as materialized') && text.includes('chat_deliveries')) chatClaim = true
            return tx.rows(statement)
          },
          transaction: (inner) => tx.transaction(inner),
        }))
        if (chatClaim && !lostAt && Array.isArray(result) && result.length) {
          lostAt = Date.now()
          throw new Error('injected: the connection dropped after the chat claim committed')
        }
        return result
      },
    }
    runner = await startWebhookRunner({ ...h.ctx, database: { ...h.ctx.database, sql: losing } }, { databaseUrl: h.databaseUrl })
    try {
      await runner.ready()
      const post = await newPost('Claimed, then the answer was lost')
      const messages = await chat.waitForMessages('C0000FEED', sent + 1, 15_000)
      expect(lostAt).toBeGreaterThan(0)
      expect(messages.at(-1)!.at - lostAt).toBeLessThan(15_000)
      expect(messages.at(-1)!.text).toBe('New post: Claimed, then the answer was lost')
      await Bun.sleep(500)
      expect(messagesIn('C0000FEED').filter((message) => message.text === 'New post: Claimed, then the answer was lost')).toHaveLength(1)
      // Its delivery is recorded done and holds no lease.
      const jobOf = async () => (await h.db.select({ status: chatDeliveries.status, leaseOwner: chatDeliveries.leaseOwner }).from(chatDeliveries)
        .innerJoin(events, eq(events.id, chatDeliveries.eventId)).where(sql`${events.data}->'post'->>'id' = ${post.id}`))[0]
      await eventually(async () => (await jobOf())?.status === 'done')
      expect(await jobOf()).toEqual({ status: 'done', leaseOwner: null })
    } finally {
      await runner.stop()
      runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl })
      await runner.ready()
    }
  })

  test('rotating tokens are refreshed before they expire, and the new pair is stored', async () => {
    chat.state.rotateEvery = 120 // inside the 5-minute margin: every use refreshes
    chat.state.codes.add('rotating-code')
    const res = await connect(ws.owner, ws.slug, 'chat', 'rotating-code')
    expect(res.status).toBe(201)
    expect(Date.parse(res.body.token_expires_at) - Date.now()).toBeGreaterThan(100_000)
    const first = (await integrationRow())!
    const refreshesBefore = chat.state.calls.filter((call) => call.params.get('grant_type') === 'refresh_token').length
    expect((await ws.owner.get(`${base()}/chat/channels`)).status).toBe(200)
    expect((await ws.owner.get(`${base()}/chat/channels`)).status).toBe(200)
    const refreshes = chat.state.calls.filter((call) => call.params.get('grant_type') === 'refresh_token').slice(refreshesBefore)
    // Two refreshes, the second with the refresh token the first returned: the rotated pair was persisted.
    expect(refreshes).toHaveLength(2)
    expect(refreshes[0]!.params.get('refresh_token')).not.toBe(refreshes[1]!.params.get('refresh_token'))
    const after = (await integrationRow())!
    expect(after.id).toBe(first.id)
    expect(after.accessToken).not.toBe(first.accessToken)
    expect(after.refreshToken).not.toBe(first.refreshToken)
    const lists = chat.state.calls.filter((call) => call.method === 'conversations.list').slice(-2)
    expect(lists.every((call) => call.token!.startsWith('xoxe.xoxb-'))).toBe(true)
    chat.state.rotateEvery = null
  })
})

describe('errors', () => {
  test('a refused code is 502 UPSTREAM_ERROR with the provider error, and nothing is stored', async () => {
    const other = await workspaceFixture(h)
    const res = await connect(other.owner, other.slug, 'chat', 'wrong-code')
    expect(res.status).toBe(502)
    expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', detail: 'invalid_code' })
    expect(res.body.request_id).toMatch(/^req_/)
    expect(await h.db.select().from(integrations).where(eq(integrations.workspaceId, other.id))).toEqual([])
  })

  test('a provider that fails a live call is 502 with its error, never a 500', async () => {
    chat.state.failWith = 'internal_error'
    const res = await ws.owner.get(`${base()}/chat/channels`)
    chat.state.failWith = null
    expect(res.status).toBe(502)
    expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', detail: 'internal_error' })
    expect((await integrationRow())!.status).toBe('active')
  })

  test('bad bodies are 422 and write nothing', async () => {
    const state = await oauthState(ws.owner, ws.slug, 'chat')
    for (const body of [{ state }, { code: 5, state }, { code: 'x', state, extra: 1 }, { code: '' , state }]) {
      const res = await ws.owner.post(`${base()}/chat/oauth`, body)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_ERROR')
    }
    const before = (await h.db.select().from(chatChannelMappings)).length
    for (const body of [
      { channel_id: 'C0000FEED', events: ['post.exploded'] },
      { channel_id: 'C0000FEED', events: [] },
      { channel_id: 'C0000FEED' },
      { channel_id: 'not a channel!', events: ['post.created'] },
      { channel_id: 'C0000FEED', events: ['post.created'], board_slug: 'no-such-board' },
    ]) {
      const res = await ws.owner.post(`${base()}/chat/channel-mappings`, body)
      expect(res.status).toBe(422)
    }
    expect((await ws.owner.patch(`${base()}/chat/channel-mappings/map_x`, {})).status).toBe(422)
    expect((await h.db.select().from(chatChannelMappings)).length).toBe(before)
  })

  test('unknown mappings are 404; mapping without a chat connection is 409', async () => {
    expect((await ws.owner.patch(`${base()}/chat/channel-mappings/map_nope`, { events: ['post.created'] })).status).toBe(404)
    expect((await ws.owner.delete(`${base()}/chat/channel-mappings/map_nope`)).status).toBe(404)
    const other = await workspaceFixture(h)
    const res = await other.owner.post(`/api/v1/workspaces/${other.slug}/integrations/chat/channel-mappings`, { channel_id: 'C0000FEED', events: ['post.created'] })
    expect(res.status).toBe(409)
    expect((await other.owner.get(`/api/v1/workspaces/${other.slug}/integrations/chat/channels`)).status).toBe(409)
    expect((await other.owner.delete(`/api/v1/workspaces/${other.slug}/integrations/chat`)).status).toBe(404)
  })
})

describe('security', () => {
  test('API keys get 403 DASHBOARD_ONLY on all eleven routes, even with every scope', async () => {
    const routes: [string, string, unknown?][] = [
      ['GET', ''], ['POST', '/chat/oauth', { code: 'x', state: 'y' }], ['DELETE', '/chat'], ['GET', '/chat/channels'],
      ['POST', '/chat/channel-mappings', { channel_id: 'C1', events: ['post.created'] }], ['GET', '/chat/channel-mappings'],
      ['PATCH', '/chat/channel-mappings/map_x', { events: ['post.created'] }], ['DELETE', '/chat/channel-mappings/map_x'],
      ['POST', '/tracker/oauth', { code: 'x', state: 'y' }], ['DELETE', '/tracker'], ['GET', '/tracker/teams'],
    ]
    for (const [method, path, body] of routes) {
      const res = await api.call(method, `${base()}${path}`, { body })
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, 'DASHBOARD_ONLY'])
    }
  })

  test('members who are not admins get 403; admins may; other workspaces are 404', async () => {
    const member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
    expect((await member.client.get(base())).status).toBe(403)
    expect((await member.client.get(`${base()}/chat/channel-mappings`)).body.code).toBe('FORBIDDEN')
    const admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
    expect((await admin.client.get(`${base()}/chat/channel-mappings`)).status).toBe(200)
    const stranger = await workspaceFixture(h)
    expect((await stranger.owner.get(base())).status).toBe(404)
    expect((await stranger.owner.delete(`${base()}/chat`)).status).toBe(404)
  })

  test("the OAuth state is bound to the admin's session, the workspace and the provider", async () => {
    const admin = await addMember(h, ws, `admin2-${ws.slug}@example.com`, 'admin')
    chat.state.codes.add('state-code')
    const foreign = await oauthState(admin.client, ws.slug, 'chat')
    const wrongProvider = await oauthState(ws.owner, ws.slug, 'tracker')
    const mine = await oauthState(ws.owner, ws.slug, 'chat')
    const other = await workspaceFixture(h)
    const otherWorkspace = await oauthState(other.owner, other.slug, 'chat')
    const [issued, nonce, mac] = mine.split('.')
    for (const state of [foreign, wrongProvider, `${Number(issued) - 3600}.${nonce}.${mac}`, `${issued}.${nonce}.${mac!.slice(0, -2)}xx`, 'garbage']) {
      const res = await ws.owner.post(`${base()}/chat/oauth`, { code: 'state-code', state })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('FORBIDDEN')
    }
    const crossed = await other.owner.post(`/api/v1/workspaces/${other.slug}/integrations/chat/oauth`, { code: 'state-code', state: mine })
    expect(crossed.status).toBe(403)
    expect(otherWorkspace).not.toBe(mine)
    // The code was never spent on a refused state.
    expect(chat.state.codes.has('state-code')).toBe(true)
  })

  test('a revoked token marks the integration as error and stops retrying', async () => {
    chat.state.failWith = 'token_revoked'
    const callsBefore = chat.state.calls.filter((call) => call.method === 'chat.postMessage').length
    await newPost('After the revocation')
    const row = await eventually(async () => {
      const current = await integrationRow()
      return current?.status === 'error' && current
    })
    expect(row.statusReason).toContain('token_revoked')
    await Bun.sleep(500)
    // One attempt, no retries (the retry schedule at this scale would have made several by now).
    expect(chat.state.calls.filter((call) => call.method === 'chat.postMessage').length - callsBefore).toBe(1)
    const pending = await h.db.select().from(chatDeliveries).where(eq(chatDeliveries.status, 'pending'))
    expect(pending).toEqual([])
    const listed = await ws.owner.get(base())
    expect(listed.body[0]).toMatchObject({ status: 'error', status_reason: expect.stringContaining('token_revoked') })
    // While in error, new events queue nothing, and live calls say to reconnect.
    await newPost('Nobody hears this')
    await Bun.sleep(300)
    expect(chat.state.calls.filter((call) => call.method === 'chat.postMessage').length - callsBefore).toBe(1)
    expect((await ws.owner.get(`${base()}/chat/channels`)).status).toBe(409)
    chat.state.failWith = null
    chat.state.codes.add('reconnect-code')
    const reconnected = await connect(ws.owner, ws.slug, 'chat', 'reconnect-code')
    expect(reconnected.body).toMatchObject({ status: 'connected', status_reason: null, id: row.id })
  })

  test('disconnect deletes the tokens, the mappings and pending messages', async () => {
    const tokens = [...chat.state.tokens]
    expect((await ws.owner.delete(`${base()}/chat`)).status).toBe(204)
    expect(await integrationRow()).toBeUndefined()
    expect(await h.db.select().from(chatChannelMappings).where(eq(chatChannelMappings.workspaceId, ws.id))).toEqual([])
    expect(await plaintextHits(h, tokens)).toEqual([])
    expect((await ws.owner.get(base())).body[0]).toMatchObject({ status: 'disconnected', id: null })
    expect((await ws.owner.delete(`${base()}/chat`)).status).toBe(404)
  })

  test('provider calls go through the outbound guard: a loopback provider is refused unless the operator allows it', async () => {
    const guarded = await startHarness({ CHAT_API_BASE: chat.base, CHAT_CLIENT_ID: CHAT_CLIENT.id, CHAT_CLIENT_SECRET: CHAT_CLIENT.secret })
    try {
      const other = await workspaceFixture(guarded)
      chat.state.codes.add('guarded-code')
      const calls = chat.state.calls.length
      const res = await connect(other.owner, other.slug, 'chat', 'guarded-code')
      expect(res.status).toBe(502)
      expect(res.body.code).toBe('UPSTREAM_ERROR')
      expect(res.body.detail).toContain('refused by the outbound guard')
      expect(chat.state.calls.length).toBe(calls)
    } finally {
      await guarded.close()
    }
  })

  test('no provider token or client secret ever reaches the log', () => {
    const logged = log.lines.join('\n')
    expect(chat.state.issued).toBeGreaterThan(2)
    expect(logged).not.toContain('xoxb-fake')
    expect(logged).not.toContain('xoxe-1-refresh')
    expect(logged).not.toContain(CHAT_CLIENT.secret)
  })
})
