/**
 * A port nothing listens on: the kernel picks it and it is released at once, for the server process
 * about to start (tests and benchmarks that spawn `bun server/index.ts` need its number up front).
 */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}
