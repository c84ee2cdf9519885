// The generated OpenAPI document as a contract: what the SDK's types are made of.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { Value } from '@sinclair/typebox/value'
import { ERROR_STATUS } from '../../server/errors.ts'
import { EVENT_TYPES } from '../../server/events/outbox.ts'
import { readFileSync } from 'node:fs'
import { OPENAPI_DOCUMENT_FILE } from '../../server/modules/docs/index.ts'
import { eventSchemaName } from '../../server/modules/docs/webhooks.ts'
import { workspaceFixture } from '../helpers/fixtures.ts'
import { inlineSchemas, missingDocumentation, operationsOf } from '../helpers/openapi-checks.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let doc: any
beforeAll(async () => {
  h = await startHarness()
  doc = (await h.client().get('/api/v1/openapi.json')).body
}, 60_000)
afterAll(() => h.close())

// The routes only: the error responses below do not apply to webhook deliveries.
const operations = () => operationsOf({ ...doc, webhooks: {} })

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

describe('the served document', () => {
  // The server serves the committed sdk/openapi.json (the generator is a build-time package): it must be
  // exactly what this server's routes generate, or a route change was made without `npm run openapi`.
  // Generated in a process of its own: this one's route schemas have been through other test files' apps.
  test('is sdk/openapi.json as compact JSON, and that file is what the routes generate', async () => {
    const res = await h.app.handle(new Request('http://localhost/api/v1/openapi.json'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json;charset=utf-8')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await res.text()).not.toContain('\n')
    expect(JSON.parse(readFileSync(OPENAPI_DOCUMENT_FILE, 'utf8'))).toEqual(doc)
    const check = Bun.spawnSync([process.execPath, 'scripts/openapi.ts', '--check'], { cwd: new URL('../..', import.meta.url).pathname, env: { ...process.env, TEST_POSTGRES_URL: '' } })
    expect({ exitCode: check.exitCode, stderr: check.stderr.toString() }).toEqual({ exitCode: 0, stderr: '' })
    expect(check.stdout.toString()).toContain('sdk/openapi.json and its types match the server.')
  }, 60_000)

  test('the generator is not a runtime dependency', () => {
    const manifest = require('../../package.json')
    expect(manifest.dependencies['@elysiajs/openapi']).toBeUndefined()
    expect(manifest.devDependencies['@elysiajs/openapi']).toBeDefined()
  })
})

describe('error schema', () => {
  test('the Error component types `code` as the enum of every error code', () => {
    expect(doc.components.schemas.ErrorCode).toMatchObject({ type: 'string', enum: Object.keys(ERROR_STATUS) })
    expect(doc.components.schemas.Error.properties.code).toEqual(ref('ErrorCode'))
    expect(doc.components.schemas.Error.required).toEqual(['code', 'message', 'detail', 'request_id'])
  })

  test('422 keeps the HTTPValidationError shape: detail is a list of {loc, msg, type}', () => {
    const validation = doc.components.schemas.HTTPValidationError
    expect(validation.properties.code.enum).toEqual(['VALIDATION_ERROR', 'IDEMPOTENCY_MISMATCH', 'CHALLENGE_FAILED'])
    expect(validation.properties.detail).toEqual({ type: 'array', items: ref('ValidationIssue') })
    expect(doc.components.schemas.ValidationIssue.required).toEqual(['loc', 'msg', 'type'])
  })

  test("every operation's error responses use the Error component", () => {
    for (const { path, method, operation } of operations()) {
      const schema = (status: string) => operation.responses[status]?.content?.['application/json']?.schema
      expect({ path, method, schema: schema('4XX') }).toEqual({ path, method, schema: ref('Error') })
      expect({ path, method, schema: schema('500') }).toEqual({ path, method, schema: ref('Error') })
      if (operation.responses['422']) expect({ path, method, schema: schema('422') }).toEqual({ path, method, schema: ref('HTTPValidationError') })
    }
  })

  test('a real error body carries a code of the documented enum', async () => {
    const res = await h.client().get('/api/v1/posts/post_missing')
    expect(res.status).toBe(401)
    expect(doc.components.schemas.ErrorCode.enum).toContain(res.body.code)
    expect(Object.keys(res.body).sort()).toEqual(['code', 'detail', 'message', 'request_id'])
  })
})

describe('paths', () => {
  test('no documented path ends in a slash', () => {
    const trailing = Object.keys(doc.paths).filter((path) => path.length > 1 && path.endsWith('/'))
    expect(trailing).toEqual([])
  })

  test('the collection routes answer with and without a trailing slash', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key()
    const keyed = h.client({ authorization: `Bearer ${key}` })
    const collections: [typeof keyed, string][] = [
      [keyed, '/api/v1/labels'],
      [ws.owner, '/api/v1/workspaces'],
      [ws.owner, `/api/v1/workspaces/${ws.slug}/webhooks`],
      [ws.owner, `/api/v1/workspaces/${ws.slug}/api-keys`],
      [ws.owner, `/api/v1/workspaces/${ws.slug}/jwt-config`],
      [ws.owner, `/api/v1/workspaces/${ws.slug}/notifications/custom-domain`],
    ]
    for (const [client, path] of collections) {
      const bare = await client.get(path)
      const slashed = await client.get(`${path}/`)
      const { request_id: _, ...body } = bare.body
      expect({ path, status: slashed.status, body: slashed.body }).toMatchObject({ path, status: bare.status, body })
      // jwt-config answers 404 NOT_FOUND until configured; an unknown route says "Route not found".
      expect({ path, message: bare.body.message }).not.toEqual({ path, message: 'Route not found' })
    }
    const created = await keyed.post('/api/v1/labels/', { name: 'Slashed' })
    expect(created.status).toBe(201)
    expect((await keyed.get('/api/v1/labels')).body.map((label: { slug: string }) => label.slug)).toContain('slashed')
  })
})

describe('operations', () => {
  test('every operation has a summary, a description and an example', () => {
    expect(missingDocumentation(doc)).toEqual([])
  })

  test('bodies and responses are named component schemas, not inline objects', () => {
    expect(inlineSchemas(doc)).toEqual([])
  })

  test('every event kind the server raises is documented as a webhook with a named event schema', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort())
    for (const type of EVENT_TYPES) {
      const schema = doc.webhooks[type].post.requestBody.content['application/json'].schema
      expect({ type, schema }).toEqual({ type, schema: ref(eventSchemaName(type)) })
      expect(doc.components.schemas[eventSchemaName(type)].properties.type).toMatchObject({ const: type })
    }
  })

  test('a read scope opens only GET routes, which keep no Idempotency-Key (the auth plugin gives them no idempotency hooks)', () => {
    const reads = operations().filter(({ operation }) => String(operation['x-required-scope'] ?? '').endsWith(':read'))
    expect(reads.length).toBeGreaterThan(10)
    expect(reads.filter(({ method }) => method !== 'get').map(({ method, path }) => `${method} ${path}`)).toEqual([])
  })

  test('the core resources are components of those names', () => {
    const names = ['Post', 'Comment', 'Vote', 'Board', 'Label', 'Status', 'Webhook', 'WebhookDeliveryLog', 'Workspace', 'Member', 'ApiKey', 'Error', 'User']
    expect(names.filter((name) => !doc.components.schemas[name])).toEqual([])
  })
})

describe('examples', () => {
  test('every named schema of the server accepts its own examples', async () => {
    const wrong: string[] = []
    let checked = 0
    for await (const file of new Glob('server/modules/*/model.ts').scan()) {
      const exports: Record<string, any> = await import(`../../${file}`)
      for (const [name, schema] of Object.entries(exports)) {
        if (typeof schema?.$id !== 'string' || !Array.isArray(schema.examples)) continue
        for (const example of schema.examples) {
          checked++
          const errors = [...Value.Errors(schema, example)].map((error) => `${error.path} ${error.message}`)
          if (errors.length) wrong.push(`${file} ${name}: ${errors.join('; ')}`)
        }
      }
    }
    expect(wrong).toEqual([])
    expect(checked).toBeGreaterThan(50)
  })
})

describe('the checks themselves', () => {
  const example = { examples: [{ id: 'post_1' }] }
  const complete = {
    summary: 'Get a post',
    description: 'One post by id.',
    parameters: [{ in: 'path', name: 'post_id', schema: { type: 'string', examples: ['post_1'] } }],
    responses: { 200: { description: 'The post', content: { 'application/json': { schema: ref('Post') } } } },
  }
  const document = (operation: object, schemas: Record<string, unknown> = { Post: { type: 'object', ...example } }, webhooks = {}) =>
    ({ paths: { '/posts/{post_id}': { get: operation } }, webhooks, components: { schemas } })

  test('a complete operation passes', () => {
    expect(missingDocumentation(document(complete))).toEqual([])
    expect(inlineSchemas(document(complete))).toEqual([])
  })

  test('an operation without a summary, a description or an example fails', () => {
    const { summary: _s, ...noSummary } = complete
    expect(missingDocumentation(document(noSummary))).toEqual(['GET /posts/{post_id}: no summary'])
    expect(missingDocumentation(document({ ...complete, description: '  ' }))).toEqual(['GET /posts/{post_id}: no description'])
    expect(missingDocumentation(document(complete, { Post: { type: 'object' } }))).toEqual(['GET /posts/{post_id}: no response example'])
    const bodyWithoutExample = { ...complete, requestBody: { content: { 'application/json': { schema: ref('PostCreate') } } } }
    expect(missingDocumentation(document(bodyWithoutExample, { Post: { type: 'object', ...example }, PostCreate: { type: 'object' } }))).toEqual(['GET /posts/{post_id}: no request example'])
    const noContent = { ...complete, parameters: [{ in: 'path', name: 'post_id', schema: { type: 'string' } }], responses: { 204: { description: 'Deleted' } } }
    expect(missingDocumentation(document(noContent))).toEqual(['GET /posts/{post_id}: no parameter example'])
  })

  test('a webhook delivery is checked like an operation', () => {
    const delivery = { post: { summary: 'post.created delivery', requestBody: { content: { 'application/json': { schema: ref('PostCreatedEvent') } } }, responses: {} } }
    const schemas = { Post: { type: 'object', ...example }, PostCreatedEvent: { type: 'object', properties: {} } }
    expect(missingDocumentation(document(complete, schemas, { 'post.created': delivery }))).toEqual(['POST webhook post.created: no description, request example'])
  })

  test('an inline request or response object fails', () => {
    const inline = { ...complete, requestBody: { content: { 'application/json': { schema: { type: 'object', ...example } } } }, responses: { 200: { description: 'The post', content: { 'application/json': { schema: { type: 'array', items: { type: 'object' } } } } } } }
    expect(inlineSchemas(document(inline))).toEqual(['GET /posts/{post_id}: request body', 'GET /posts/{post_id}: 200'])
  })
})
