// A webhook receiver in a process of its own, for tests that block the test's (the server's) main
// thread: a receiver in that thread could not take a request until the block ends. It notes when each
// request arrived (its own clock, the same machine's) and answers GET /received with the list.
const RECEIVER = `
const received = []
const server = Bun.serve({ port: 0, hostname: '127.0.0.1', async fetch(request) {
  if (request.method === 'GET') return Response.json(received)
  received.push({ at: Date.now(), id: request.headers.get('webhook-id'), body: await request.text() })
  return new Response('ok')
} })
console.log(server.port)
`

export async function startReceiverProcess() {
  const child = Bun.spawn([process.execPath, '-e', RECEIVER], { stdout: 'pipe', stderr: 'inherit' })
  const reader = child.stdout.getReader()
  const { value } = await reader.read()
  const port = Number(new TextDecoder().decode(value).trim())
  return {
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    /** Every request so far: arrival time, `webhook-id` header, body. */
    received: async () => (await (await fetch(`http://127.0.0.1:${port}/`)).json()) as { at: number; id: string; body: string }[],
    stop: () => child.kill(),
  }
}
