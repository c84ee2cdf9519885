import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { validate } from '@readme/openapi-parser'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

const expectErrorBody = (body: any, code: string) => {
  expect(body.code).toBe(code)
  expect(typeof body.message).toBe('string')
  expect(body.request_id).toMatch(/^req_[0-9a-z]{25}$/)
  expect(body).toHaveProperty('detail')
}

describe('health and prefixes', () => {
  test('GET /api/v1/health answers with the database status', async () => {
    const res = await h.client().get('/api/v1/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', version: '1.0.0', server_version: (await Bun.file(`${import.meta.dir}/../../package.json`).json()).version, database: 'ok', background: 'off' })
    expect(res.headers.get('x-request-id')).toMatch(/^req_/)
  })

  test('every route also answers under /api', async () => {
    const res = await h.client().get('/api/health')
    expect(res.status).toBe(200)
    expect(res.body.status).toBe('ok')
  })

  test('health is 503 degraded when the database does not answer', async () => {
    const broken = await startHarness()
    await broken.database.close()
    const res = await broken.client().get('/api/v1/health')
    expect(res.status).toBe(503)
    expect(res.body).toMatchObject({ status: 'degraded', version: '1.0.0', database: 'unavailable' })
    await broken.close().catch(() => {})
  })
})

describe('error shape', () => {
  test('unknown route: 404 in the common body', async () => {
    const res = await h.client().get('/api/v1/no-such-thing')
    expect(res.status).toBe(404)
    expectErrorBody(res.body, 'NOT_FOUND')
    expect(res.headers.get('x-request-id')).toBe(res.body.request_id)
  })

  test('validation: 422 with the HTTPValidationError list', async () => {
    const res = await h.client().post('/api/v1/auth/magic-link', { email: 42 })
    expect(res.status).toBe(422)
    expectErrorBody(res.body, 'VALIDATION_ERROR')
    expect(Array.isArray(res.body.detail)).toBe(true)
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'email'], type: expect.any(String), msg: expect.any(String) })
  })

  test('missing field and unknown field are 422', async () => {
    const missing = await h.client().post('/api/v1/auth/magic-link', {})
    expect(missing.status).toBe(422)
    expect(missing.body.detail.some((d: any) => d.loc.join('.') === 'body.email')).toBe(true)
    const unknown = await h.client().post('/api/v1/auth/magic-link', { email: 'a@example.com', admin: true })
    expect(unknown.status).toBe(422)
    expect(unknown.body.detail.some((d: any) => d.loc.join('.') === 'body.admin')).toBe(true)
  })

  test('e-mail addresses: the documented rule, checked by the precompiled pattern createApp registers', async () => {
    // @elysiajs/openapi replaces the `email` format with a check that builds a zod schema per call;
    // createApp registers the same rule as one compiled pattern (server/lib/schema.ts).
    const { FormatRegistry } = await import('@sinclair/typebox')
    expect(FormatRegistry.Get('email')!.toString()).toContain('EMAIL.test')
    for (const email of ['ada@example.com', "o'neil+feedback@mail.example.co.uk", 'A_B-c@x-y.io']) {
      expect((await h.client().post('/api/v1/auth/magic-link', { email })).status).toBe(200)
    }
    for (const email of ['nope', 'a@b', '.a@example.com', 'a..b@example.com', 'a.@example.com', 'a@-b.com', 'a b@example.com', 'a@example.c0m']) {
      const res = await h.client().post('/api/v1/auth/magic-link', { email })
      expect(res.status).toBe(422)
      expect(res.body.detail.some((d: any) => d.loc.join('.') === 'body.email')).toBe(true)
    }
  })

  test('malformed JSON is 400 BAD_REQUEST', async () => {
    const res = await h.client().call('POST', '/api/v1/auth/magic-link', { raw: '{"email":', headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
    expectErrorBody(res.body, 'BAD_REQUEST')
  })

  test('a JSON body over 1 MiB is 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(1024 * 1024) })
    const res = await h.client().call('POST', '/api/v1/auth/magic-link', { raw: big, headers: { 'content-type': 'application/json', 'content-length': String(big.length) } })
    expect(res.status).toBe(413)
    expectErrorBody(res.body, 'PAYLOAD_TOO_LARGE')
  })

  test('unauthenticated: 401 UNAUTHENTICATED', async () => {
    const res = await h.client().get('/api/v1/auth/me')
    expect(res.status).toBe(401)
    expectErrorBody(res.body, 'UNAUTHENTICATED')
  })
})

describe('OpenAPI', () => {
  test('the document validates as OpenAPI 3.1 and describes every route', async () => {
    const res = await h.client().get('/api/v1/openapi.json')
    expect(res.status).toBe(200)
    const doc = res.body
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe('1.0.0')
    expect(doc.components.securitySchemes.bearerAuth).toBeDefined()
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({ in: 'header', name: 'X-API-Key' })
    const result = await validate(structuredClone(doc))
    if (!result.valid) console.error(JSON.stringify(result.errors, null, 2))
    expect(result.valid).toBe(true)
    const operationIds = new Set<string>()
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      expect(path.startsWith('/api')).toBe(false)
      for (const operation of Object.values<any>(operations)) {
        expect(operation.operationId).toMatch(/^[a-z][A-Za-z]+$/)
        expect(operationIds.has(operation.operationId)).toBe(false)
        operationIds.add(operation.operationId)
        // A success is 2xx, or 3xx for a redirecting endpoint (OAuth authorize, identity-provider login).
        expect(Object.keys(operation.responses).some((s) => s.startsWith('2') || s.startsWith('3'))).toBe(true)
        expect(operation.responses['4XX']).toBeDefined()
      }
    }
    expect(operationIds.has('verifyMagicLink')).toBe(true)
  })

  test('the alias and the interactive reference are served', async () => {
    const alias = await h.client().get('/api/openapi.json')
    expect(alias.status).toBe(200)
    expect(alias.body.openapi).toBe('3.1.0')
    const docs = await h.client().get('/docs')
    expect(docs.status).toBe(200)
    expect(docs.headers.get('content-type')).toContain('text/html')
    expect(docs.body).toContain('/api/v1/openapi.json')
  })
})
