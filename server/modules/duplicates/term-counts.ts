// Document frequencies of search lexemes per workspace (migration 0048): the idf of the similarity
// formula. Post writes append a signed delta per post, its lexemes as an array (triggers, migration 0058; no
// row any two writes contend for); the background worker folds them into the counts; a reader sums both,
// so a figure is exact at any moment.
import { sql } from 'drizzle-orm'
import { rowsOf, type Db, type Tx } from '../../db/client.ts'

/** Deltas (posts, ~40 lexemes each) folded per statement: a bounded transaction, repeated while more wait. */
const FOLD_BATCH = 1_000

/** How many unmerged posts of the workspace hold each term (absent: none), and how many unmerged posts it has. */
export async function documentFrequencies(db: Db | Tx, workspaceId: string, terms: string[]) {
  const list = sql`${sql.param(terms)}::text[]`
  const rows = rowsOf<{ term: string | null; df: number }>(await db.execute(sql`
    select f.lexeme as term, sum(f.posts)::int as df from (
      select c.lexeme, c.posts from post_term_counts c where c.workspace_id = ${workspaceId} and c.lexeme = any(${list})
      union all select t.lexeme, d.posts from post_term_deltas d, unnest(d.lexemes) t(lexeme) where d.workspace_id = ${workspaceId} and t.lexeme = any(${list})) f
    group by f.lexeme
    union all select null, (select coalesce(sum(c.posts), 0) from board_post_counts c join boards b on b.id = c.board_id where b.workspace_id = ${workspaceId})::int`))
  const df = new Map<string, number>()
  let posts = 1
  for (const row of rows) {
    if (row.term === null) posts = Math.max(row.df, 1)
    else df.set(row.term, row.df)
  }
  return { df, posts }
}

/** BM25's idf: ln(1 + (N − df + ½) / (df + ½)). */
export const inverseDocumentFrequency = (df: number, posts: number) => Math.log(1 + (posts - df + 0.5) / (df + 0.5))

/**
 * Folds waiting deltas into the counts (sums commute: no order needed); returns how many it folded. A
 * term no post holds any more leaves the table: its lexeme is text a post once held (an address an
 * erasure took out of a post must not stay behind here). `workspaceId` folds only that workspace's.
 */
export async function foldTermDeltas(db: Db | Tx, limit = FOLD_BATCH, workspaceId?: string) {
  const mine = workspaceId ? sql`where workspace_id = ${workspaceId}` : sql``
  const rows = rowsOf<{ folded: number; emptied: { workspace_id: string; lexeme: string }[] | null }>(await db.execute(sql`
    with moved as (
      delete from post_term_deltas where ctid = any(array(select ctid from post_term_deltas ${mine} limit ${limit} for update skip locked))
      returning workspace_id, lexemes, posts),
    summed as (select m.workspace_id, t.lexeme, sum(m.posts)::int as posts from moved m, unnest(m.lexemes) t(lexeme) group by 1, 2),
    written as (
      insert into post_term_counts as c (workspace_id, lexeme, posts)
      select s.workspace_id, s.lexeme, s.posts from summed s where exists (select 1 from workspaces w where w.id = s.workspace_id)
      order by 1, 2
      on conflict (workspace_id, lexeme) do update set posts = c.posts + excluded.posts
      returning c.workspace_id, c.lexeme, c.posts)
    select (select count(*)::int from moved) as folded,
      (select json_agg(json_build_object('workspace_id', w.workspace_id, 'lexeme', w.lexeme)) from written w where w.posts <= 0) as emptied`))
  const emptied = rows[0]?.emptied ?? []
  if (emptied.length) {
    await db.execute(sql`delete from post_term_counts c using unnest(${sql.param(emptied.map((row) => row.workspace_id))}::text[], ${sql.param(emptied.map((row) => row.lexeme))}::text[]) e(workspace_id, lexeme)
      where c.workspace_id = e.workspace_id and c.lexeme = e.lexeme and c.posts <= 0`)
  }
  return rows[0]?.folded ?? 0
}

/**
 * Folds while full batches come back, at most `batches` of them (each its own statement): the suggester's
 * rounds keep the deltas every idf read sums few, however fast posts arrive. One batch a round fell behind a
 * burst of creates, and each check's read of the deltas grew with it (57,000 waiting: 22 ms a read).
 */
export async function foldWaitingTerms(db: Db, batches = 20) {
  for (let batch = 0; batch < batches && (await foldTermDeltas(db)) === FOLD_BATCH; batch++);
}

/** Every waiting delta of one workspace folded, in the caller's transaction (an erasure's). */
export async function foldWorkspaceTerms(tx: Tx, workspaceId: string) {
  while ((await foldTermDeltas(tx, FOLD_BATCH, workspaceId)) === FOLD_BATCH);
}
