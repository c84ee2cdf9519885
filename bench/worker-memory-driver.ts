// bench/worker-memory.ts's floor variant: a Worker that holds only what every background worker on the
// required driver holds (postgres.js loaded, one connection, one LISTEN), and nothing of Chorus.
import postgres from 'postgres'

declare const self: Worker

const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
await sql.listen('chorus_work_events', () => {})
self.postMessage('listening')
