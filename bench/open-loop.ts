// An open-loop load generator: requests are due at a fixed rate whatever the server does, at most
// `connections` in flight (a request due while all are busy waits for one), and each latency runs from
// the moment the request was due, so a server that stalls is charged for the requests it held back
// (no coordinated omission, unlike a closed loop such as wrk's). Prints one JSON line.
// Usage: bun bench/open-loop.ts '{"url":"http://...","headers":{},"rate":500,"seconds":10,"connections":50}'

interface Options { url: string; headers?: Record<string, string>; rate: number; seconds: number; connections: number }

export interface OpenLoopResult { offered: number; completed: number; errors: number; achieved: number; p50: number; p99: number; max: number }

const options = JSON.parse(process.argv[2]!) as Options
const total = Math.round(options.rate * options.seconds)
const latencies: number[] = []
let errors = 0
let inFlight = 0
const waiting: (() => void)[] = []

async function send(dueAt: number) {
  if (inFlight >= options.connections) await new Promise<void>((resolve) => waiting.push(resolve))
  inFlight++
  try {
    const response = await fetch(options.url, { headers: options.headers })
    await response.arrayBuffer()
    if (response.status >= 400) errors++
    else latencies.push(performance.now() - dueAt)
  } catch {
    errors++
  } finally {
    inFlight--
    waiting.shift()?.()
  }
}

const start = performance.now()
const sends: Promise<void>[] = []
let next = 0
while (next < total) {
  const now = performance.now()
  // Everything due by now goes out; the timer's lateness is charged to no request (each keeps its due time).
  while (next < total && start + (next * 1000) / options.rate <= now) sends.push(send(start + (next++ * 1000) / options.rate))
  await Bun.sleep(1)
}
await Promise.all(sends)
const elapsed = (performance.now() - start) / 1000

latencies.sort((a, b) => a - b)
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN
const result: OpenLoopResult = { offered: options.rate, completed: latencies.length, errors, achieved: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? NaN }
console.log(JSON.stringify(result))
