// The baseline: the same GET /posts/:id (key check, post with board/status/author, its labels) written
// straight on Bun.serve and postgres.js, with no framework, to compare Chorus against in the same run.
import postgres from 'postgres'

const sql = postgres(process.env.DATABASE_URL!, { max: 10 })
const sha256 = async (value: string) =>
  Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value))), (b) => b.toString(16).padStart(2, '0')).join('')

Bun.serve({
  port: Number(process.env.PORT),
  async fetch(request) {
    const id = new URL(request.url).pathname.split('/').pop()!
    const key = request.headers.get('authorization')?.slice(7) ?? ''
    const [auth] = await sql`select k.workspace_id from api_keys k join workspaces w on w.id = k.workspace_id where k.key_hash = ${await sha256(key)} and k.revoked_at is null`
    if (!auth) return Response.json({ code: 'INVALID_API_KEY' }, { status: 401 })
    const [post] = await sql`
      select p.*, b.slug as board_slug, s.name as status_name, s.kind as status_kind, k.name as key_name
      from posts p join boards b on b.id = p.board_id join statuses s on s.id = p.status_id
      left join api_keys k on k.id = p.author_key_id
      where p.id = ${id} and p.workspace_id = ${auth.workspace_id}`
    if (!post) return Response.json({ code: 'NOT_FOUND' }, { status: 404 })
    const labels = await sql`select l.slug from post_labels pl join labels l on l.id = pl.label_id where pl.post_id = ${id} order by l.slug`
    return Response.json({
      id: post.id, board: post.board_slug, title: post.title, body: post.body, status: post.status_name, status_kind: post.status_kind,
      labels: labels.map((l) => l.slug), votes: post.vote_count, comment_count: post.comment_count,
      author: { type: 'api_key', id: post.author_key_id, name: post.key_name }, merged_into: post.merged_into_id,
      created_at: post.created_at.toISOString(), updated_at: post.updated_at.toISOString(),
    })
  },
})
