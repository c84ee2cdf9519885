import type { Server } from 'bun'

export interface RecordedRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: Headers
  body: unknown
  /** performance.now() when the request arrived, to measure the client's waits. */
  at: number
}

/** JSON response in the API's shape, for fake handlers. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { 'x-request-id': 'req_fake', ...headers } })

export const apiError = (status: number, code: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
  json(status, { code, message: `${code} from the fake`, detail: `${code} from the fake`, request_id: `req_${status}`, ...extra }, headers)

/**
 * A local HTTP server standing in for the API, to test transport behaviour the real one cannot be
 * made to show on demand (5xx, Retry-After, slow answers). It records every request it receives.
 */
export function startFakeApi(handle: (request: RecordedRequest, index: number) => Response | Promise<Response>) {
  const requests: RecordedRequest[] = []
  const server: Server<undefined> = Bun.serve({
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const text = await request.text()
      const recorded: RecordedRequest = {
        method: request.method,
        path: url.pathname.replace(/^\/api\/v1/, ''),
        query: url.searchParams,
        headers: request.headers,
        body: text ? JSON.parse(text) : undefined,
        at: performance.now(),
      }
      requests.push(recorded)
      return handle(recorded, requests.length - 1)
    },
  })
  return {
    baseUrl: `http://127.0.0.1:${server.port}/api/v1`,
    requests,
    close: () => server.stop(true),
  }
}
