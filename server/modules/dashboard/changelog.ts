import { Elysia } from 'elysia'
import { and, eq, inArray } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { posts } from '../../db/schema/index.ts'
import { ApiError } from '../../errors.ts'
import { renderMarkdown } from '../../lib/markdown.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { createEntry, getEntry, listEntries, updateEntry } from '../changelog/service.ts'
import { findPosts } from '../posts/queries.ts'
import { changelogPage, changelogPath, entryPage, type EntryForm } from './changelog-page.ts'
import { dashboardHtml, seeOther, type WorkspaceViewer } from './context.ts'
import { DASHBOARD } from './pages.ts'
import { formRoute, hidden, noticeOf, dashboardGuards, text, withNotice, type Form } from './guard.ts'
import { dashboardScript } from './script.ts'

// The changelog pages (issue 33 §5): drafts, Markdown preview, linked posts, publish, unpublish, the
// public page link. Every write is the changelog service behind /api/v1/changelog; "Preview" renders
// what was typed with the service's Markdown renderer and changes nothing.

const typedOf = (body: Form): EntryForm => ({ title: text(body.title), body: text(body.body), post_ids: text(body.post_ids) })
const postIdsOf = (typed: EntryForm) => typed.post_ids.split(/[\s,]+/).filter(Boolean).slice(0, 100)
const fieldOf = (error: ApiError) => String(error.issues?.[0]?.loc.at(-1) ?? 'title')
const errorText = (error: ApiError) => error.issues?.[0]?.msg ?? error.message

export const dashboardChangelog = (ctx: AppContext) => {
  const { inWorkspace } = dashboardGuards(ctx)
  const shellOf = async (viewer: WorkspaceViewer, title: string, extra: { notice?: string; error?: string } = {}) =>
    ({ title, slug: viewer.workspace.slug, csrf: viewer.csrf, script: (await dashboardScript()).path, ...extra })

  async function listPage(viewer: WorkspaceViewer, extra: { notice?: string; error?: string; typed?: EntryForm; preview?: string; field?: string; status?: number } = {}) {
    const entries = await listEntries(ctx.db, viewer.workspace.id, undefined, { page: 1, perPage: 100, offset: 0 })
    return dashboardHtml(changelogPage(await shellOf(viewer, 'Changelog', extra), entries.items, extra.typed, extra.preview, extra.field), extra.status)
  }

  async function oneEntry(viewer: WorkspaceViewer, entryId: string, extra: { notice?: string; error?: string; typed?: EntryForm; preview?: string; field?: string; status?: number } = {}) {
    const entry = await getEntry(ctx.db, viewer.workspace.id, entryId)
    const linked = entry.post_ids.length
      ? await findPosts(ctx.db, and(eq(posts.workspaceId, viewer.workspace.id), inArray(posts.id, entry.post_ids)), [], entry.post_ids.length)
      : []
    return dashboardHtml(entryPage(await shellOf(viewer, entry.title, extra), entry, linked, extra.typed, extra.preview, extra.field), extra.status)
  }

  return new Elysia({ name: 'dashboard-changelog' })
    .use(requestPlugin(ctx))
    .get(`${DASHBOARD}/:workspace_slug/changelog`, inWorkspace(async (viewer, { query }) => listPage(viewer, { notice: noticeOf(query) })), hidden)
    .post(`${DASHBOARD}/:workspace_slug/changelog`, inWorkspace(async (viewer, { body }) => {
      const typed = typedOf(body)
      if (text(body.intent) === 'preview') return listPage(viewer, { typed, preview: renderMarkdown(typed.body) })
      try {
        const entry = await createEntry(ctx.db, viewer.workspace.id, viewer.session, { title: typed.title, body: typed.body, post_ids: postIdsOf(typed) })
        return seeOther(withNotice(changelogPath(viewer.workspace.slug, entry.id), 'Draft saved'))
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 404) throw error
        return listPage(viewer, { error: errorText(error), typed, field: fieldOf(error), status: error.status })
      }
    }), formRoute)
    .get(`${DASHBOARD}/:workspace_slug/changelog/:entry_id`, inWorkspace(async (viewer, { params, query }) => oneEntry(viewer, params.entry_id!, { notice: noticeOf(query) })), hidden)
    .post(`${DASHBOARD}/:workspace_slug/changelog/:entry_id`, inWorkspace(async (viewer, { params, body }) => {
      const typed = typedOf(body)
      if (text(body.intent) === 'preview') return oneEntry(viewer, params.entry_id!, { typed, preview: renderMarkdown(typed.body) })
      try {
        await updateEntry(ctx.db, viewer.workspace.id, viewer.session, params.entry_id!, { title: typed.title, body: typed.body, post_ids: postIdsOf(typed) })
        return seeOther(withNotice(changelogPath(viewer.workspace.slug, params.entry_id!), 'Saved'))
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 404) throw error
        return oneEntry(viewer, params.entry_id!, { error: errorText(error), typed, field: fieldOf(error), status: error.status })
      }
    }), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/changelog/:entry_id/publish`, inWorkspace(async (viewer, { params }) => {
      try {
        await updateEntry(ctx.db, viewer.workspace.id, viewer.session, params.entry_id!, { published_at: new Date().toISOString() })
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 404) throw error
        return oneEntry(viewer, params.entry_id!, { error: errorText(error), status: error.status })
      }
      return seeOther(withNotice(changelogPath(viewer.workspace.slug, params.entry_id!), 'Published; voters of the linked posts will hear about it'))
    }), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/changelog/:entry_id/unpublish`, inWorkspace(async (viewer, { params }) => {
      await updateEntry(ctx.db, viewer.workspace.id, viewer.session, params.entry_id!, { published_at: null })
      return seeOther(withNotice(changelogPath(viewer.workspace.slug, params.entry_id!), 'Unpublished: a draft again'))
    }), formRoute)
}
