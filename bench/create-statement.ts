// The create's statement against the least-work create's, one writer (no lock waits), no HTTP and no server
// (no dispatch, no worker): latency and CPU per create of this process and of the database's backends, 5
// rounds in turned order. `least_status` and `least_render` add one part of Chorus's statement each (the
// first status-history row; the post rendered with its joins as the event's body).
// Usage: bun bench/create-statement.ts <url of a database bench/posts.ts seeded: BENCH_SEED_ONLY=1 BENCH_KEEP=1> [creates per series]
import postgres from 'postgres'
import { openDatabase } from '../server/db/client.ts'
import { newId } from '../server/lib/ids.ts'
import { createPostJson } from '../server/modules/posts/service.ts'
const url = process.argv[2]!
const databaseName = new URL(url).pathname.slice(1)
const database = openDatabase(url, '')
const raw = postgres(url, { max: 1 })
const admin = postgres(Object.assign(new URL(url), { pathname: '/postgres' }).toString(), { max: 1 })
const [k] = await raw`select k.id, k.name, k.workspace_id from api_keys k limit 1`
const ws = k!.workspace_id as string
const caller = { kind: 'api_key' as const, keyId: k!.id as string, name: k!.name as string, scopes: ['posts:write'], workspaceId: ws }
const N = Number(process.argv[3] ?? 500)
const ticks = async () => { let t = 0; for (const r of await admin`select pid from pg_stat_activity where datname = ${databaseName}`) { const f = (await Bun.file(`/proc/${r.pid}/stat`).text().catch(() => '')).split(') ')[1]?.split(' '); if (f) t += Number(f[11]) + Number(f[12]) } return t * 10 }
const variants: Record<string, (i: number) => Promise<unknown>> = {
  least: (i) => raw`with post as (
        insert into posts (id, workspace_id, board_id, title, body, status_id, author_key_id)
        select ${newId('post')}, ${ws}, b.id, ${'Export request ' + i}, ${'We would like faster exports for our team of ' + i}, s.id, ${k!.id}
        from boards b, statuses s where b.workspace_id = ${ws} and b.slug = 'inbox' and s.workspace_id = ${ws} and s.is_default limit 1
        returning id, board_id, title, body, status_id, vote_count, created_at),
      event as (insert into events (id, workspace_id, type, data) select ${newId('event')}, ${ws}, 'post.created', jsonb_build_object('post', to_jsonb(post)) from post)
      select * from post`,
  least_status: (i) => raw`with post as (
        insert into posts (id, workspace_id, board_id, title, body, status_id, author_key_id)
        select ${newId('post')}, ${ws}, b.id, ${'Export request ' + i}, ${'We would like faster exports for our team of ' + i}, s.id, ${k!.id}
        from boards b, statuses s where b.workspace_id = ${ws} and b.slug = 'inbox' and s.workspace_id = ${ws} and s.is_default limit 1
        returning id, board_id, title, body, status_id, vote_count, created_at),
      sc as (insert into status_changes (id, post_id, to_status_id, changed_by_key_id) select ${newId('statusChange')}, id, status_id, ${k!.id} from post),
      event as (insert into events (id, workspace_id, type, data) select ${newId('event')}, ${ws}, 'post.created', jsonb_build_object('post', to_jsonb(post)) from post)
      select * from post`,
  least_render: (i) => raw`with posts as (
        insert into posts (id, workspace_id, board_id, title, body, status_id, author_key_id)
        select ${newId('post')}, ${ws}, b.id, ${'Export request ' + i}, ${'We would like faster exports for our team of ' + i}, s.id, ${k!.id}
        from boards b, statuses s where b.workspace_id = ${ws} and b.slug = 'inbox' and s.workspace_id = ${ws} and s.is_default limit 1
        returning *),
      r as (select json_build_object('id', posts.id, 'board', b.slug, 'title', posts.title, 'body', posts.body, 'status', s.name, 'status_kind', s.kind,
          'author', json_build_object('type', 'api_key', 'id', ak.id, 'name', ak.name), 'created_at', to_char(posts.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) as json
        from posts join boards b on b.id = posts.board_id join statuses s on s.id = posts.status_id left join users au on au.id = posts.author_user_id
        left join end_users eu on eu.id = posts.author_end_user_id left join api_keys ak on ak.id = posts.author_key_id),
      event as (insert into events (id, workspace_id, type, data) select ${newId('event')}, ${ws}, 'post.created', json_build_object('post', json)::jsonb from r)
      select json::text from r`,
  chorus: (i) => createPostJson(database.db, ws, caller, 'inbox', { title: 'Export request ' + i, body: 'We would like faster exports for our team of ' + i, language: 'en' }),
}
const out: Record<string, number[][]> = {}
for (let round = 0; round < 5; round++) for (const name of round % 2 ? ['chorus', 'least_render', 'least_status', 'least'] : ['least', 'least_status', 'least_render', 'chorus']) {
  const b = await ticks(); const p = process.cpuUsage(); const t0 = performance.now()
  for (let i = 0; i < N; i++) await variants[name]!(round * N + i)
  const ms = performance.now() - t0; const own = process.cpuUsage(p)
  ;(out[name] ??= []).push([ms / N, ((await ticks()) - b) / N, (own.user + own.system) / 1000 / N])
}
const med = (xs: number[]) => xs.sort((a, b) => a - b)[2]!.toFixed(3)
for (const [name, rows] of Object.entries(out)) console.log(name, 'latency ms', med(rows.map((r) => r[0]!)), 'db cpu ms', med(rows.map((r) => r[1]!)), 'process cpu ms', med(rows.map((r) => r[2]!)))
console.log('load', (await Bun.file('/proc/loadavg').text()).trim())
await raw.end(); await admin.end(); await database.close()
