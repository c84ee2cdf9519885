// The baseline: the routes the benchmarks load, written straight on Bun.serve and postgres.js with no
// framework, sending the same SQL Chorus sends (same statements, same plans), to compare Chorus against
// in the same run. Every keyed request also counts the key's rate limit in PostgreSQL, as Chorus does
// without Redis. Routes (API key in `Authorization: Bearer` except on /public):
//   GET  /posts/:id                            key check, the post with board/status/author/labels
//   GET  /boards/:slug/posts?sort=&per_page=&page=   key check, the page with its total (one query)
//   POST /boards/:slug/posts  {title}          key check; board and default status, then post, history and read back (each group pipelined), outbox row
//   POST /posts/:id/votes     {email}          key check; locked post with the end user upsert and read (pipelined), vote delete, insert with counter (pipelined), outbox row
//   GET  /public/:ws/boards/:slug/posts?sort=   the public page, ETag over the body, 304 on If-None-Match
// And the least-work baseline (design overhead): what an authenticated read needs at the least on this
// stack: SHA-256 of the key, one key lookup, one query on a flat, denormalised copy of the posts, JSON out.
// No rate limit, no joins, no labels or author, no total:
//   GET  /least/boards/:slug/posts?per_page=   the page by votes
//   GET  /least/posts/:id                      one post
//   POST /least/boards/:slug/posts  {title}    one statement: the post row (into the same `posts`, every trigger
//                                              as it stands) and its `post.created` outbox row, the board and
//                                              default status looked up inside it; the row as JSON out
import postgres from 'postgres'

const sql = postgres(process.env.DATABASE_URL!, { max: 10 })

// The flat table, made once per database from the seeded posts (the benchmark's data does not change under the reads).
await sql`create table if not exists bench_flat_posts as
  select p.id, p.workspace_id, b.slug as board, p.title, p.body, s.name as status, p.vote_count as votes, p.comment_count, p.created_at
  from posts p join boards b on b.id = p.board_id join statuses s on s.id = p.status_id`
await sql`create index if not exists bench_flat_posts_top on bench_flat_posts (workspace_id, board, votes desc, id)`
await sql`create unique index if not exists bench_flat_posts_id on bench_flat_posts (id)`

async function leastWork(request: Request, parts: string[], perPage: number) {
  const [key] = await sql`select id, workspace_id from api_keys where key_hash = ${sha256(request.headers.get('authorization')?.slice(7) ?? '')} and revoked_at is null`
  if (!key) return Response.json({ code: 'INVALID_API_KEY' }, { status: 401 })
  if (parts[1] === 'boards' && request.method === 'POST') {
    const input = await request.json() as { title: string; body?: string }
    const [post] = await sql`
      with post as (
        insert into posts (id, workspace_id, board_id, title, body, status_id, author_key_id)
        select ${id('post')}, ${key.workspace_id}, b.id, ${input.title.trim()}, ${input.body ?? ''}, s.id, ${key.id}
        from boards b, statuses s where b.workspace_id = ${key.workspace_id} and b.slug = ${parts[2]!} and s.workspace_id = ${key.workspace_id} and s.is_default
        limit 1
        returning id, board_id, title, body, status_id, vote_count, created_at),
      event as (insert into events (id, workspace_id, type, data) select ${id('evt')}, ${key.workspace_id}, 'post.created', jsonb_build_object('post', to_jsonb(post)) from post)
      select * from post`
    return post ? Response.json(post, { status: 201 }) : notFound()
  }
  if (parts[1] === 'boards') {
    const rows = await sql`select id, title, body, status, votes, comment_count, created_at from bench_flat_posts
      where workspace_id = ${key.workspace_id} and board = ${parts[2]!} order by votes desc, id limit ${perPage}`
    return Response.json({ items: rows, per_page: perPage })
  }
  const [post] = await sql`select id, board, title, body, status, votes, comment_count, created_at from bench_flat_posts where id = ${parts[2]!} and workspace_id = ${key.workspace_id}`
  return post ? Response.json(post) : notFound()
}
const sha256 = (value: string) => Bun.SHA256.hash(value, 'hex')
const id = (prefix: string) => `${prefix}_${Date.now().toString(36)}${crypto.getRandomValues(new Uint32Array(3)).reduce((s, n) => s + n.toString(36), '')}`.slice(0, 32)

const POST_COLUMNS = sql`
  p.id, p.board_id, p.title, p.body, p.status_id, p.owner_user_id, p.vote_count, p.comment_count, p.merged_into_id, p.tracker_issue,
  p.created_at, p.updated_at, b.slug as board_slug, s.name as status_name, s.kind as status_kind,
  au.id as au_id, coalesce(au.name, au.email) as au_name, au.email as au_email,
  eu.id as eu_id, coalesce(eu.name, eu.email) as eu_name, eu.email as eu_email, ak.id as ak_id, ak.name as ak_name,
  coalesce((select array_agg(l.slug order by l.slug) from post_labels pl join labels l on l.id = pl.label_id where pl.post_id = p.id), '{}') as labels`
const POST_JOINS = sql`
  join boards b on b.id = p.board_id join statuses s on s.id = p.status_id
  left join users au on au.id = p.author_user_id left join end_users eu on eu.id = p.author_end_user_id left join api_keys ak on ak.id = p.author_key_id`

function render(row: any, publicView: boolean) {
  const email = (value: string | null) => (publicView ? null : value)
  const author = row.au_id ? { type: 'member', id: row.au_id, name: row.au_name, email: email(row.au_email) }
    : row.eu_id ? { type: 'end_user', id: row.eu_id, name: publicView && row.eu_name === row.eu_email ? row.eu_email?.split('@')[0] : row.eu_name, email: email(row.eu_email) }
    : row.ak_id ? { type: 'api_key', id: row.ak_id, name: row.ak_name, email: null }
    : { type: 'deleted', id: null, name: 'Deleted user', email: null }
  return {
    id: row.id, board: row.board_slug, board_id: row.board_id, title: row.title, body: row.body, status: row.status_name, status_id: row.status_id,
    status_kind: row.status_kind, labels: row.labels, votes: row.vote_count, comment_count: row.comment_count, author,
    owner_user_id: publicView ? null : row.owner_user_id, merged_into: row.merged_into_id, tracker_issue: publicView ? null : row.tracker_issue ?? null,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  }
}

async function authenticate(request: Request) {
  const key = request.headers.get('authorization')?.slice(7) ?? ''
  const [auth] = await sql`select k.*, w.*, k.id as key_id, k.name as key_name, w.id as workspace_id from api_keys k join workspaces w on w.id = k.workspace_id where k.key_hash = ${sha256(key)} and k.revoked_at is null`
  // The key's rate-limit counter, shared by every process through PostgreSQL, as Chorus counts it without Redis.
  if (auth) {
    const window = Math.floor(Date.now() / 60_000)
    await sql`insert into rate_limit_counters (key, "window", count, expires_at) values (${new Bun.CryptoHasher('sha256').update(`key:${auth.key_id}:60`).digest('base64url')}, ${window}, 1, ${new Date((window + 1) * 60_000)})
      on conflict (key, "window") do update set count = rate_limit_counters.count + 1 returning count`
  }
  return auth as { key_id: string; key_name: string; workspace_id: string } | undefined
}

const SORTS = new Set(['top', 'trending', 'new'])

function listPage(board: postgres.PendingQuery<any>, sort: string, perPage: number, page: number) {
  // The page's ids from the same function Chorus calls (migration 0022), the sort a constant of the statement.
  const order = sql.unsafe(`'${SORTS.has(sort) ? sort : 'new'}'`)
  return sql`
    select ${POST_COLUMNS}, (select coalesce(sum(c.posts), 0) from board_post_counts c where c.board_id = ${board})::int as total
    from posts p ${POST_JOINS}
    join unnest(chorus_post_page(${board}, null, ${order}, ${perPage}, ${(page - 1) * perPage})) with ordinality as page(id, n) on page.id = p.id
    order by page.n`
}

const envelope = (rows: any[], perPage: number, page: number, publicView: boolean) => {
  const total = rows[0]?.total ?? 0
  return { items: rows.map((row) => render(row, publicView)), page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) }
}

const notFound = () => Response.json({ code: 'NOT_FOUND' }, { status: 404 })

Bun.serve({
  port: Number(process.env.PORT),
  async fetch(request) {
    const url = new URL(request.url)
    const parts = url.pathname.split('/').filter(Boolean)
    const sort = url.searchParams.get('sort') ?? 'new'
    const perPage = Number(url.searchParams.get('per_page') ?? 20)
    const page = Number(url.searchParams.get('page') ?? 1)

    if (parts[0] === 'least') return leastWork(request, parts, perPage)

    if (parts[0] === 'public') {
      const [, workspaceSlug, , boardSlug] = parts
      const board = sql`(select b.id from boards b where b.workspace_id = (select id from workspaces where slug = ${workspaceSlug!}) and b.slug = ${boardSlug!} and not b.is_private)`
      const rows = await listPage(board, sort, perPage, page)
      if (!rows.length) return notFound()
      const body = JSON.stringify(envelope(rows, perPage, page, true))
      const etag = `W/"${sha256(body).slice(0, 32)}"`
      const headers = { etag, 'cache-control': 'public, max-age=30, stale-while-revalidate=60' }
      if (request.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers })
      return new Response(body, { headers: { ...headers, 'content-type': 'application/json;charset=utf-8' } })
    }

    const auth = await authenticate(request)
    if (!auth) return Response.json({ code: 'INVALID_API_KEY' }, { status: 401 })

    if (parts[0] === 'boards' && request.method === 'GET') {
      const board = sql`(select b.id from boards b where b.workspace_id = ${auth.workspace_id} and b.slug = ${parts[1]!})`
      const rows = await listPage(board, sort, perPage, page)
      if (!rows.length) return notFound()
      return Response.json(envelope(rows, perPage, page, false))
    }

    if (parts[0] === 'boards' && request.method === 'POST') {
      const input = await request.json() as { title: string; body?: string }
      const post = await sql.begin(async (tx) => {
        // Pipelined in the same groups as Chorus: the lookups, then the two inserts with the read-back.
        const [[board], [status]] = await Promise.all([
          tx`select * from boards where workspace_id = ${auth.workspace_id} and slug = ${parts[1]!}`,
          tx`select * from statuses where workspace_id = ${auth.workspace_id} and is_default limit 1`,
        ])
        const postId = id('post')
        const [, , [row]] = await Promise.all([
          tx`insert into posts (id, workspace_id, board_id, title, body, status_id, author_key_id, author_name)
             values (${postId}, ${auth.workspace_id}, ${board!.id}, ${input.title.trim()}, ${input.body ?? ''}, ${status!.id}, ${auth.key_id}, ${auth.key_name})`,
          tx`insert into status_changes (id, post_id, to_status_id, changed_by_key_id) values (${id('sc')}, ${postId}, ${status!.id}, ${auth.key_id})`,
          tx`select ${POST_COLUMNS} from posts p ${POST_JOINS} where p.id = ${postId} and p.workspace_id = ${auth.workspace_id}`,
        ])
        const rendered = render(row, false)
        await tx`insert into events (id, workspace_id, type, data) values (${id('evt')}, ${auth.workspace_id}, 'post.created', ${sql.json({ post: rendered })})`
        return rendered
      })
      return Response.json(post, { status: 201 })
    }

    if (parts[0] === 'posts' && parts[2] === 'votes') {
      const postId = parts[1]!
      const { email } = await request.json() as { email: string }
      const result = await sql.begin(async (tx) => {
        const address = email.trim().toLowerCase()
        const [[post], , [voter]] = await Promise.all([
          tx`select * from posts where id = ${postId} and workspace_id = ${auth.workspace_id} for update`,
          tx`insert into end_users (id, workspace_id, email) values (${id('eu')}, ${auth.workspace_id}, ${address}) on conflict (workspace_id, email) where external_id is null do nothing`,
          tx`select * from end_users where workspace_id = ${auth.workspace_id} and email = ${address} and external_id is null`,
        ])
        if (!post) return null
        const [removed] = await tx`delete from votes where post_id = ${postId} and end_user_id = ${voter!.id} returning *`
        const voteId = removed?.id ?? id('vote')
        const [, [updated]] = await Promise.all([
          removed ? undefined : tx`insert into votes (id, workspace_id, post_id, end_user_id) values (${voteId}, ${auth.workspace_id}, ${postId}, ${voter!.id})`,
          tx`update posts set vote_count = vote_count + ${removed ? -1 : 1} where id = ${postId} returning vote_count`,
        ])
        await tx`insert into events (id, workspace_id, type, data) values (${id('evt')}, ${auth.workspace_id}, ${removed ? 'vote.deleted' : 'vote.created'},
                 ${sql.json({ vote: { id: voteId, post_id: postId, voter: { type: 'end_user', id: voter!.id } }, votes: updated!.vote_count })})`
        return { voted: !removed, votes: updated!.vote_count }
      })
      return result ? Response.json(result) : notFound()
    }

    if (parts[0] === 'posts') {
      const [post] = await sql`select ${POST_COLUMNS} from posts p ${POST_JOINS} where p.id = ${parts[1]!} and p.workspace_id = ${auth.workspace_id}`
      if (!post) return notFound()
      return Response.json(render(post, false))
    }
    return notFound()
  },
})
