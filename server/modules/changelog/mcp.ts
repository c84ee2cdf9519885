// Changelog tools for the MCP server. An assistant drafts entries; publishing (which completes posts
// and e-mails voters) stays a human decision in the dashboard or through the REST API.
import { z } from 'zod'
import type { Tool } from '../mcp/tools.ts'
import { portalChangelogUrl } from '../portal/links.ts'
import { createEntry, listEntries } from './service.ts'


export const CHANGELOG_TOOLS: Tool[] = [
  {
    name: 'list_changelog_entries',
    title: 'List changelog entries',
    description: 'Lists the changelog entries of the workspace, newest first (drafts first), with their Markdown body and the ids of the posts each one ships. state narrows to drafts or published entries.',
    scope: 'changelog:read',
    write: false,
    input: {
      state: z.enum(['draft', 'published']).optional().describe('Only drafts or only published entries'),
      limit: z.number().int().min(1).max(50).optional().describe('Entries to return, 10 by default'),
    },
    async run(ctx, resolved, args) {
      const page = await listEntries(ctx.db, resolved.workspace.id, args.state, { page: 1, perPage: args.limit ?? 10, offset: 0 })
      return { total: page.total, entries: page.items.map(({ body_html: _html, ...entry }) => ({ ...entry, url: portalChangelogUrl(ctx.config.baseUrl, resolved.workspace.slug, entry.id) })) }
    },
  },
  {
    name: 'draft_changelog_entry',
    title: 'Draft a changelog entry',
    description: 'Writes a changelog entry as a draft (never published from here): a title, a Markdown body and the ids of the posts it ships (from search_posts). A person publishes it later, which completes those posts and e-mails their voters.',
    scope: 'changelog:write',
    write: true,
    input: {
      title: z.string().min(1).max(200).describe('The headline'),
      body: z.string().max(50_000).optional().describe('Markdown; raw HTML is shown as text'),
      post_ids: z.array(z.string().min(1).max(64)).max(50).optional().describe('Posts (post_...) this entry ships'),
    },
    async run(ctx, resolved, args) {
      const entry = await createEntry(ctx.db, resolved.workspace.id, resolved.caller, { title: args.title, body: args.body, post_ids: args.post_ids ? [...new Set<string>(args.post_ids)] : [] })
      return { id: entry.id, title: entry.title, published_at: entry.published_at, post_ids: entry.post_ids, url: portalChangelogUrl(ctx.config.baseUrl, resolved.workspace.slug, entry.id) }
    },
  },
]
