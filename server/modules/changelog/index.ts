import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { describeError } from '../../db/errors.ts'
import { readPage } from '../../lib/paging.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { conditionalJson, etagMatches, PUBLIC_CACHE_CONTROL } from '../public/cache.ts'
import { NotModified } from '../public/model.ts'
import { sha256Hex } from '../../lib/secrets.ts'
import { sendChangelogMail } from './mail.ts'
import { ChangelogCreate, ChangelogIdParams, ChangelogListQuery, ChangelogListResponse, ChangelogResponse, ChangelogUpdate, PublicChangelogPage, PublicChangelogParams, PublicChangelogQuery, UnsubscribeQuery } from './model.ts'
import { changelogFeed, publicChangelog } from './public.ts'
import * as changelog from './service.ts'
import { unsubscribePage } from './unsubscribe.ts'

const tags = ['Changelog']
const PUBLISH = 'Setting `published_at` (to now or a past time; the future is 422, there is no scheduling) publishes the entry in the same transaction: every linked post moves to the first status of kind `complete` (raising `status.changed` and `post.updated`; 409 when the workspace has none), `changelog.published` is raised, and each end user who voted on a linked post is e-mailed once, after commit, with an unsubscribe link (RFC 8058 one-click). Re-publishing never mails anyone twice.'

/** Mail goes after commit, outside the request's transaction; the background mailer retries what fails here. */
function kickMail(ctx: AppContext) {
  void sendChangelogMail(ctx).catch((error) => ctx.log.warn('changelog mail', { error: describeError(error) }))
}

export const changelogModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/changelog', ({ workspace, query }) => changelog.listEntries(ctx.db, workspace.id, query.state, readPage(query)), {
      query: ChangelogListQuery,
      workspace: { scope: 'changelog:read' },
      response: { 200: ChangelogListResponse },
      detail: { operationId: 'listChangelogEntries', tags, summary: "The workspace's changelog entries, drafts included, paged", description: 'With an API key (`changelog:read`) or a dashboard session. Drafts first (newest first), then published entries by `published_at`, newest first. `state` keeps only drafts or only published entries.' },
    })
    .post('/changelog', async ({ workspace, caller, body, set }) => {
      const entry = await changelog.createEntry(ctx.db, workspace.id, caller, body)
      if (entry.published_at) kickMail(ctx)
      set.status = 201
      return entry
    }, {
      body: ChangelogCreate,
      workspace: { scope: 'changelog:write' },
      response: { 201: ChangelogResponse },
      detail: { operationId: 'createChangelogEntry', tags, summary: 'Write a changelog entry (a draft unless `published_at` is set)', description: `With an API key (\`changelog:write\`) or a dashboard session. \`post_ids\` must be posts of this workspace (422 otherwise, nothing written). ${PUBLISH}` },
    })
    .get('/changelog/:entry_id', ({ workspace, params }) => changelog.getEntry(ctx.db, workspace.id, params.entry_id), {
      params: ChangelogIdParams,
      workspace: { scope: 'changelog:read' },
      response: { 200: ChangelogResponse },
      detail: { operationId: 'getChangelogEntry', tags, summary: 'A changelog entry', description: 'With an API key (`changelog:read`) or a dashboard session. An entry of another workspace is 404 NOT_FOUND.' },
    })
    .patch('/changelog/:entry_id', async ({ workspace, caller, params, body }) => {
      const entry = await changelog.updateEntry(ctx.db, workspace.id, caller, params.entry_id, body)
      if (entry.published_at) kickMail(ctx)
      return entry
    }, {
      params: ChangelogIdParams,
      body: ChangelogUpdate,
      workspace: { scope: 'changelog:write' },
      response: { 200: ChangelogResponse },
      detail: { operationId: 'updateChangelogEntry', tags, summary: 'Change or publish a changelog entry', description: `With an API key (\`changelog:write\`) or a dashboard session. \`post_ids\` replaces the list. A published entry cannot go back to draft (\`published_at: null\` is 422). ${PUBLISH}` },
    })
    .delete('/changelog/:entry_id', async ({ workspace, params, set }) => {
      await changelog.deleteEntry(ctx.db, workspace.id, params.entry_id)
      set.status = 204
    }, {
      params: ChangelogIdParams,
      workspace: { scope: 'changelog:write' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteChangelogEntry', tags, summary: 'Delete a changelog entry', description: 'With an API key (`changelog:write`) or a dashboard session. The linked posts keep their status; the entry leaves the public changelog and feed.' },
    })

const publicTags = ['Public']
const security: [] = []

export const publicChangelogModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/public' })
    .mapResponse(conditionalJson)
    .get('/:workspace_slug/changelog', ({ params, query }) => publicChangelog(ctx.db, params.workspace_slug, readPage(query)), {
      params: PublicChangelogParams,
      query: PublicChangelogQuery,
      response: { 200: PublicChangelogPage, 304: NotModified },
      detail: { operationId: 'listPublicChangelog', tags: publicTags, security, summary: "A workspace's published changelog, newest first", description: 'Published entries only, newest first, each with its sanitised HTML and the linked posts that are on public boards. Cached publicly for 30 s with a weak `ETag` (`If-None-Match` gives an empty 304).' },
    })
    .get('/:workspace_slug/changelog/feed.atom', async ({ params, request }) => {
      const body = await changelogFeed(ctx.db, params.workspace_slug, ctx.config.baseUrl)
      const etag = `W/"${sha256Hex(body).slice(0, 32)}"`
      const headers = { 'content-type': 'application/atom+xml; charset=utf-8', 'cache-control': PUBLIC_CACHE_CONTROL, etag }
      if (etagMatches(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers })
      return new Response(body, { headers })
    }, {
      params: PublicChangelogParams,
      detail: { operationId: 'getPublicChangelogFeed', tags: publicTags, security, summary: "A workspace's changelog as an Atom 1.0 feed", description: 'The 50 newest published entries (`application/atom+xml`); each entry links to `/portal/{workspace_slug}/changelog#{entry_id}`. Cached publicly for 30 s with a weak `ETag`.', responses: { 200: { description: 'An Atom 1.0 feed', content: { 'application/atom+xml': { schema: { type: 'string' as const }, example: '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">…</feed>' } } }, 304: { description: 'Not modified: If-None-Match matched the current ETag' } } },
    })
    // The link in every changelog e-mail: GET asks to confirm (mail scanners follow links), POST
    // unsubscribes, both from the page's button and as RFC 8058 one-click from the mail client.
    .get('/:workspace_slug/changelog/unsubscribe', ({ params, query }) => unsubscribePage(ctx.db, params.workspace_slug, query.token, false), {
      params: PublicChangelogParams,
      query: UnsubscribeQuery,
      detail: { hide: true },
    })
    .post('/:workspace_slug/changelog/unsubscribe', ({ params, query }) => unsubscribePage(ctx.db, params.workspace_slug, query.token, true), {
      params: PublicChangelogParams,
      query: UnsubscribeQuery,
      parse: 'text',
      detail: { hide: true },
    })
