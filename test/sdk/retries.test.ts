// Transport semantics against a local fake of the API: retries, backoff, Retry-After, Idempotency-Key, timeouts.
import { afterEach, describe, expect, test } from 'bun:test'
import { APIError, Chorus, ConflictError, ConnectionError, RateLimitError, type ChorusOptions } from '../../sdk/src/index.ts'
import { apiError, json, startFakeApi, type RecordedRequest } from '../helpers/fake-api.ts'

let fake: ReturnType<typeof startFakeApi> | undefined
afterEach(() => fake?.close())

/** A fake that plays `script` in order (the last entry repeats) and a client pointed at it. */
function scripted(script: ((request: RecordedRequest) => Response | Promise<Response>)[], options: Partial<ChorusOptions> = {}) {
  fake = startFakeApi((request, index) => script[Math.min(index, script.length - 1)]!(request))
  const chorus = new Chorus({ apiKey: 'chorus_sk_test', baseUrl: fake.baseUrl, retryDelayMs: 10, maxRetryDelayMs: 40, ...options })
  return { chorus, requests: fake.requests }
}

const ok = () => json(200, { ok: true })
const unavailable = () => apiError(503, 'INTERNAL')
const gaps = (requests: RecordedRequest[]) => requests.slice(1).map((request, i) => request.at - requests[i]!.at)

describe('retries', () => {
  test('5xx is retried with growing backoff, then succeeds', async () => {
    const { chorus, requests } = scripted([unavailable, unavailable, ok])
    expect(await chorus.request('GET', '/boards')).toEqual({ ok: true })
    expect(requests).toHaveLength(3)
    const [first, second] = gaps(requests)
    // Backoff with jitter over the upper half: 5–10 ms, then 10–20 ms (plus scheduling).
    expect(first!).toBeGreaterThanOrEqual(4)
    expect(second!).toBeGreaterThanOrEqual(9)
  })

  test('maxRetries bounds the attempts and the last error is thrown as APIError', async () => {
    const { chorus, requests } = scripted([unavailable], { maxRetries: 3 })
    const error = await chorus.request('GET', '/boards').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(APIError)
    expect(error).toMatchObject({ status: 503, code: 'INTERNAL', requestId: 'req_503' })
    expect(requests).toHaveLength(4)
  })

  test('maxRetries per call overrides the client', async () => {
    const { chorus, requests } = scripted([unavailable])
    await chorus.request('GET', '/boards', { maxRetries: 0 }).catch(() => {})
    expect(requests).toHaveLength(1)
  })

  test('4xx other than 429 is not retried', async () => {
    const { chorus, requests } = scripted([() => apiError(409, 'CONFLICT'), ok])
    expect(await chorus.request('POST', '/labels', { body: { name: 'x' } }).catch((e: unknown) => e)).toBeInstanceOf(ConflictError)
    expect(requests).toHaveLength(1)
  })

  test('429 waits for Retry-After, not the backoff', async () => {
    const { chorus, requests } = scripted([() => apiError(429, 'RATE_LIMITED', { 'retry-after': '1' }), ok], { retryDelayMs: 1 })
    expect(await chorus.request('GET', '/boards')).toEqual({ ok: true })
    expect(requests).toHaveLength(2)
    expect(gaps(requests)[0]!).toBeGreaterThanOrEqual(990)
  })

  test('Retry-After as an HTTP date is honoured too', async () => {
    // HTTP dates have whole seconds: aim at the next full second and a bit, so the wait is strictly positive.
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000)
    const { chorus, requests } = scripted([() => apiError(503, 'INTERNAL', { 'retry-after': at.toUTCString() }), ok], { retryDelayMs: 1 })
    await chorus.request('GET', '/boards')
    expect(requests).toHaveLength(2)
    expect(performance.timeOrigin + requests[1]!.at).toBeGreaterThanOrEqual(at.getTime() - 5)
  })

  test('a Retry-After beyond 60 s is not waited out: the RateLimitError comes back at once', async () => {
    const { chorus, requests } = scripted([() => apiError(429, 'RATE_LIMITED', { 'retry-after': '120' }), ok])
    const error = await chorus.request('GET', '/boards').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitError)
    expect((error as RateLimitError).retryAfter).toBe(120)
    expect(requests).toHaveLength(1)
  })

  test('a response slower than timeoutMs is a TIMEOUT ConnectionError, retried', async () => {
    const slow = async () => (await Bun.sleep(1000), ok())
    const { chorus, requests } = scripted([slow, slow, ok, slow], { timeoutMs: 200 })
    expect(await chorus.request('GET', '/boards')).toEqual({ ok: true })
    expect(requests).toHaveLength(3)
    const error = await chorus.request('GET', '/boards', { maxRetries: 0 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConnectionError)
    expect(error).toMatchObject({ code: 'TIMEOUT', status: null })
  })

  test("the caller's abort stops at once and is not retried", async () => {
    const controller = new AbortController()
    // The caller gives up once its request is at the server: a timer set when it was sent fired, on a busy CI
    // machine, before the request got there.
    const { chorus, requests } = scripted([async () => {
      setTimeout(() => controller.abort(new Error('caller gave up')), 10)
      return (await Bun.sleep(300), ok())
    }])
    const error = await chorus.request('GET', '/boards', { signal: controller.signal }).catch((e: unknown) => e)
    expect((error as Error).message).toBe('caller gave up')
    expect(requests).toHaveLength(1)
  })
})

describe('Idempotency-Key', () => {
  test('one key per POST call, the same on each of its retries', async () => {
    const { chorus, requests } = scripted([unavailable, () => apiError(429, 'RATE_LIMITED', { 'retry-after': '0' }), () => json(201, { id: 'lbl_1' }), ok])
    await chorus.labels.create({ name: 'Bug' })
    await chorus.labels.create({ name: 'Bug' })
    const keys = requests.map((request) => request.headers.get('idempotency-key'))
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys.slice(0, 3)).toEqual([keys[0]!, keys[0]!, keys[0]!])
    expect(keys[3]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[3]).not.toBe(keys[0]!)
  })

  test('a network failure mid-call keeps the key, so the server can replay instead of applying twice', async () => {
    let failures = 1
    fake = startFakeApi(() => json(201, { id: 'post_1' }))
    const chorus = new Chorus({
      apiKey: 'chorus_sk_test',
      baseUrl: fake.baseUrl,
      retryDelayMs: 1,
      // The first attempt reaches the server but its answer is lost on the way back.
      fetch: async (url, init) => {
        const response = await fetch(url, init)
        if (failures-- > 0) throw new TypeError('socket hang up')
        return response
      },
    })
    expect(await chorus.posts.create({ board: 'ideas', title: 'Dark mode' })).toEqual({ id: 'post_1' } as never)
    expect(fake.requests).toHaveLength(2)
    expect(fake.requests[1]!.headers.get('idempotency-key')).toBe(fake.requests[0]!.headers.get('idempotency-key')!)
  })

  test('a key given by the caller is sent as is; GET carries none', async () => {
    const { chorus, requests } = scripted([ok])
    await chorus.votes.toggle('post_1', { email: 'ada@example.com' }, { idempotencyKey: 'order-42-vote' })
    await chorus.request('GET', '/boards')
    expect(requests[0]!.headers.get('idempotency-key')).toBe('order-42-vote')
    expect(requests[1]!.headers.has('idempotency-key')).toBe(false)
  })

  test('every request carries the key as Bearer and asks for JSON; caller headers win', async () => {
    const { chorus, requests } = scripted([ok])
    await chorus.request('PATCH', '/posts/post_1', { body: { title: 'x' } })
    await chorus.request('GET', '/boards', { headers: { Accept: 'application/json; charset=utf-8', 'X-Trace': 't1' } })
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer chorus_sk_test')
    expect(requests[0]!.headers.get('accept')).toBe('application/json')
    expect(requests[1]!.headers.get('accept')).toBe('application/json; charset=utf-8')
    expect(requests[1]!.headers.get('x-trace')).toBe('t1')
    expect(requests[0]!.headers.get('content-type')).toBe('application/json')
    expect(requests[0]!.body).toEqual({ title: 'x' })
  })
})
