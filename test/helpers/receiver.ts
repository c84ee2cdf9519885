// A webhook receiver on a random loopback port that records every request it gets.

export interface Received {
  headers: Headers
  body: string
  path: string
  at: number
}

type Responder = (request: Request, received: Received) => Response | Promise<Response>

export async function startReceiver(respond: Responder = () => new Response('ok')) {
  const received: Received[] = []
  let responder = respond
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const entry = { headers: request.headers, body: await request.text(), path: new URL(request.url).pathname, at: Date.now() }
      received.push(entry)
      return responder(request, entry)
    },
  })
  return {
    url: (path = '/hook') => `http://127.0.0.1:${server.port}${path}`,
    port: server.port!,
    received,
    respondWith(next: Responder) {
      responder = next
    },
    /** The requests to `path` so far. */
    to: (path: string) => received.filter((entry) => entry.path === path),
    /** Resolves when `count` requests to `path` have arrived; throws after `timeoutMs`. */
    async waitFor(path: string, count = 1, timeoutMs = 5000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const hits = received.filter((entry) => entry.path === path)
        if (hits.length >= count) return hits
        if (Date.now() > deadline) throw new Error(`expected ${count} request(s) to ${path} within ${timeoutMs} ms, got ${hits.length}`)
        await Bun.sleep(10)
      }
    },
    stop: () => server.stop(true),
  }
}

/** Polls `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws). */
type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>

export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5000, what = 'condition'): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as Truthy<T>
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`)
    await Bun.sleep(20)
  }
}
