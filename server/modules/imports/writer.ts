// One batch of one pass's records → rows (docs/import.md#how-an-import-runs). Whatever a batch writes
// commits with the job's checkpoint, so it is written once or not at all. Imported history is history:
// no event, webhook, notification, subscription or e-mail is made for it.
import { sql } from 'drizzle-orm'
import { anyOf, rowsOf } from '../../db/client.ts'
import { newId } from '../../lib/ids.ts'
import { renderMarkdown } from '../../lib/markdown.ts'
import type { ImportRecord, RecordKind } from './records.ts'
import { slugify } from '../labels/service.ts'
import { boardKey, count, insertPosts, insertRows, loadStatuses, personKey, refsFor, resolveBoards, resolveLabels, resolvePeople, saveRefs, statusFor, type Target } from './resolve.ts'

type Of<K extends RecordKind> = Extract<ImportRecord, { kind: K }>
export type RowProblem = (line: number, message: string) => void

/** The counts' name of each kind. */
export const TALLY_NAME: Record<RecordKind, string> = {
  company: 'companies', user: 'users', board: 'boards', status: 'statuses', label: 'labels', post: 'posts',
  post_label: 'post_labels', comment: 'comments', vote: 'votes', changelog: 'changelog_entries',
}

/** The records of `list` whose `ref` was not imported before nor seen earlier in the batch; the rest are counted skipped. */
async function fresh<R extends { ref: string }>(t: Target, kind: RecordKind, list: R[]): Promise<R[]> {
  const known = await refsFor(t, kind, list.map((record) => record.ref))
  const seen = new Set<string>()
  const out = list.filter((record) => !known.has(record.ref) && !seen.has(record.ref) && seen.add(record.ref))
  count(t.tally, TALLY_NAME[kind], 'skipped', list.length - out.length)
  return out
}

/** Local post ids for the records' post refs; a record whose post is not imported is a row problem. */
async function withPosts<R extends { postRef: string; line: number }>(t: Target, list: R[], problem: RowProblem) {
  const posts = await refsFor(t, 'post', list.map((record) => record.postRef))
  return list.filter((record) => posts.has(record.postRef) || void problem(record.line, `post "${record.postRef}" is not in this import`)).map((record) => ({ record, postId: posts.get(record.postRef)! }))
}

const at = (record: { createdAt: string }) => record.createdAt
const people = (t: Target, list: (ImportRecord & { author?: unknown })[]) => resolvePeople(t, list.flatMap((record) => ('author' in record && record.author ? [record.author] : [])))

const COMMENT_COLUMNS: [string, string][] = [['id', 'text'], ['workspace_id', 'text'], ['post_id', 'text'], ['parent_id', 'text'], ['body', 'text'], ['internal', 'boolean'],
  ['author_end_user_id', 'text'], ['author_name', 'text'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz']]

const writers: { [K in RecordKind]: (t: Target, list: Of<K>[], problem: RowProblem) => Promise<void> } = {
  async company(t, list) {
    const todo = await fresh(t, 'company', list)
    const existing = new Map(rowsOf<{ id: string; external_id: string }>(await t.tx.execute(sql`select id, external_id from companies where workspace_id = ${t.workspaceId}
      and ${anyOf(sql`external_id`, todo.map((record) => record.ref))}`)).map((row) => [row.external_id, row.id]))
    const rows = todo.filter((record) => !existing.has(record.ref)).map((record) => ({ id: newId('company'), workspace_id: t.workspaceId, external_id: record.ref, name: record.name, mrr: record.mrr, created_at: record.createdAt ?? new Date().toISOString() }))
    await insertRows(t.tx, 'companies', [['id', 'text'], ['workspace_id', 'text'], ['external_id', 'text'], ['name', 'text'], ['mrr', 'bigint'], ['created_at', 'timestamptz']], rows)
    count(t.tally, 'companies', 'created', rows.length)
    count(t.tally, 'companies', 'merged', todo.length - rows.length)
    const ids = new Map([...existing, ...rows.map((row) => [row.external_id, row.id] as const)])
    await saveRefs(t, 'company', todo.map((record) => [record.ref, ids.get(record.ref)!]))
  },
  async user(t, list) {
    const known = await refsFor(t, 'user', list.flatMap((record) => (record.person.ref ? [record.person.ref] : [])))
    count(t.tally, 'users', 'skipped', list.filter((record) => record.person.ref && known.has(record.person.ref)).length)
    await resolvePeople(t, list.filter((record) => !(record.person.ref && known.has(record.person.ref))).map((record) => record.person))
  },
  async board(t, list) {
    await resolveBoards(t, list.map((record) => record.board), true)
  },
  async status(t, list) {
    const statuses = await loadStatuses(t)
    const [{ next }] = rowsOf<{ next: number }>(await t.tx.execute(sql`select coalesce(max(position), -1) + 1 as next from statuses where workspace_id = ${t.workspaceId}`)) as [{ next: number }]
    const rows: object[] = []
    for (const record of list) {
      const name = record.name.trim()
      if (statuses.byName.has(name.toLowerCase())) { count(t.tally, 'statuses', 'merged'); continue }
      const id = newId('status')
      statuses.byName.set(name.toLowerCase(), id)
      rows.push({ id, workspace_id: t.workspaceId, name, kind: record.statusKind, position: Number(next) + rows.length })
    }
    await insertRows(t.tx, 'statuses', [['id', 'text'], ['workspace_id', 'text'], ['name', 'text'], ['kind', 'text'], ['position', 'integer']], rows)
    count(t.tally, 'statuses', 'created', rows.length)
  },
  async label(t, list) {
    const todo = await fresh(t, 'label', list)
    const before = t.tally.labels?.created ?? 0
    const ids = await resolveLabels(t, todo.map((record) => record.name))
    count(t.tally, 'labels', 'merged', todo.length - ((t.tally.labels?.created ?? 0) - before))
    await saveRefs(t, 'label', todo.flatMap((record) => (ids.has(slugify(record.name)) ? [[record.ref, ids.get(slugify(record.name))!] as [string, string]] : [])))
  },
  async post(t, list) {
    const todo = await fresh(t, 'post', list)
    if (!todo.length) return
    const [boards, authors, statuses, labels] = [await resolveBoards(t, todo.map((record) => record.board)), await people(t, todo), await loadStatuses(t), await resolveLabels(t, todo.flatMap((record) => record.labels))]
    const rows = todo.map((record) => ({
      id: newId('post'), workspace_id: t.workspaceId, board_id: boards.get(boardKey(record.board))!, title: record.title, body: record.body,
      status_id: statusFor(statuses, record.status, record.statusKind), author_end_user_id: record.author ? authors.get(personKey(record.author)!) ?? null : null,
      author_name: record.author?.name ?? null, vote_count: record.voteCount, created_at: at(record), updated_at: at(record),
    }))
    await insertPosts(t, rows)
    await saveRefs(t, 'post', todo.map((record, index) => [record.ref, rows[index]!.id]))
    await insertRows(t.tx, 'post_labels', [['post_id', 'text'], ['label_id', 'text']],
      todo.flatMap((record, index) => [...new Set(record.labels.map(slugify))].flatMap((slug) => (labels.has(slug) ? [{ post_id: rows[index]!.id, label_id: labels.get(slug) }] : []))), sql`on conflict do nothing`)
    count(t.tally, 'posts', 'created', rows.length)
  },
  async post_label(t, list, problem) {
    const linked = await withPosts(t, list, problem)
    const labels = await refsFor(t, 'label', linked.map(({ record }) => record.labelRef))
    const rows = linked.filter(({ record }) => labels.has(record.labelRef) || void problem(record.line, `tag "${record.labelRef}" is not in this import`))
      .map(({ record, postId }) => ({ post_id: postId, label_id: labels.get(record.labelRef) }))
    const inserted = await insertRows(t.tx, 'post_labels', [['post_id', 'text'], ['label_id', 'text']], rows, sql`on conflict do nothing returning post_id`)
    count(t.tally, 'post_labels', 'created', inserted.length)
    count(t.tally, 'post_labels', 'skipped', rows.length - inserted.length)
  },
  async comment(t, list, problem) {
    const linked = await withPosts(t, await fresh(t, 'comment', list), problem)
    if (!linked.length) return
    const authors = await people(t, linked.map(({ record }) => record))
    const parents = await refsFor(t, 'comment', linked.flatMap(({ record }) => (record.parentRef ? [record.parentRef] : [])))
    const rows = linked.map(({ record, postId }) => {
      const row = {
        id: newId('comment'), workspace_id: t.workspaceId, post_id: postId, parent_id: (record.parentRef && parents.get(record.parentRef)) || null, body: record.body, internal: record.internal,
        author_end_user_id: record.author ? authors.get(personKey(record.author)!) ?? null : null, author_name: record.author?.name ?? null, created_at: at(record), updated_at: at(record),
      }
      parents.set(record.ref, row.id)
      return row
    })
    await insertRows(t.tx, 'comments', COMMENT_COLUMNS, rows)
    await saveRefs(t, 'comment', linked.map(({ record }, index) => [record.ref, rows[index]!.id]))
    await t.tx.execute(sql`update posts p set comment_count = (select count(*) from comments c where c.post_id = p.id and not c.internal)
      where ${anyOf(sql`p.id`, [...new Set(rows.map((row) => row.post_id))])}`)
    count(t.tally, 'comments', 'created', rows.length)
  },
  async vote(t, list, problem) {
    const linked = await withPosts(t, list, problem)
    const voters = await resolvePeople(t, linked.map(({ record }) => record.voter))
    const rows = linked.map(({ record, postId }) => ({ id: newId('vote'), workspace_id: t.workspaceId, post_id: postId, end_user_id: voters.get(personKey(record.voter)!), created_at: at(record) }))
    // The per-vote demand trigger and the score.changed event stand aside while the votes go in and their
    // posts are recounted once (migrations 0052, 0053): imported history tells no one.
    // (The setting is local to the transaction: a batch that fails takes it with it.)
    await t.tx.execute(sql`select set_config('chorus.bulk_votes', 'on', true)`)
    const inserted = await insertRows(t.tx, 'votes', [['id', 'text'], ['workspace_id', 'text'], ['post_id', 'text'], ['end_user_id', 'text'], ['created_at', 'timestamptz']], rows, sql`on conflict do nothing returning post_id, end_user_id`)
    count(t.tally, 'votes', 'created', inserted.length)
    count(t.tally, 'votes', 'skipped', rows.length - inserted.length)
    if (inserted.length) {
      // Demand counts verified voters only: the posts recounted are those a verified voter's new vote reached (none, for e-mail-only voters).
      await t.tx.execute(sql`select chorus_demand_recount_posts(array(select distinct x.post_id from unnest(${sql.param(inserted.map((row) => row.post_id!))}::text[], ${sql.param(inserted.map((row) => row.end_user_id!))}::text[]) as x(post_id, end_user_id)
        join end_users e on e.id = x.end_user_id and e.verified_at is not null))`)
      // The source's own count wins when it is higher (votes it did not export, e.g. anonymous ones); a post whose count stays is not rewritten.
      await t.tx.execute(sql`update posts p set vote_count = c.votes from (select post_id, count(*)::int as votes from votes where ${anyOf(sql`post_id`, [...new Set(inserted.map((row) => row.post_id!))])} group by post_id) c
        where p.id = c.post_id and p.vote_count < c.votes`)
    }
    await t.tx.execute(sql`select set_config('chorus.bulk_votes', 'off', true)`)
  },
  async changelog(t, list) {
    const todo = await fresh(t, 'changelog', list)
    const posts = await refsFor(t, 'post', todo.flatMap((record) => record.postRefs))
    const rows = todo.map((record) => ({ id: newId('changelogEntry'), workspace_id: t.workspaceId, title: record.title, body: record.body, body_html: renderMarkdown(record.body), published_at: record.publishedAt, created_at: record.createdAt, updated_at: record.createdAt }))
    await insertRows(t.tx, 'changelog_entries', [['id', 'text'], ['workspace_id', 'text'], ['title', 'text'], ['body', 'text'], ['body_html', 'text'], ['published_at', 'timestamptz'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz']], rows)
    await insertRows(t.tx, 'changelog_posts', [['entry_id', 'text'], ['post_id', 'text'], ['workspace_id', 'text']],
      todo.flatMap((record, index) => [...new Set(record.postRefs)].flatMap((ref) => (posts.has(ref) ? [{ entry_id: rows[index]!.id, post_id: posts.get(ref), workspace_id: t.workspaceId }] : []))))
    await saveRefs(t, 'changelog', todo.map((record, index) => [record.ref, rows[index]!.id]))
    count(t.tally, 'changelog_entries', 'created', rows.length)
  },
}

/** Writes one batch of records of one kind. */
export function writeBatch(t: Target, kind: RecordKind, list: ImportRecord[], problem: RowProblem) {
  return (writers[kind] as (t: Target, list: ImportRecord[], problem: RowProblem) => Promise<void>)(t, list, problem)
}
