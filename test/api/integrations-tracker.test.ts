import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { events, integrations, posts, trackerWebhookDeliveries } from '../../server/db/schema/index.ts'
import { CHAT_CLIENT, startFakeChat } from '../helpers/chat-provider.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { capturingLogger, connect, pgDump, plaintextHits } from '../helpers/integrations.ts'
import { issueUpdate, startFakeTracker, TRACKER_CLIENT, TRACKER_ORG, TRACKER_WEBHOOK_SECRET, trackerDelivery } from '../helpers/tracker-provider.ts'

let h: Harness
let ws: WorkspaceFixture
let tracker: ReturnType<typeof startFakeTracker>
let chat: ReturnType<typeof startFakeChat>
let api: TestClient
const log = capturingLogger()
const base = () => `/api/v1/workspaces/${ws.slug}/integrations`

beforeAll(async () => {
  tracker = startFakeTracker()
  chat = startFakeChat()
  h = await startHarness({
    TRACKER_API_BASE: tracker.base, TRACKER_CLIENT_ID: TRACKER_CLIENT.id, TRACKER_CLIENT_SECRET: TRACKER_CLIENT.secret, TRACKER_WEBHOOK_SECRET,
    CHAT_API_BASE: chat.base, CHAT_CLIENT_ID: CHAT_CLIENT.id, CHAT_CLIENT_SECRET: CHAT_CLIENT.secret,
    OPERATOR_URLS_ALLOW_PRIVATE: 'true',
  }, { log })
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  api = h.client({ authorization: `Bearer ${await ws.key()}` })
}, 60_000)
afterAll(async () => {
  tracker?.stop()
  chat?.stop()
  await h?.close()
})

const trackerRow = async (workspaceId = ws.id) => (await h.db.select().from(integrations).where(and(eq(integrations.workspaceId, workspaceId), eq(integrations.provider, 'tracker'))))[0]
const newPost = async (title: string, body = '') => {
  const res = await api.post('/api/v1/boards/ideas/posts', { title, body })
  expect(res.status).toBe(201)
  return res.body as { id: string; tracker_issue: unknown; status: string }
}
const deliver = async (payload: Record<string, unknown>, options?: Parameters<typeof trackerDelivery>[1]) => {
  const { raw, headers } = await trackerDelivery(payload, options)
  return h.client().call('POST', '/api/v1/integrations/tracker/webhook', { raw, headers })
}
/** The issue moves to `stateType` in the tracker (what a later GraphQL read of it shows). */
const moveIssue = (issueId: string, stateType: string) => { tracker.state.issues.find((issue) => issue.id === issueId)!.stateType = stateType }
const linkedPost = async (title = 'Export to CSV') => {
  const post = await newPost(title, 'Customers want CSV exports')
  const res = await api.post(`/api/v1/posts/${post.id}/tracker-issue`, { team_id: 'team-eng-0001' })
  expect(res.status).toBe(201)
  return res.body as { id: string; tracker_issue: { id: string; identifier: string; url: string } }
}

describe('happy', () => {
  test('connect: the code is exchanged at /oauth/token, the organization read over GraphQL, tokens sealed with their expiry', async () => {
    const res = await connect(ws.owner, ws.slug, 'tracker', 'tracker-code')
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ provider: 'tracker', status: 'connected', external_id: TRACKER_ORG.id, external_name: TRACKER_ORG.name, scopes: 'read,write' })
    // New tracker tokens expire in 24 h.
    expect(Date.parse(res.body.token_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600_000)
    const exchange = tracker.state.tokenRequests[0]!
    expect(Object.fromEntries(exchange)).toMatchObject({ grant_type: 'authorization_code', code: 'tracker-code', redirect_uri: 'https://app.example.com/callback', client_id: TRACKER_CLIENT.id })
    const row = (await trackerRow())!
    expect(row.accessToken).not.toContain('lin_oauth')
    expect(row.refreshToken).not.toContain('lin_refresh')
    expect(row.refreshToken).not.toBeNull()
  })

  test('teams are listed live from the tracker', async () => {
    const res = await ws.owner.get(`${base()}/tracker/teams`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([{ id: 'team-eng-0001', name: 'Engineering', key: 'ENG' }, { id: 'team-des-0002', name: 'Design', key: 'DES' }])
  })

  test('a key with posts:write makes an issue from a post; the post carries the link (null before, hidden in public)', async () => {
    const post = await newPost('Export to CSV', 'Customers want CSV exports')
    expect(post.tracker_issue).toBeNull()
    const key = await ws.key(['posts:write', 'posts:read'], 'triage bot')
    const res = await h.client({ authorization: `Bearer ${key}` }).post(`/api/v1/posts/${post.id}/tracker-issue`, { team_id: 'team-eng-0001' })
    expect(res.status).toBe(201)
    const issue = tracker.state.issues.at(-1)!
    expect(res.body.tracker_issue).toEqual({ id: issue.id, identifier: 'ENG-1', url: 'https://linear.example/acme/issue/ENG-1' })
    expect(issue).toMatchObject({ teamId: 'team-eng-0001', title: 'Export to CSV' })
    expect(issue.description).toContain('Customers want CSV exports')
    expect(issue.description).toContain(`${BASE}/portal/${ws.slug}/posts/${post.id}`)
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.tracker_issue).toEqual(res.body.tracker_issue)
    const [row] = await h.db.select().from(posts).where(eq(posts.id, post.id))
    expect(row!.trackerIssue).toEqual(res.body.tracker_issue)
    const publicView = await h.client().get(`/api/v1/public/${ws.slug}/posts/${post.id}`)
    expect(publicView.status).toBe(200)
    expect(publicView.body.tracker_issue ?? null).toBeNull()
  })

  test('a member (not an admin) may make an issue from the dashboard', async () => {
    const member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
    const post = await newPost('Member triage')
    const res = await member.client.post(`/api/v1/posts/${post.id}/tracker-issue`, { team_id: 'team-des-0002' }, { headers: { 'x-workspace': ws.slug } })
    expect(res.status).toBe(201)
    expect(res.body.tracker_issue.identifier).toBe('DES-1')
  })

  test('the signed webhook of a completed issue moves the post to the completed status and raises status.changed', async () => {
    const post = await linkedPost()
    moveIssue(post.tracker_issue.id, 'completed')
    const res = await deliver(issueUpdate(post.tracker_issue.id, 'completed'))
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ received: true, outcome: 'applied' })
    const after = await api.get(`/api/v1/posts/${post.id}`)
    expect(after.body).toMatchObject({ status: 'Complete', status_kind: 'complete' })
    const raised = (await h.db.select().from(events).where(and(eq(events.workspaceId, ws.id), eq(events.type, 'status.changed'))))
      .filter((event) => (event.data as any).post.id === post.id)
    expect(raised).toHaveLength(1)
    expect(raised[0]!.data).toMatchObject({ from_status: 'Open', to_status: 'Complete' })
  })

  test('a completed delivery arriving after the issue was reopened is ignored (the state is read again)', async () => {
    const post = await linkedPost('Reopened meanwhile')
    moveIssue(post.tracker_issue.id, 'started')
    const res = await deliver(issueUpdate(post.tracker_issue.id, 'completed'))
    expect(res.body).toEqual({ received: true, outcome: 'ignored' })
    expect(tracker.state.graphql.at(-1)).toMatchObject({ variables: { id: post.tracker_issue.id } })
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Open')
  })

  test('when the tracker cannot be asked, the delivery is 502 and its retry is applied', async () => {
    const post = await linkedPost('Retried delivery')
    moveIssue(post.tracker_issue.id, 'completed')
    const deliveryId = crypto.randomUUID()
    tracker.state.outages = 1
    const failed = await deliver(issueUpdate(post.tracker_issue.id, 'completed'), { deliveryId })
    expect(failed.status).toBe(502)
    expect(failed.body).toMatchObject({ code: 'UPSTREAM_ERROR', detail: 'HTTP 503' })
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Open')
    const retried = await deliver(issueUpdate(post.tracker_issue.id, 'completed'), { deliveryId })
    expect(retried.body).toEqual({ received: true, outcome: 'applied' })
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Complete')
  })

  test('other issue updates are acknowledged and ignored', async () => {
    const post = await linkedPost('Still in progress')
    const res = await deliver(issueUpdate(post.tracker_issue.id, 'started'))
    expect(res.body).toEqual({ received: true, outcome: 'ignored' })
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Open')
    expect((await deliver(issueUpdate('unknown-issue', 'completed'))).body.outcome).toBe('ignored')
  })

  test('tokens about to expire are refreshed with the stored refresh token, and the new pair is kept', async () => {
    const before = (await trackerRow())!
    await h.db.update(integrations).set({ expiresAt: new Date(Date.now() + 60_000) }).where(eq(integrations.id, before.id))
    const res = await ws.owner.get(`${base()}/tracker/teams`)
    expect(res.status).toBe(200)
    const refresh = tracker.state.tokenRequests.at(-1)!
    expect(refresh.get('grant_type')).toBe('refresh_token')
    const after = (await trackerRow())!
    expect(after.accessToken).not.toBe(before.accessToken)
    expect(after.refreshToken).not.toBe(before.refreshToken)
    expect(after.expiresAt!.getTime() - Date.now()).toBeGreaterThan(23 * 3600_000)
    // The GraphQL call used the new token.
    expect(tracker.state.graphql.at(-1)!.token).toStartWith(`lin_oauth_${tracker.state.issued}_`)
  })
})

describe('errors', () => {
  test('a refused code is 502 UPSTREAM_ERROR with the provider error', async () => {
    const other = await workspaceFixture(h)
    const res = await connect(other.owner, other.slug, 'tracker', 'wrong-code')
    expect(res.status).toBe(502)
    expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', detail: 'The authorization code is invalid or expired' })
    expect(await trackerRow(other.id)).toBeUndefined()
  })

  test('an unknown team is 502 with the GraphQL error; the post stays unlinked', async () => {
    const post = await newPost('Unknown team')
    const res = await api.post(`/api/v1/posts/${post.id}/tracker-issue`, { team_id: 'team-nope' })
    expect(res.status).toBe(502)
    expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', detail: 'Entity not found: Team' })
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.tracker_issue).toBeNull()
  })

  test('a post already linked is 409; bad bodies are 422; unknown and foreign posts 404', async () => {
    const post = await linkedPost('Linked once')
    const again = await api.post(`/api/v1/posts/${post.id}/tracker-issue`, { team_id: 'team-eng-0001' })
    expect(again.status).toBe(409)
    for (const body of [{}, { team_id: 5 }, { team_id: '' }, { team_id: 'x', extra: true }]) {
      expect((await api.post(`/api/v1/posts/${post.id}/tracker-issue`, body)).status).toBe(422)
    }
    expect((await api.post('/api/v1/posts/post_nope/tracker-issue', { team_id: 'team-eng-0001' })).status).toBe(404)
    const other = await workspaceFixture(h)
    await boardFixture(h, other.id, 'ideas')
    const otherApi = h.client({ authorization: `Bearer ${await other.key()}` })
    const foreign = await otherApi.post('/api/v1/boards/ideas/posts', { title: 'Theirs' })
    expect((await api.post(`/api/v1/posts/${foreign.body.id}/tracker-issue`, { team_id: 'team-eng-0001' })).status).toBe(404)
    // Their workspace has no tracker: 409, and the provider is never called.
    const calls = tracker.state.graphql.length
    expect((await otherApi.post(`/api/v1/posts/${foreign.body.id}/tracker-issue`, { team_id: 'team-eng-0001' })).status).toBe(409)
    expect(tracker.state.graphql.length).toBe(calls)
  })

  test('a key without posts:write is 403 INSUFFICIENT_SCOPE', async () => {
    const post = await newPost('Scope check')
    const key = await ws.key(['posts:read'], 'reader')
    const res = await h.client({ authorization: `Bearer ${key}` }).post(`/api/v1/posts/${post.id}/tracker-issue`, { team_id: 'team-eng-0001' })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'posts:write' })
  })
})

describe('security', () => {
  test('a badly signed, stale or replayed webhook is refused and changes nothing', async () => {
    const post = await linkedPost('Guarded')
    moveIssue(post.tracker_issue.id, 'completed')
    const payload = issueUpdate(post.tracker_issue.id, 'completed')
    const bad = await deliver(payload, { signature: 'ab'.repeat(32) })
    expect(bad.status).toBe(401)
    const wrongSecret = await deliver(payload, { secret: 'someone-elses-secret' })
    expect(wrongSecret.status).toBe(401)
    const unsigned = await h.client().call('POST', '/api/v1/integrations/tracker/webhook', { raw: JSON.stringify(payload), headers: { 'content-type': 'application/json' } })
    expect(unsigned.status).toBe(401)
    const stale = await deliver(issueUpdate(post.tracker_issue.id, 'completed', Date.now() - 120_000))
    expect(stale.status).toBe(401)
    const future = await deliver(issueUpdate(post.tracker_issue.id, 'completed', Date.now() + 120_000))
    expect(future.status).toBe(401)
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Open')

    // A signed delivery applies once; the same delivery again is refused.
    const deliveryId = crypto.randomUUID()
    const first = await deliver(payload, { deliveryId })
    expect(first.body.outcome).toBe('applied')
    await api.patch(`/api/v1/posts/${post.id}`, { status: 'Open' })
    const replay = await deliver(payload, { deliveryId })
    expect(replay.status).toBe(409)
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Open')
    expect(await h.db.select().from(trackerWebhookDeliveries).where(eq(trackerWebhookDeliveries.deliveryId, deliveryId))).toHaveLength(1)
  })

  test('a delivery from another organization does not touch the post', async () => {
    const post = await linkedPost('Other org')
    const res = await deliver({ ...issueUpdate(post.tracker_issue.id, 'completed'), organizationId: 'org-evil' })
    expect(res.body.outcome).toBe('ignored')
    expect((await api.get(`/api/v1/posts/${post.id}`)).body.status).toBe('Open')
  })

  test('neither provider token is in the database in plaintext (every text column; pg_dump on PostgreSQL)', async () => {
    const chatResult = await connect(ws.owner, ws.slug, 'chat', 'good-code')
    expect(chatResult.status).toBe(201)
    const tokens = [...chat.state.tokens, ...tracker.state.tokens, ...tracker.state.refreshTokens]
    expect(tokens.length).toBeGreaterThanOrEqual(3)
    expect(await plaintextHits(h, tokens)).toEqual([])
    if (h.ctx.database.driver === 'postgres') {
      const dump = await pgDump(h.databaseUrl)
      expect(dump).toContain(ws.id)
      for (const token of tokens) expect(dump).not.toContain(token)
    }
  })

  test('a revoked tracker token is 502 and marks the integration as error', async () => {
    tracker.state.tokens.clear()
    const res = await ws.owner.get(`${base()}/tracker/teams`)
    expect(res.status).toBe(502)
    expect(res.body.detail).toBe('Authentication required, not authenticated')
    expect((await trackerRow())!.status).toBe('error')
    expect((await ws.owner.get(`${base()}/tracker/teams`)).status).toBe(409)
    expect((await ws.owner.get(base())).body[1]).toMatchObject({ provider: 'tracker', status: 'error' })
  })

  test('disconnect deletes the tokens; posts keep their link', async () => {
    const linked = (await h.db.select().from(posts).where(eq(posts.workspaceId, ws.id))).filter((row) => row.trackerIssue)
    expect((await ws.owner.delete(`${base()}/tracker`)).status).toBe(204)
    expect(await trackerRow()).toBeUndefined()
    expect(await plaintextHits(h, [...tracker.state.refreshTokens])).toEqual([])
    expect((await api.get(`/api/v1/posts/${linked[0]!.id}`)).body.tracker_issue).not.toBeNull()
    // A completed issue no longer reaches a workspace without a tracker connection.
    const res = await deliver(issueUpdate(linked[0]!.trackerIssue!.id, 'completed'))
    expect(res.body.outcome).toBe('ignored')
  })

  test('no tracker token, refresh token or secret reaches the log', () => {
    const logged = log.lines.join('\n')
    expect(logged).not.toContain('lin_oauth_')
    expect(logged).not.toContain('lin_refresh_')
    expect(logged).not.toContain(TRACKER_CLIENT.secret)
    expect(logged).not.toContain(TRACKER_WEBHOOK_SECRET)
  })
})
