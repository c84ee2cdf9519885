// The packed SDK (the npm tarball's dist, not the sources) against the real server on a port:
// every resource it exposes, pagination across pages, typed errors and a retried 429, request ids
// of successful calls, the User-Agent the server receives, and real deliveries against the
// document's event schemas.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { eq } from 'drizzle-orm'
import { posts } from '../../server/db/schema/index.ts'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { packedSdk } from '../helpers/packed-sdk.ts'
import { eventually, startReceiver } from '../helpers/receiver.ts'
import { startEventDispatcher, type EventDispatcher } from '../../server/background/dispatcher.ts'
import { startWebhookRunner, type WebhookRunner } from '../../server/background/delivery-runner.ts'

type Sdk = typeof import('../../sdk/src/index.ts')

let h: Harness
let sdk: Sdk
let ws: WorkspaceFixture
let baseUrl: string
let key: string
let server: { stop(): void }
/** The User-Agent of every request the server received. */
const agents: (string | null)[] = []
let runner: WebhookRunner
let dispatcher: EventDispatcher
let receiver: Awaited<ReturnType<typeof startReceiver>>

beforeAll(async () => {
  sdk = (await import((await packedSdk()).entry)) as Sdk
  h = await startHarness({ RATE_LIMIT_PER_KEY: '100', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.001' })
  h.app.onRequest(({ request }) => void agents.push(request.headers.get('user-agent')))
  const listening = h.app.listen({ port: 0, hostname: '127.0.0.1' })
  server = { stop: () => void listening.stop() }
  baseUrl = `http://127.0.0.1:${listening.server!.port}/api/v1`
  ws = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  key = await ws.key()
  receiver = await startReceiver()
  // As in a server process: the dispatcher fans events out, the runner's loop delivers.
  dispatcher = startEventDispatcher({ db: h.database.sql, log: h.ctx.log, listenForWork: h.database.listenForWork })
  runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl })
  await runner.ready()
}, 180_000)
afterAll(async () => {
  await runner?.stop()
  await dispatcher?.stop()
  receiver?.stop()
  server.stop()
  await h.close()
})

const client = (options: Partial<ConstructorParameters<Sdk['Chorus']>[0]> = {}) => new sdk.Chorus({ apiKey: key, baseUrl, ...options })

describe('packed SDK against the live server', () => {
  test('workspaces, boards, statuses and labels', async () => {
    const chorus = client()
    const [workspace] = await chorus.workspaces.list()
    expect(workspace?.slug).toBe(ws.slug)
    expect((await chorus.workspaces.get(ws.slug)).id).toBe(ws.id)
    expect((await chorus.boards.list()).map((board) => board.slug)).toEqual(['ideas'])
    expect((await chorus.boards.get('ideas')).name).toBe('Ideas')
    expect((await chorus.statuses.list()).find((status) => status.is_default)?.name).toBe('Open')
    const label = await chorus.labels.create({ name: 'User experience', color: '#8b5cf6' })
    expect(label.slug).toBe('user-experience')
    expect((await chorus.labels.update(label.id, { name: 'UX' })).name).toBe('UX')
    expect((await chorus.labels.list()).map((l) => l.id)).toContain(label.id)
    await chorus.labels.delete(label.id)
    expect((await chorus.labels.list()) as unknown).toEqual([])
  })

  test('posts, comments and votes, with every page walked by for await', async () => {
    const chorus = client()
    const created = await chorus.posts.create({ board: 'ideas', title: 'Dark mode', body: 'Please', email: 'ada@example.com' })
    expect(created.author).toMatchObject({ type: 'end_user', email: 'ada@example.com' })
    expect((await chorus.posts.get(created.id)).title).toBe('Dark mode')
    expect((await chorus.posts.update(created.id, { status: 'Planned' })).status).toBe('Planned')

    const comment = await chorus.comments.create(created.id, { body: 'Yes please', email: 'grace@example.com' })
    expect((await chorus.comments.get(comment.id)).body).toBe('Yes please')
    expect((await chorus.comments.update(comment.id, { body: 'Yes, please' })).body).toBe('Yes, please')
    const comments = []
    for await (const item of chorus.comments.list(created.id)) comments.push(item)
    expect(comments.map((c) => c.id)).toEqual([comment.id])
    await chorus.comments.delete(comment.id)

    expect((await chorus.votes.toggle(created.id, { email: 'fan@example.com' })) as unknown).toEqual({ voted: true, votes: 1, verified: true })
    const voters = []
    for await (const vote of chorus.votes.list(created.id)) voters.push(vote.voter.email)
    expect(voters).toEqual(['fan@example.com'])

    for (let i = 0; i < 6; i++) await chorus.posts.create({ board: 'ideas', title: `Idea ${i}` })
    const seen: string[] = []
    for await (const post of chorus.posts.list({ board: 'ideas', per_page: 3 })) seen.push(post.id)
    expect(seen).toHaveLength(7)
    expect(new Set(seen).size).toBe(7)
    const firstPage = await chorus.posts.list({ board: 'ideas', per_page: 3 })
    expect(firstPage).toMatchObject({ page: 1, per_page: 3, total: 7, total_pages: 3 })

    const duplicate = await chorus.posts.create({ board: 'ideas', title: 'Dark theme' })
    const merged = await chorus.posts.merge(duplicate.id, { into_post_id: created.id })
    expect(merged.post.merged_into).toBe(created.id)
    await chorus.posts.delete(duplicate.id)
    expect(await h.db.select().from(posts).where(eq(posts.id, duplicate.id))).toHaveLength(0)
  })

  test('companies with their users, scoring, and one end user read, exported and erased', async () => {
    const chorus = client()
    const post = await chorus.posts.create({ board: 'ideas', title: 'Audit log', email: 'erin@example.com' })
    const erin = post.author.id!
    expect((await chorus.votes.toggle(post.id, { email: 'frank@example.com' })).voted).toBe(true)
    await chorus.companies.upsert('erin-co', { name: 'Erin Co', mrr: 120_000 })
    expect((await chorus.companies.addUser('erin-co', erin)).users).toBe(1)
    await chorus.companies.removeUser('erin-co', erin)
    expect((await chorus.companies.get('erin-co')).users).toBe(0)

    expect((await chorus.scoring.get()).model).toBe('rice')
    const custom = await chorus.scoring.update({ model: 'custom', formula: 'reach / effort + demand.voters', factors: [] })
    expect(custom.formula).toBe('reach / effort + demand.voters')
    await chorus.posts.update(post.id, { factors: { reach: 10, effort: 2 } })
    const history = await chorus.scoring.history(post.id)
    expect(history.items[0]).toMatchObject({ to_score: 6 })
    const invalid = await chorus.scoring.update({ model: 'custom', formula: 'reach / nothing' }).catch((error: unknown) => error)
    expect(invalid).toBeInstanceOf(sdk.ValidationError)

    expect((await chorus.endUsers.get(erin)).counts).toEqual({ posts: 1, comments: 0, votes: 0 })
    const exported = await chorus.endUsers.export(erin)
    expect(exported.end_user.email).toBe('erin@example.com')
    expect(exported.posts.map((p) => p.id)).toEqual([post.id])
    expect(await chorus.endUsers.erase(erin)).toMatchObject({ status: 'erased', id: erin, content: 'anonymise', posts: 1 })
    expect((await chorus.posts.get(post.id)).author.type).toBe('deleted')
    const gone = await chorus.endUsers.get(erin).catch((error: unknown) => error)
    expect(gone).toBeInstanceOf(sdk.NotFoundError)
  })

  test('successful calls carry their request id, status and headers; the server sees the SDK by its User-Agent', async () => {
    const chorus = client()
    agents.length = 0
    const post = await chorus.posts.create({ board: 'ideas', title: 'Request ids' })
    expect(post.lastResponse.status).toBe(201)
    expect(post.lastResponse.requestId).toMatch(/^req_/)
    expect(post.lastResponse.headers.get('ratelimit-limit')).toBe('100')
    expect(Object.keys(post)).not.toContain('lastResponse')
    const fetched = await chorus.posts.get(post.id)
    expect(fetched.lastResponse.requestId).toMatch(/^req_/)
    expect(fetched.lastResponse.requestId).not.toBe(post.lastResponse.requestId)
    expect(chorus.lastResponse).toBe(fetched.lastResponse)
    const page = await chorus.posts.list({ board: 'ideas', per_page: 1 })
    expect(page.lastResponse).toMatchObject({ status: 200 })
    expect((await chorus.boards.list()).lastResponse.requestId).toMatch(/^req_/)
    expect(agents.length).toBeGreaterThanOrEqual(4)
    expect(new Set(agents)).toEqual(new Set([`chorus-sdk/${sdk.VERSION} (bun/${Bun.version})`]))
  })

  test('typed errors carry status, code, request id and detail', async () => {
    const wrongKey = new sdk.Chorus({ apiKey: `chorus_sk_${'A'.repeat(32)}`, baseUrl, maxRetries: 0 })
    const unauthenticated = await wrongKey.posts.get('post_x').catch((error) => error)
    expect(unauthenticated).toBeInstanceOf(sdk.AuthenticationError)
    expect(unauthenticated).toMatchObject({ status: 401, code: 'INVALID_API_KEY' })
    expect(unauthenticated.requestId).toMatch(/^req_/)

    const readOnly = new sdk.Chorus({ apiKey: await ws.key(['posts:read']), baseUrl, maxRetries: 0 })
    const forbidden = await readOnly.posts.create({ board: 'ideas', title: 'x' }).catch((error) => error)
    expect(forbidden).toBeInstanceOf(sdk.PermissionError)
    expect(forbidden).toMatchObject({ status: 403, code: 'INSUFFICIENT_SCOPE' })

    const missing = await client().posts.get('post_missing').catch((error) => error)
    expect(missing).toBeInstanceOf(sdk.NotFoundError)

    const invalid = await client().posts.create({ board: 'ideas', title: '' }).catch((error) => error)
    expect(invalid).toBeInstanceOf(sdk.ValidationError)
    expect(invalid.status).toBe(422)
    expect(invalid.detail[0].loc).toEqual(['body', 'title'])
  })

  test('429: a RateLimitError after the retries are spent, carrying Retry-After', async () => {
    const boards = new sdk.Chorus({ apiKey: await ws.key(['boards:read']), baseUrl, maxRetries: 0 })
    let limited: any
    for (let i = 0; i < 105 && !limited; i++) limited = await boards.boards.list().then(() => undefined, (e) => e)
    expect(limited).toBeInstanceOf(sdk.RateLimitError)
    expect(limited.status).toBe(429)
    expect(limited.retryAfter).toBeGreaterThan(0)
  })

  test('webhooks: an endpoint made with the SDK receives a real delivery that verifyWebhook accepts', async () => {
    const chorus = client()
    const endpoint = await chorus.webhooks.create({ url: receiver.url('/sdk'), events: ['post.created'] })
    expect(endpoint.secret).toMatch(/^whsec_/)
    expect((await chorus.webhooks.list()).map((w) => w.id)).toContain(endpoint.id)

    const post = await chorus.posts.create({ board: 'ideas', title: 'Delivered to the SDK' })
    const [delivery] = await receiver.waitFor('/sdk')
    const event = await sdk.verifyWebhook(delivery!.body, Object.fromEntries(delivery!.headers), endpoint.secret)
    expect(event).toMatchObject({ type: 'post.created', workspace_id: ws.id })
    if (event.type !== 'post.created') throw new Error(`unexpected ${event.type}`)
    expect(event.data.post.id).toBe(post.id)
    // The delivery is exactly what the document's webhooks section says a post.created event is.
    const document = (await h.client().get('/api/v1/openapi.json')).body
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats(ajv)
    ajv.addSchema({ ...document, $id: 'doc' })
    const validate = ajv.getSchema(`doc#/components/schemas/${document.webhooks['post.created'].post.requestBody.content['application/json'].schema.$ref.split('/').pop()}`)!
    expect({ valid: validate(JSON.parse(delivery!.body)), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null })
    const tampered = await sdk.verifyWebhook(delivery!.body.replace('Delivered', 'Forged'), Object.fromEntries(delivery!.headers), endpoint.secret).catch((e) => e)
    expect(tampered).toBeInstanceOf(sdk.WebhookVerificationError)

    const [log] = await eventually(async () => { const logs = await chorus.webhooks.logs(endpoint.id, { success: true }); return logs.length && logs })
    expect(log).toMatchObject({ event_type: 'post.created', success: true, response_status: 200 })
    expect(await chorus.webhooks.retry(log!.id)).toMatchObject({ status: 'queued' })
    const again = await receiver.waitFor('/sdk', 2)
    expect(again[1]!.headers.get('webhook-id')).toBe(delivery!.headers.get('webhook-id'))

    expect((await chorus.webhooks.update(endpoint.id, { enabled: false })).enabled).toBe(false)
    await chorus.webhooks.delete(endpoint.id)
    expect((await chorus.webhooks.list()) as unknown).toEqual([])
  }, 30_000)
})
