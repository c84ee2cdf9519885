// Every operation of the OpenAPI document, fuzzed from its own schemas (valid values, NUL, lone
// surrogates, bidi overrides, huge numbers, deep and wrong-typed values, other media types), with an
// API key and with a dashboard session: no response may be a 5xx or differ from its documented schema.
// Seeded and bounded: FUZZ_SEED and FUZZ_RUNS reproduce or widen a run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { apiKeys, comments, labels, statuses } from '../../server/db/schema/index.ts'
import { eq } from 'drizzle-orm'
import { boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { documentedMediaTypes, requestFor, responseValidators, strayAuthorization, type OpenApiDocument, type Operation } from '../helpers/openapi-fuzz.ts'

const SEED = Number(process.env.FUZZ_SEED ?? 17)
const RUNS = Number(process.env.FUZZ_RUNS ?? 10)

/** Operations that end the session the fuzzer runs on (deleting the account ends it and the fixture); their own tests cover them. */
const SKIP_WITH_SESSION = new Set(['logout', 'refreshSession', 'deleteAccount'])
/** Operations on which real ids would destroy the fixture (the workspace, the key, the owner): only fuzzed ids. */
const AVOID_KNOWN = new Set(['deleteWorkspace', 'updateWorkspace', 'revokeApiKey', 'updateApiKeyScopes', 'removeMember', 'updateMemberRole', 'setWorkspaceSubscription'])

let h: Harness
let ws: WorkspaceFixture
let document: OpenApiDocument
let known: Record<string, string[]>
let withKey: TestClient

beforeAll(async () => {
  h = await startHarness({ RATE_LIMIT_PER_KEY: '1000000' })
  ws = await workspaceFixture(h)
  const board = await boardFixture(h, ws.id, 'ideas')
  const key = await ws.key()
  withKey = h.client({ authorization: `Bearer ${key}` })
  const post = await withKey.post('/api/v1/boards/ideas/posts', { title: 'Fuzz target' })
  const comment = await withKey.post(`/api/v1/posts/${post.body.id}/comments`, { body: 'A comment' })
  const [label] = await h.db.insert(labels).values({ id: `label_fuzz${Date.now()}`, workspaceId: ws.id, slug: 'fuzz', name: 'Fuzz' }).returning()
  const [status] = await h.db.select().from(statuses).where(eq(statuses.workspaceId, ws.id)).limit(1)
  const webhook = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: 'https://hooks.example.com/chorus', events: ['post.created'] })
  known = {
    workspace_slug: [ws.slug],
    x_workspace: [ws.slug],
    board_slug: [board.slug],
    post_id: [post.body.id],
    comment_id: [comment.body.id ?? (await h.db.select().from(comments).limit(1))[0]?.id],
    label_id: [label!.id],
    status_id: [status!.id],
    webhook_id: webhook.body?.id ? [webhook.body.id] : [],
    user_id: [ws.ownerId],
    key_id: (await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, ws.id))).map((row) => row.id),
  }
  document = (await h.client().get('/api/v1/openapi.json')).body
}, 120_000)
afterAll(() => h.close())

function operations() {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).filter(([method]) => ['get', 'post', 'patch', 'put', 'delete'].includes(method)).map(([method, operation]) => ({ path, method, operation: operation as Operation })))
}

/** A stable per-operation seed, so one operation's failure reproduces without the others. */
const seedOf = (name: string) => [...name].reduce((hash, char) => (Math.imul(hash, 31) + char.charCodeAt(0)) | 0, SEED)

/**
 * Without credentials (no key, no cookie; sometimes a stray or malformed `Authorization` header), on
 * every operation, the OAuth protocol endpoints and `/.well-known/*` included: never a 5xx, and every
 * JSON refusal in the error shape with the request id.
 */
async function fuzzAnonymous() {
  const failures: string[] = []
  let requests = 0
  const anonymous = h.client()
  for (const { path, method, operation } of operations()) {
    const arbitrary = requestFor(path, method, operation, document, { known, avoidKnown: true, headers: {}, authorization: strayAuthorization })
    const result = await fc.check(
      fc.asyncProperty(arbitrary, async (request) => {
        requests++
        const response = await anonymous.call(request.method, request.path, { raw: request.body, headers: request.headers, anonymous: true })
        if (response.status >= 500) throw new Error(`${response.status}: ${JSON.stringify(response.body).slice(0, 300)}`)
        const json = response.headers.get('content-type')?.startsWith('application/json')
        if (response.status >= 400 && json && (typeof response.body?.code !== 'string' || response.body.request_id !== response.headers.get('x-request-id'))) {
          throw new Error(`${response.status} without the error shape: ${JSON.stringify(response.body).slice(0, 300)}`)
        }
      }),
      { seed: seedOf(`anonymous ${operation.operationId}`), numRuns: RUNS, endOnFailure: true },
    )
    if (result.failed) {
      const request = result.counterexample?.[0]
      failures.push(`anonymous ${operation.operationId} (seed ${result.seed}): ${request?.method} ${request?.path?.slice(0, 200)} ${JSON.stringify(request?.headers)} ${typeof request?.body === 'string' ? request.body.slice(0, 200) : ''}\n  ${String((result.errorInstance as Error)?.message ?? result.errorInstance)}`)
    }
  }
  return { failures, requests }
}

async function fuzz(mode: 'key' | 'session') {
  const validator = responseValidators(document)
  const failures: string[] = []
  let requests = 0
  for (const { path, method, operation } of operations()) {
    if (mode === 'session' && SKIP_WITH_SESSION.has(operation.operationId)) continue
    const client = mode === 'key' ? withKey : ws.owner
    const arbitrary = requestFor(path, method, operation, document, { known, avoidKnown: AVOID_KNOWN.has(operation.operationId) || method === 'delete', headers: {} })
    const result = await fc.check(
      fc.asyncProperty(arbitrary, async (request) => {
        requests++
        const response = await client.call(request.method, request.path, { raw: request.body, headers: request.headers })
        if (response.status >= 500) throw new Error(`${response.status}: ${JSON.stringify(response.body).slice(0, 300)}`)
        const validate = validator(path, method, response.status)
        // A page or a feed: its documented media type is all there is to check.
        const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim()
        if (mediaType && mediaType !== 'application/json' && documentedMediaTypes(document, path, method, response.status).includes(mediaType)) return
        if (validate === undefined) throw new Error(`undocumented status ${response.status}: ${JSON.stringify(response.body).slice(0, 300)}`)
        if (validate === null) {
          if (response.status !== 204 && response.status !== 304 && response.body !== null) throw new Error(`documented without a body, got ${JSON.stringify(response.body).slice(0, 200)}`)
          return
        }
        if (!validate(response.body)) throw new Error(`${response.status} does not match its schema: ${JSON.stringify(validate.errors).slice(0, 400)} body ${JSON.stringify(response.body).slice(0, 300)}`)
      }),
      { seed: seedOf(`${mode} ${operation.operationId}`), numRuns: RUNS, endOnFailure: true },
    )
    if (result.failed) {
      const request = result.counterexample?.[0]
      failures.push(`${mode} ${operation.operationId} (seed ${result.seed}, path ${result.counterexamplePath}): ${request?.method} ${request?.path?.slice(0, 200)} ${typeof request?.body === 'string' ? request.body.slice(0, 200) : ''}\n  ${String((result.errorInstance as Error)?.message ?? result.errorInstance)}`)
    }
  }
  return { failures, requests }
}

describe('security', () => {
  test('every operation with an API key: no 5xx, every response as documented', async () => {
    const { failures, requests } = await fuzz('key')
    expect(requests).toBeGreaterThan(operations().length * RUNS * 0.9)
    expect(failures).toEqual([])
  }, 120_000)

  test('every operation without credentials (the OAuth endpoints and /.well-known included): no 5xx, refusals in the error shape', async () => {
    const covered = operations().map(({ path }) => path)
    expect(covered).toEqual(expect.arrayContaining(['/oauth/token', '/oauth/revoke', '/oauth/register', '/oauth/authorize', '/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource']))
    const { failures, requests } = await fuzzAnonymous()
    expect(requests).toBeGreaterThan(operations().length * RUNS * 0.9)
    expect(failures).toEqual([])
  }, 120_000)

  test('every operation with a dashboard session: no 5xx, every response as documented', async () => {
    const { failures, requests } = await fuzz('session')
    expect(requests).toBeGreaterThan((operations().length - SKIP_WITH_SESSION.size) * RUNS * 0.9)
    expect(failures).toEqual([])
  }, 120_000)
})
