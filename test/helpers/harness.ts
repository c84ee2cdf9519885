import { createApp } from '../../server/app.ts'
import { getConfig } from '../../server/config.ts'
import type { ContextOverrides } from '../../server/context.ts'
import { testDatabase } from './database.ts'

export const TEST_SECRET = 'test-secret-key-that-is-long-enough-0123456789'
export const BASE = 'http://localhost:3000'

export interface CallOptions {
  body?: unknown
  /** Raw body sent as-is (for malformed JSON and multipart tests). */
  raw?: BodyInit
  headers?: Record<string, string>
  /** Skip the cookie jar for this call. */
  anonymous?: boolean
}

export interface TestResponse<T = any> {
  status: number
  headers: Headers
  body: T
}

/** A client with its own cookie jar, calling the app through `app.handle(new Request(...))`. */
export class TestClient {
  readonly jar = new Map<string, string>()
  constructor(private readonly handle: (request: Request) => Promise<Response>, private readonly defaults: Record<string, string> = {}) {}

  async call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...this.defaults, ...options.headers }
    if (options.body !== undefined) headers['content-type'] ??= 'application/json'
    if (!options.anonymous && this.jar.size) {
      headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ')
      // A browser on the dashboard says where a cookie-authenticated write comes from; tests of the CSRF check send their own.
      const lower = Object.keys(headers).map((name) => name.toLowerCase())
      if (!['origin', 'sec-fetch-site', 'referer'].some((name) => lower.includes(name))) headers['sec-fetch-site'] = 'same-origin'
    }
    const response = await this.handle(new Request(`${BASE}${path}`, {
      method,
      headers,
      body: options.raw ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined),
    }))
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const index = pair!.indexOf('=')
      const name = pair!.slice(0, index)
      const value = pair!.slice(index + 1)
      if (value === '' || /max-age=0/i.test(line)) this.jar.delete(name)
      else this.jar.set(name, value)
    }
    const text = await response.text()
    let body: unknown = text
    try {
      body = text ? JSON.parse(text) : null
    } catch {}
    return { status: response.status, headers: response.headers, body: body as T }
  }

  get = <T = any>(path: string, options?: CallOptions) => this.call<T>('GET', path, options)
  post = <T = any>(path: string, body?: unknown, options?: CallOptions) => this.call<T>('POST', path, { ...options, body })
  patch = <T = any>(path: string, body?: unknown, options?: CallOptions) => this.call<T>('PATCH', path, { ...options, body })
  delete = <T = any>(path: string, options?: CallOptions) => this.call<T>('DELETE', path, options)
}

export type Harness = Awaited<ReturnType<typeof startHarness>>

/** Starts an app on a fresh database; `close()` tears both down. */
export async function startHarness(env: Record<string, string> = {}, overrides: ContextOverrides = {}) {
  const queries: string[] = []
  const { database, drop, url } = await testDatabase({ onQuery: (sql) => void queries.push(sql) })
  // BILLING on: the suite exercises the hosted product's trial and subscription rules unless a test turns it off.
  const config = getConfig({ SECRET_KEY: TEST_SECRET, LOG_LEVEL: 'silent', BASE_URL: BASE, RATE_LIMIT_PER_IP: '100000', BILLING: 'on', ...env })
  const { app, ctx } = await createApp({ config, database, overrides })
  const handle = (request: Request) => app.handle(request)
  return {
    app,
    ctx,
    db: ctx.db,
    database,
    /** `memory://` on PGlite, else the fresh Postgres database (webhook delivery opens its own connections to it). */
    databaseUrl: url,
    client: (defaults?: Record<string, string>) => new TestClient(handle, defaults),
    /** Every SQL statement the app sent, in order; clear it with `queries.length = 0`. */
    queries,
    async close() {
      ctx.limiter.close()
      await drop()
    },
  }
}

/**
 * Rate limits count in fixed one-minute windows; a burst that straddles a window boundary starts a
 * fresh budget half-way. Tests that exhaust a budget wait until the window has at least `seconds` left.
 */
export async function freshRateWindow(seconds = 30) {
  const left = 60 - (Date.now() / 1000) % 60
  if (left < seconds) await Bun.sleep(left * 1000 + 50)
}
