// Finding or making the rows records point at: people, boards, labels, statuses, and the source id →
// local id map (external_refs). Every statement takes a whole batch as one JSON parameter, so a batch of
// 500 records costs a handful of round trips on both drivers.
import { sql } from 'drizzle-orm'
import { anyOf, rowsOf, type Tx } from '../../db/client.ts'
import { newId } from '../../lib/ids.ts'
import { slugify } from '../labels/service.ts'
import { KIND_BY_STATUS_NAME, type BoardSpec, type Person, type StatusKindName } from './records.ts'

export type Tally = Record<string, { created: number; merged: number; skipped: number }>

export interface Target {
  tx: Tx
  workspaceId: string
  source: string
  importId: string
  /** The board slug posts without one go to (the request's `board`). */
  defaultBoard?: string
  tally: Tally
  /**
   * Source ids already looked up or saved by this run (`kind\0external id` → local id), so the votes of
   * 20,000 voters do not look each voter up again in every batch. Only committed or in-transaction rows
   * enter it, and a run that fails drops it with itself; cleared at REF_CACHE_MAX entries (memory).
   */
  refCache?: Map<string, string>
}

// 120,000 entries held ~100 MB (the full-scale bench's RSS growth was 138 MB): a cache this size costs
// one lookup statement per batch after each clear and stays within the import's memory goal.
const REF_CACHE_MAX = 40_000
const cacheKey = (kind: string, externalId: string) => `${kind}\u0000${externalId}`
/** A flat copy: ids and keys built by concatenation are ropes of many pieces, several times their length in memory. */
const flat = (value: string) => Buffer.from(value).toString()
function remember(t: Target, kind: string, pairs: Iterable<readonly [string, string]>) {
  if (!t.refCache) return
  for (const [external, local] of pairs) {
    if (t.refCache.size >= REF_CACHE_MAX) t.refCache.clear()
    t.refCache.set(flat(cacheKey(kind, external)), flat(local))
  }
}

export function count(tally: Tally, name: string, what: 'created' | 'merged' | 'skipped', by = 1) {
  const row = (tally[name] ??= { created: 0, merged: 0, skipped: 0 })
  row[what] += by
}

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`

/** Inserts `rows` (objects keyed by column) into `table` through jsonb_to_recordset; columns are constants. */
export async function insertRows(tx: Tx, table: string, columns: [string, string][], rows: object[], suffix = sql``) {
  if (!rows.length) return []
  const names = sql.raw(columns.map(([name]) => name).join(', '))
  const types = sql.raw(columns.map(([name, type]) => `${name} ${type}`).join(', '))
  return rowsOf<Record<string, string>>(await tx.execute(sql`insert into ${sql.raw(table)} (${names}) select ${names} from jsonb_to_recordset(${json(rows)}) as x(${types}) ${suffix}`))
}

const POST_COLUMNS: [string, string][] = [['id', 'text'], ['workspace_id', 'text'], ['board_id', 'text'], ['title', 'text'], ['body', 'text'], ['status_id', 'text'],
  ['author_end_user_id', 'text'], ['author_name', 'text'], ['vote_count', 'integer'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz']]

/**
 * Inserts a batch's posts (none merged or held) with each post's deferred board count standing aside
 * (`chorus.bulk_posts`, migration 0057), and adds the batch's count per board and status in one statement.
 */
export async function insertPosts(t: Target, rows: { board_id: string; status_id: string }[]) {
  await t.tx.execute(sql`select set_config('chorus.bulk_posts', 'on', true)`)
  await insertRows(t.tx, 'posts', POST_COLUMNS, rows)
  await t.tx.execute(sql`select set_config('chorus.bulk_posts', 'off', true)`)
  const perBoard = new Map<string, { board_id: string; status_id: string; posts: number }>()
  for (const row of rows) {
    const key = `${row.board_id}\u0000${row.status_id}`
    const entry = perBoard.get(key) ?? perBoard.set(key, { board_id: row.board_id, status_id: row.status_id, posts: 0 }).get(key)!
    entry.posts++
  }
  await insertRows(t.tx, 'board_post_counts', [['board_id', 'text'], ['status_id', 'text'], ['posts', 'integer']], [...perBoard.values()],
    sql`on conflict (board_id, status_id) do update set posts = board_post_counts.posts + excluded.posts`)
}

/** Local ids of source ids already imported as `kind`. */
export async function refsFor(t: Target, kind: string, externalIds: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  const missing: string[] = []
  for (const id of new Set(externalIds)) {
    const cached = t.refCache?.get(cacheKey(kind, id))
    if (cached) found.set(id, cached)
    else missing.push(id)
  }
  if (!missing.length) return found
  // One primary-key lookup per id: as `external_id = any($4)` the planner, its statistics taken while the
  // table was small, filtered every ref of the kind instead (100,000 rows read per batch at 100,000 posts).
  const rows = rowsOf<{ external_id: string; local_id: string }>(await t.tx.execute(sql`select external_id, local_id from (select x.external_id,
    (select r.local_id from external_refs r where r.workspace_id = ${t.workspaceId} and r.source = ${t.source} and r.kind = ${kind} and r.external_id = x.external_id) as local_id
    from unnest(${sql.param(missing)}::text[]) as x(external_id)) found where local_id is not null`))
  const pairs = rows.map((row) => [row.external_id, row.local_id] as const)
  remember(t, kind, pairs)
  for (const [external, local] of pairs) found.set(external, local)
  return found
}

export async function saveRefs(t: Target, kind: string, pairs: [string, string][]) {
  await insertRows(t.tx, 'external_refs', [['workspace_id', 'text'], ['source', 'text'], ['kind', 'text'], ['external_id', 'text'], ['local_id', 'text'], ['import_id', 'text']],
    pairs.map(([external_id, local_id]) => ({ workspace_id: t.workspaceId, source: t.source, kind, external_id, local_id, import_id: t.importId })), sql`on conflict do nothing`)
  remember(t, kind, pairs)
}

export const personKey = (person: Person) => person.ref ?? (person.externalId ? `x:${person.externalId}` : person.email ? `e:${person.email}` : null)

/**
 * End user ids for `people` by personKey: an imported source id first, then an end user with the same
 * external id or (anonymous) e-mail, which is merged, else a new end user, verified only when the source
 * vouches for the person. Counted under `users` when `counted` (the users pass counts its own records).
 */
export async function resolvePeople(t: Target, people: Person[], counted = true): Promise<Map<string, string>> {
  const unique = new Map<string, Person>()
  for (const person of people) {
    const key = personKey(person)
    if (key && !unique.has(key)) unique.set(key, person)
  }
  const found = new Map<string, string>()
  const byRef = await refsFor(t, 'user', [...unique.values()].flatMap((person) => (person.ref ? [person.ref] : [])))
  const open: [string, Person][] = []
  for (const [key, person] of unique) {
    const local = person.ref ? byRef.get(person.ref) : undefined
    if (local) found.set(key, local)
    else open.push([key, person])
  }
  if (!open.length) return found
  const externalIds = open.flatMap(([, person]) => (person.externalId ? [person.externalId] : []))
  const emails = open.flatMap(([, person]) => (person.email ? [person.email] : []))
  // One lookup per value on end_users_external_key and end_users_anonymous_email_key (`limit 1` keeps each a
  // lookup, not a join the planner may hash): not an OR it may scan the table for, nor `= any($2)`, which it
  // may filter the workspace's people with (as refsFor says).
  const existing = rowsOf<{ id: string; external_id: string | null; email: string | null }>(await t.tx.execute(sql`select e.* from unnest(${sql.param(externalIds)}::text[]) as x(value) join lateral (select id, external_id, email from end_users
    where workspace_id = ${t.workspaceId} and external_id = x.value limit 1) e on true
    union all select e.* from unnest(${sql.param(emails)}::text[]) as y(value) join lateral (select id, external_id, email from end_users
    where workspace_id = ${t.workspaceId} and external_id is null and email = y.value limit 1) e on true`))
  const byExternal = new Map(existing.filter((row) => row.external_id).map((row) => [row.external_id!, row.id]))
  const byEmail = new Map(existing.filter((row) => !row.external_id && row.email).map((row) => [row.email!, row.id]))
  const created: object[] = []
  const refs: [string, string][] = []
  for (const [key, person] of open) {
    let local = (person.externalId && byExternal.get(person.externalId)) || (person.email && byEmail.get(person.email)) || undefined
    if (local) {
      if (counted) count(t.tally, 'users', 'merged')
    } else {
      local = newId('endUser')
      const at = person.createdAt ?? new Date().toISOString()
      created.push({ id: local, workspace_id: t.workspaceId, external_id: person.externalId ?? null, email: person.externalId ? person.email ?? null : person.email ?? null, name: person.name ?? null, verified_at: person.verified ? at : null, created_at: at, updated_at: at })
      // Later people of this batch with the same external id or e-mail are the same person.
      if (person.externalId) byExternal.set(person.externalId, local)
      else if (person.email) byEmail.set(person.email, local)
      if (counted) count(t.tally, 'users', 'created')
    }
    found.set(key, local)
    if (person.ref) refs.push([person.ref, local])
  }
  await insertRows(t.tx, 'end_users', [['id', 'text'], ['workspace_id', 'text'], ['external_id', 'text'], ['email', 'text'], ['name', 'text'], ['verified_at', 'timestamptz'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz']], created)
  await saveRefs(t, 'user', refs)
  const links = open.flatMap(([key, person]) => (person.companyRefs ?? []).map((company) => [found.get(key)!, company] as const))
  if (links.length) {
    const companies = await refsFor(t, 'company', links.map(([, company]) => company))
    await insertRows(t.tx, 'end_user_companies', [['end_user_id', 'text'], ['company_id', 'text']],
      links.filter(([, company]) => companies.has(company)).map(([end_user_id, company]) => ({ end_user_id, company_id: companies.get(company) })), sql`on conflict do nothing`)
  }
  return found
}

export const boardKey = (board: BoardSpec) => board.ref ?? `name:${board.name.trim().toLowerCase()}`

/** Board ids for `boards` by boardKey: imported source id, else a board of that slug or name (merged), else a new board; a nameless one is the default board. */
export async function resolveBoards(t: Target, boards: BoardSpec[], counted = false): Promise<Map<string, string>> {
  const unique = new Map(boards.map((board) => [boardKey(board), board]))
  const found = new Map<string, string>()
  const byRef = await refsFor(t, 'board', [...unique.values()].flatMap((board) => (board.ref ? [board.ref] : [])))
  const local = rowsOf<{ id: string; slug: string; name: string }>(await t.tx.execute(sql`select id, slug, name from boards where workspace_id = ${t.workspaceId} order by created_at, id`))
  const refs: [string, string][] = []
  for (const [key, board] of unique) {
    const imported = board.ref ? byRef.get(board.ref) : undefined
    if (imported) {
      found.set(key, imported)
      if (counted) count(t.tally, 'boards', 'skipped')
      continue
    }
    const name = board.name.trim() || t.defaultBoard || ''
    const slug = slugify(name) || 'feedback'
    let match = name ? local.find((row) => row.slug === slug || row.name.toLowerCase() === name.toLowerCase()) : local[0]
    if (match) {
      if (counted) count(t.tally, 'boards', 'merged')
    } else {
      const at = board.createdAt ?? new Date().toISOString()
      match = { id: newId('board'), slug, name: name || 'Feedback' }
      await insertRows(t.tx, 'boards', [['id', 'text'], ['workspace_id', 'text'], ['slug', 'text'], ['name', 'text'], ['is_private', 'boolean'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz']],
        [{ id: match.id, workspace_id: t.workspaceId, slug, name: match.name, is_private: board.isPrivate ?? false, created_at: at, updated_at: at }])
      local.push(match)
      count(t.tally, 'boards', 'created')
    }
    found.set(key, match.id)
    if (board.ref) refs.push([board.ref, match.id])
  }
  await saveRefs(t, 'board', refs)
  return found
}

/** Label ids by slug for `names`, making the missing ones. */
export async function resolveLabels(t: Target, names: string[]): Promise<Map<string, string>> {
  const wanted = new Map(names.map((name) => [slugify(name), name]).filter(([slug]) => slug) as [string, string][])
  if (!wanted.size) return new Map()
  const existing = rowsOf<{ id: string; slug: string }>(await t.tx.execute(sql`select id, slug from labels where workspace_id = ${t.workspaceId} and ${anyOf(sql`slug`, [...wanted.keys()])}`))
  const found = new Map(existing.map((row) => [row.slug, row.id]))
  const created = [...wanted].filter(([slug]) => !found.has(slug)).map(([slug, name]) => ({ id: newId('label'), workspace_id: t.workspaceId, slug, name }))
  await insertRows(t.tx, 'labels', [['id', 'text'], ['workspace_id', 'text'], ['slug', 'text'], ['name', 'text']], created)
  for (const row of created) found.set(row.slug, row.id)
  if (created.length) count(t.tally, 'labels', 'created', created.length)
  return found
}

export interface StatusMap { byName: Map<string, string>; byKind: Map<string, string>; fallback: string }

export async function loadStatuses(t: Target): Promise<StatusMap> {
  const rows = rowsOf<{ id: string; name: string; kind: string; is_default: boolean }>(await t.tx.execute(sql`select id, name, kind, is_default from statuses where workspace_id = ${t.workspaceId} order by position, id`))
  const byKind = new Map<string, string>()
  for (const row of rows) if (!byKind.has(row.kind)) byKind.set(row.kind, row.id)
  return { byName: new Map(rows.map((row) => [row.name.toLowerCase(), row.id])), byKind, fallback: (rows.find((row) => row.is_default) ?? rows[0])!.id }
}

/** A source status: a local status of that name, else the first of the kind it means, else the default. */
export function statusFor(statuses: StatusMap, name: string | null, kind?: StatusKindName | null): string {
  const key = name?.trim().toLowerCase() ?? ''
  return statuses.byName.get(key) ?? statuses.byKind.get(kind ?? KIND_BY_STATUS_NAME[key] ?? '') ?? statuses.fallback
}
