// The SDK against the real server over HTTP: what the API answers must reach the caller as typed errors.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  AuthenticationError,
  Chorus,
  ChorusError,
  ConnectionError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ValidationError,
} from '../../sdk/src/index.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'

let h: Harness
let chorus: Chorus
const KEY = 'chorus_sk_0000000000000000000000000000000000'

beforeAll(async () => {
  // One request per IP per minute, so the second magic-link call is a real 429.
  h = await startHarness({ RATE_LIMIT_PER_IP: '1' })
  h.app.listen({ port: 0, hostname: '127.0.0.1' })
  chorus = new Chorus({ apiKey: KEY, baseUrl: `http://127.0.0.1:${h.app.server!.port}/api/v1`, maxRetries: 0 })
}, 60_000)
afterAll(async () => {
  await h.app.stop(true)
  await h.close()
})

async function caught(promise: Promise<unknown>): Promise<ChorusError> {
  const error = await promise.then(() => undefined, (thrown: unknown) => thrown)
  if (!(error instanceof ChorusError)) throw new Error(`expected a ChorusError, got ${String(error)}`)
  return error
}

describe('typed errors from the real server', () => {
  test('a successful call returns the typed body', async () => {
    expect((await chorus.health()) as unknown).toEqual({ status: 'ok', version: '1.0.0', server_version: '0.1.0', database: 'ok', background: 'off' })
  })

  test('404 on an unknown path is a NotFoundError with code, request id and detail', async () => {
    const error = await caught(chorus.request('GET', '/no-such-route'))
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', detail: 'Route not found', message: 'Route not found', name: 'NotFoundError' })
    expect(error.requestId).toMatch(/^req_[0-9a-z]+$/)
    expect(error.headers?.get('x-request-id')).toBe(error.requestId!)
  })

  test('422 is a ValidationError carrying the detail list', async () => {
    const error = await caught(chorus.request('POST', '/auth/magic-link', { body: { email: 42 } }))
    expect(error).toBeInstanceOf(ValidationError)
    expect(error).toMatchObject({ status: 422, code: 'VALIDATION_ERROR' })
    const issues = (error as ValidationError).issues
    expect(issues).toEqual(error.detail as never)
    expect(issues[0]).toMatchObject({ loc: ['body', 'email'], msg: expect.any(String), type: expect.any(String) })
  })

  test('401 is an AuthenticationError', async () => {
    const error = await caught(chorus.request('POST', '/auth/refresh'))
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' })
  })

  test('403 is a PermissionError: an API key on a dashboard-only route', async () => {
    const error = await caught(chorus.request('GET', '/auth/me'))
    expect(error).toBeInstanceOf(PermissionError)
    expect(error).toMatchObject({ status: 403, code: 'DASHBOARD_ONLY', requiredScope: null })
  })

  test('429 is a RateLimitError with the Retry-After seconds', async () => {
    await chorus.request('POST', '/auth/magic-link', { body: { email: 'ada@example.com' } })
    const error = await caught(chorus.request('POST', '/auth/magic-link', { body: { email: 'ada@example.com' } }))
    expect(error).toBeInstanceOf(RateLimitError)
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED' })
    const retryAfter = (error as RateLimitError).retryAfter
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
  })

  test('a refused connection is a ConnectionError after the retries', async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response() })
    const port = closed.port
    await closed.stop(true)
    let calls = 0
    const offline = new Chorus({
      apiKey: KEY,
      baseUrl: `http://127.0.0.1:${port}/api/v1`,
      maxRetries: 2,
      retryDelayMs: 1,
      fetch: (url, init) => (calls++, fetch(url, init)),
    })
    const error = await caught(offline.health())
    expect(error).toBeInstanceOf(ConnectionError)
    expect(error).toMatchObject({ status: null, code: 'CONNECTION_ERROR', requestId: null })
    expect(calls).toBe(3)
  })
})
