// The webhook baseline: the least work that still delivers every event exactly once from PostgreSQL
// to a receiver, on postgres.js and fetch with no framework: LISTEN for committed events, take up to
// 256 with DELETE ... FOR UPDATE SKIP LOCKED, POST each signed as Standard Webhooks asks
// (HMAC-SHA256 of id.timestamp.body), then log them in one insert. Chorus does more per event (fan-out
// to endpoints, leases that survive a crash, retries, per-attempt logs); bench/webhooks.ts runs both.
// Env: DATABASE_URL, RECEIVER_URL, WEBHOOK_SECRET (base64).
import postgres from 'postgres'

const sql = postgres(process.env.DATABASE_URL!, { max: 4, onnotice: () => {} })
const receiver = process.env.RECEIVER_URL!
const key = Buffer.from(process.env.WEBHOOK_SECRET!, 'base64')

await sql`create table if not exists bench_raw_events (id text primary key, type text not null, data jsonb not null, created_at timestamptz not null default now())`
await sql`create table if not exists bench_raw_log (event_id text not null, status int not null, at timestamptz not null default now())`
await sql.unsafe(`create or replace function bench_raw_notify() returns trigger language plpgsql as $$ begin perform pg_notify('bench_raw', ''); return null; end $$`)
await sql.unsafe('drop trigger if exists bench_raw_events_notify on bench_raw_events')
await sql.unsafe('create trigger bench_raw_events_notify after insert on bench_raw_events for each statement execute function bench_raw_notify()')

async function send(event: { id: string; type: string; data: unknown; created_at: Date }) {
  const body = JSON.stringify({ id: event.id, type: event.type, timestamp: event.created_at.toISOString(), data: event.data })
  const timestamp = Math.floor(Date.now() / 1000).toString()
  const signature = new Bun.CryptoHasher('sha256', key).update(`${event.id}.${timestamp}.${body}`).digest('base64')
  const response = await fetch(receiver, { method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-id': event.id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` } })
  await response.arrayBuffer()
  return { id: event.id, status: response.status }
}

let wake: (() => void) | undefined
let pending = true
await sql.listen('bench_raw', () => { pending = true; wake?.() })
console.log('raw webhooks ready')

for (;;) {
  if (!pending) await new Promise<void>((resolve) => (wake = resolve))
  pending = false
  for (;;) {
    const batch = await sql.begin(async (tx) => {
      const events = await tx`delete from bench_raw_events where id in (select id from bench_raw_events order by id limit 256 for update skip locked) returning id, type, data, created_at`
      if (!events.length) return 0
      const results = await Promise.all(events.map((event) => send(event as never)))
      await tx`insert into bench_raw_log ${tx(results.map((result) => ({ event_id: result.id, status: result.status })))}`
      return events.length
    })
    if (!batch) break
  }
}
