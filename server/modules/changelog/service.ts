import { and, asc, desc, eq, inArray, isNotNull, isNull, sql, type SQL } from 'drizzle-orm'
import type { Db, Tx } from '../../db/client.ts'
import { changelogEntries, changelogPosts, posts, statuses } from '../../db/schema/index.ts'
import { ApiError, invalid, notFound } from '../../errors.ts'
import { recordEvent } from '../../events/outbox.ts'
import { newId } from '../../lib/ids.ts'
import { renderMarkdown } from '../../lib/markdown.ts'
import { envelope, totalOf, type Page } from '../../lib/paging.ts'
import { stripBidiControls } from '../../lib/text.ts'
import type { Caller } from '../../plugins/auth.ts'
import { updatePost } from '../posts/service.ts'
import { queueChangelogMail } from './mail.ts'

type EntryRow = typeof changelogEntries.$inferSelect

export interface ChangelogInput {
  title?: string
  body?: string
  published_at?: string | null
  post_ids?: string[]
}

// A client clock a little ahead of ours is not scheduling; anything further is refused.
const CLOCK_SKEW_MS = 60_000

export const toEntryResponse = (row: EntryRow, postIds: string[]) => ({
  id: row.id,
  title: row.title,
  body: row.body,
  body_html: row.bodyHtml,
  published_at: row.publishedAt?.toISOString() ?? null,
  post_ids: postIds,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

async function linkedPostIds(db: Db | Tx, entryIds: string[]) {
  const byEntry = new Map<string, string[]>(entryIds.map((id) => [id, []]))
  if (!entryIds.length) return byEntry
  const rows = await db.select().from(changelogPosts).where(inArray(changelogPosts.entryId, entryIds)).orderBy(asc(changelogPosts.postId))
  for (const row of rows) byEntry.get(row.entryId)!.push(row.postId)
  return byEntry
}

async function findEntry(db: Db | Tx, workspaceId: string, entryId: string, lock = false) {
  const query = db.select().from(changelogEntries).where(and(eq(changelogEntries.id, entryId), eq(changelogEntries.workspaceId, workspaceId)))
  const [row] = lock ? await query.for('update') : await query
  if (!row) throw notFound('Changelog entry')
  return row
}

export async function getEntry(db: Db | Tx, workspaceId: string, entryId: string) {
  const row = await findEntry(db, workspaceId, entryId)
  return toEntryResponse(row, (await linkedPostIds(db, [row.id])).get(row.id)!)
}

/** Newest first: published entries by publication time, drafts (no time yet) by creation, ahead of them. */
export async function listEntries(db: Db, workspaceId: string, state: 'draft' | 'published' | undefined, page: Page) {
  const conditions: SQL[] = [eq(changelogEntries.workspaceId, workspaceId)]
  if (state === 'draft') conditions.push(isNull(changelogEntries.publishedAt))
  if (state === 'published') conditions.push(isNotNull(changelogEntries.publishedAt))
  const rows = await db.select({ entry: changelogEntries, total: sql<number>`count(*) over()`.mapWith(Number) })
    .from(changelogEntries).where(and(...conditions))
    .orderBy(sql`${changelogEntries.publishedAt} desc nulls first`, desc(changelogEntries.createdAt), desc(changelogEntries.id))
    .limit(page.perPage).offset(page.offset)
  const total = await totalOf(rows, page, async () => (await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(changelogEntries).where(and(...conditions)))[0]!.n)
  const links = await linkedPostIds(db, rows.map((row) => row.entry.id))
  return envelope(rows.map(({ entry }) => toEntryResponse(entry, links.get(entry.id)!)), page, total)
}

function cleanTitle(title: string) {
  const clean = stripBidiControls(title).trim()
  if (!clean) throw invalid(['body', 'title'], 'The title is empty without its bidirectional control characters and surrounding whitespace')
  return clean
}

function publicationTime(value: string) {
  const at = new Date(value)
  if (at.getTime() > Date.now() + CLOCK_SKEW_MS) throw invalid(['body', 'published_at'], 'Scheduling is not supported: published_at cannot be in the future')
  return at
}

/** Every id must be a post of this workspace; a foreign or unknown one fails the whole request before anything is written. */
async function checkPosts(tx: Tx, workspaceId: string, postIds: string[]) {
  if (!postIds.length) return
  const found = await tx.select({ id: posts.id }).from(posts).where(and(eq(posts.workspaceId, workspaceId), inArray(posts.id, postIds)))
  const missing = postIds.filter((id) => !found.some((row) => row.id === id))
  if (missing.length) throw invalid(['body', 'post_ids'], `Unknown post${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`)
}

async function setPosts(tx: Tx, workspaceId: string, entryId: string, postIds: string[]) {
  await tx.delete(changelogPosts).where(eq(changelogPosts.entryId, entryId))
  if (postIds.length) await tx.insert(changelogPosts).values(postIds.map((postId) => ({ entryId, postId, workspaceId })))
}

/**
 * Publishing, inside the entry's transaction: each linked post moves to the workspace's first
 * `complete` status through the posts service (so `status.changed` and `post.updated` are raised as for
 * any edit), `changelog.published` is recorded, and one mail per voter is queued (sent after commit).
 */
async function publish(tx: Tx, workspaceId: string, caller: Caller, entry: ReturnType<typeof toEntryResponse>) {
  if (entry.post_ids.length) {
    const [complete] = await tx.select().from(statuses).where(and(eq(statuses.workspaceId, workspaceId), eq(statuses.kind, 'complete'))).orderBy(asc(statuses.position), asc(statuses.name)).limit(1)
    if (!complete) throw new ApiError('CONFLICT', 'The workspace has no status of kind "complete" to move the linked posts to')
    const linked = await tx.select({ id: posts.id, statusId: posts.statusId }).from(posts).where(inArray(posts.id, entry.post_ids))
    for (const post of linked) {
      if (post.statusId !== complete.id) await updatePost(tx, workspaceId, caller, post.id, { status: complete.id })
    }
  }
  await recordEvent(tx, workspaceId, 'changelog.published', { entry })
  await queueChangelogMail(tx, workspaceId, entry.id, entry.post_ids)
}

export async function createEntry(db: Db, workspaceId: string, caller: Caller, input: ChangelogInput & { title: string }) {
  return db.transaction(async (tx) => {
    const postIds = input.post_ids ?? []
    await checkPosts(tx, workspaceId, postIds)
    const body = input.body ?? ''
    const publishedAt = input.published_at ? publicationTime(input.published_at) : null
    const id = newId('changelogEntry')
    await tx.insert(changelogEntries).values({ id, workspaceId, title: cleanTitle(input.title), body, bodyHtml: renderMarkdown(body), publishedAt })
    await setPosts(tx, workspaceId, id, postIds)
    const entry = await getEntry(tx, workspaceId, id)
    if (publishedAt) await publish(tx, workspaceId, caller, entry)
    return entry
  })
}

export async function updateEntry(db: Db, workspaceId: string, caller: Caller, entryId: string, changes: ChangelogInput) {
  return db.transaction(async (tx) => {
    const current = await findEntry(tx, workspaceId, entryId, true)
    if (changes.post_ids !== undefined) await checkPosts(tx, workspaceId, changes.post_ids)
    const publishedAt = changes.published_at ? publicationTime(changes.published_at) : undefined
    await tx.update(changelogEntries).set({
      ...(changes.title !== undefined && { title: cleanTitle(changes.title) }),
      ...(changes.body !== undefined && { body: changes.body, bodyHtml: renderMarkdown(changes.body) }),
      ...(publishedAt && { publishedAt }),
      // Unpublish: a draft again. changelog_emails keeps who was e-mailed, so a later publish mails no one twice.
      ...(changes.published_at === null && { publishedAt: null }),
      updatedAt: sql`now()`,
    }).where(eq(changelogEntries.id, entryId))
    if (changes.post_ids !== undefined) await setPosts(tx, workspaceId, entryId, changes.post_ids)
    const entry = await getEntry(tx, workspaceId, entryId)
    if (publishedAt && !current.publishedAt) await publish(tx, workspaceId, caller, entry)
    return entry
  })
}

export async function deleteEntry(db: Db, workspaceId: string, entryId: string) {
  await findEntry(db, workspaceId, entryId)
  await db.delete(changelogEntries).where(and(eq(changelogEntries.id, entryId), eq(changelogEntries.workspaceId, workspaceId)))
}
