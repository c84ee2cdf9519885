// The public side of the changelog: published entries only, newest first, with the linked posts that
// sit on public boards (a private board's post is left out, as on every public read).
import { and, desc, eq, inArray, isNotNull, lte, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { boards, changelogEntries, changelogPosts, posts, workspaces } from '../../db/schema/index.ts'
import { notFound } from '../../errors.ts'
import { escapeHtml as xml } from '../../lib/mail.ts'
import { envelope, totalOf, type Page } from '../../lib/paging.ts'
import { portalChangelogUrl } from '../portal/links.ts'

async function findWorkspace(db: Db, slug: string) {
  const [workspace] = await db.select({ id: workspaces.id, name: workspaces.name, slug: workspaces.slug }).from(workspaces).where(eq(workspaces.slug, slug))
  if (!workspace) throw notFound('Workspace')
  return workspace
}

async function publishedPage(db: Db, workspaceId: string, page: Page) {
  const visible = and(eq(changelogEntries.workspaceId, workspaceId), isNotNull(changelogEntries.publishedAt), lte(changelogEntries.publishedAt, sql`now()`))
  const rows = await db.select({ entry: changelogEntries, total: sql<number>`count(*) over()`.mapWith(Number) })
    .from(changelogEntries).where(visible)
    .orderBy(desc(changelogEntries.publishedAt), desc(changelogEntries.id))
    .limit(page.perPage).offset(page.offset)
  const total = await totalOf(rows, page, async () => (await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(changelogEntries).where(visible))[0]!.n)
  const ids = rows.map((row) => row.entry.id)
  const links = ids.length
    ? await db.select({ entryId: changelogPosts.entryId, id: posts.id, title: posts.title })
      .from(changelogPosts)
      .innerJoin(posts, eq(posts.id, changelogPosts.postId))
      .innerJoin(boards, and(eq(boards.id, posts.boardId), eq(boards.isPrivate, false)))
      .where(inArray(changelogPosts.entryId, ids))
      .orderBy(desc(posts.voteCount), posts.id)
    : []
  const items = rows.map(({ entry }) => ({
    id: entry.id,
    title: entry.title,
    body_html: entry.bodyHtml,
    published_at: entry.publishedAt!.toISOString(),
    posts: links.filter((link) => link.entryId === entry.id).map(({ id, title }) => ({ id, title })),
  }))
  return { items, total }
}

export async function publicChangelog(db: Db, workspaceSlug: string, page: Page) {
  const workspace = await findWorkspace(db, workspaceSlug)
  const { items, total } = await publishedPage(db, workspace.id, page)
  return envelope(items, page, total)
}

const FEED_ENTRIES = 50

/** An Atom 1.0 feed (RFC 4287) of the 50 newest published entries, each linking to its place on the portal. */
export async function changelogFeed(db: Db, workspaceSlug: string, baseUrl: string) {
  const workspace = await findWorkspace(db, workspaceSlug)
  const { items } = await publishedPage(db, workspace.id, { page: 1, perPage: FEED_ENTRIES, offset: 0 })
  const portal = portalChangelogUrl(baseUrl, workspace.slug)
  const self = `${baseUrl}/api/v1/public/${workspace.slug}/changelog/feed.atom`
  const entries = items.map((entry) => `
  <entry>
    <id>${xml(`${portal}#${entry.id}`)}</id>
    <title type="text">${xml(entry.title)}</title>
    <updated>${entry.published_at}</updated>
    <published>${entry.published_at}</published>
    <link rel="alternate" type="text/html" href="${xml(`${portal}#${entry.id}`)}"/>
    <content type="html">${xml(entry.body_html)}</content>
  </entry>`).join('')
  // With no entry yet, the feed's own time is the workspace's first moment anyone could read it: now.
  const updated = items[0]?.published_at ?? new Date().toISOString()
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>${xml(portal)}</id>
  <title type="text">${xml(`${workspace.name} changelog`)}</title>
  <updated>${updated}</updated>
  <author><name>${xml(workspace.name)}</name></author>
  <link rel="self" type="application/atom+xml" href="${xml(self)}"/>
  <link rel="alternate" type="text/html" href="${xml(portal)}"/>${entries}
</feed>
`
}
