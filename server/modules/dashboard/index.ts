import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { createComment, listComments } from '../comments/service.ts'
import { bulkChange } from '../inbox/bulk.ts'
import { listInbox } from '../inbox/queries.ts'
import { setReadState } from '../inbox/read-state.ts'
import { listViews } from '../inbox/saved-views.ts'
import { getPost } from '../posts/queries.ts'
import { deletePost, mergePost, updatePost } from '../posts/service.ts'
import { listVotes } from '../votes/service.ts'
import { acceptInvitation } from '../members/service.ts'
import { createWorkspace, workspacesOfUser } from '../workspaces/service.ts'
import { checkCsrf, dashboardHtml, seeOther, statusHistory, workspaceChoices, type Viewer, type WorkspaceViewer } from './context.ts'
import { dashboardGuards, formRoute, hidden, list, noticeOf, text, withNotice, type Form } from './guard.ts'
import { dashboardScript, serveScript } from './script.ts'
import { dashboardChangelog } from './changelog.ts'
import { dashboardModeration } from './moderation.ts'
import { actorOf, dashboardViews, VIEW_KEYS } from './saved-views.ts'
import { DASHBOARD, inboxPage, pickerPage, postPage, postPath, wsPath } from './pages.ts'
import { teamSettingsPages } from './settings/index.ts'
import { onboardingChecklist } from './settings/checklist.ts'

// The team's dashboard (issue 33; docs/dashboard.md): server-rendered pages over the same services as
// the public API. Reads render; every form POSTs, goes through the service, and redirects back with a
// notice (Post/Redirect/Get), or re-renders the page with the error and what was typed.

export const dashboardModule = (ctx: AppContext) => {
  const { signedIn, inWorkspace } = dashboardGuards(ctx)
  const notice = noticeOf

  /** The workspaces page: the member's workspaces, pending invitations to accept, and the create form. */
  async function picker(viewer: Viewer, extra: { notice?: string; error?: string; typed?: { name: string; slug: string }; status?: number }) {
    const [active, pending] = await Promise.all([workspacesOfUser(ctx.db, viewer.session.user.id), workspacesOfUser(ctx.db, viewer.session.user.id, 'pending')])
    const rows = (list: typeof active) => list.map((row) => ({ slug: row.workspace.slug, name: row.workspace.name, role: row.role }))
    return dashboardHtml(pickerPage({ title: 'Workspaces', csrf: viewer.csrf, notice: extra.notice, error: extra.error }, rows(active), extra.typed, rows(pending)), extra.status)
  }

  async function renderPost(viewer: WorkspaceViewer, postId: string, extra: { notice?: string; error?: string; typed?: Record<string, string>; field?: string; status?: number } = {}) {
    const workspaceId = viewer.workspace.id
    const post = await getPost(ctx.db, workspaceId, postId)
    const [choices, history, comments, votes] = await Promise.all([
      workspaceChoices(ctx, workspaceId),
      statusHistory(ctx, postId),
      listComments(ctx.db, workspaceId, postId, { page: 1, perPage: 100, offset: 0 }, { internal: true }),
      listVotes(ctx.db, workspaceId, postId, { page: 1, perPage: 100, offset: 0 }),
    ])
    const shell = { title: post.title, slug: viewer.workspace.slug, csrf: viewer.csrf, notice: extra.notice, error: extra.error, script: (await dashboardScript()).path }
    return dashboardHtml(postPage(shell, {
      post, ...choices, history, typed: extra.typed, field: extra.field,
      comments: comments.items.map((c) => ({ author: c.author.name, body: c.body, internal: c.internal, at: c.created_at })),
      voters: votes.items.map((v) => ({ name: v.voter.name ?? v.voter.email ?? 'Someone', verified: v.verified })),
    }), extra.status ?? 200)
  }

  /** A post form: the service call, then back to the post with a notice; a refusal re-renders with what was typed. */
  const postAction = (name: string, act: (viewer: WorkspaceViewer, postId: string, body: Form) => Promise<string | Response>, typedField?: string) =>
    inWorkspace(async (viewer, { params, body }) => {
      const postId = params.post_id!
      try {
        const done = await act(viewer, postId, body)
        if (done instanceof Response) return done
        return seeOther(withNotice(postPath(viewer.workspace.slug, postId), done))
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 404 || error.code === 'CSRF_REJECTED') throw error
        const typed: Record<string, string> = typedField ? { [typedField]: text(body[typedField === 'reply' || typedField === 'note' ? 'body' : typedField]) } : {}
        if (name === 'edit') Object.assign(typed, { title: text(body.title), body: text(body.body), updated_at: text(body.updated_at) })
        const field = name === 'edit' ? String(error.issues?.[0]?.loc.at(-1) ?? 'title') : typedField
        return renderPost(viewer, postId, { error: error.issues?.[0]?.msg ?? error.message, typed, field, status: error.status })
      }
    })

  return new Elysia({ name: 'dashboard' })
    .use(requestPlugin(ctx))
    .get(`${DASHBOARD}/_/dashboard.js`, ({ request }) => serveScript(request), hidden)
    .use(teamSettingsPages(ctx))
    .get(DASHBOARD, signedIn(async (viewer, request) => picker(viewer, { notice: new URL(request.url).searchParams.get('done')?.slice(0, 200) })), hidden)
    .post(`${DASHBOARD}/invitations/:workspace_slug/accept`, async ({ request, body, params }) => signedIn(async (viewer) => {
      checkCsrf(viewer, (body as Form | undefined)?.csrf)
      await acceptInvitation(ctx.db, params.workspace_slug, viewer.session.user.id)
      return seeOther(withNotice(wsPath(params.workspace_slug), 'Welcome to the workspace'))
    })({ request }), formRoute)
    .post(`${DASHBOARD}/workspaces`, async ({ request, body }) => signedIn(async (viewer) => {
      const form = (body ?? {}) as Form
      checkCsrf(viewer, form.csrf)
      const typed = { name: text(form.name).trim(), slug: text(form.slug).trim() }
      try {
        if (!typed.name || typed.name.length > 80) throw new ApiError('VALIDATION_ERROR', 'Give the workspace a name (at most 80 characters).')
        if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(typed.slug) || typed.slug.length < 2 || typed.slug.length > 48) throw new ApiError('VALIDATION_ERROR', 'The address is 2 to 48 lowercase letters, digits and single hyphens.')
        const workspace = await createWorkspace(ctx.db, viewer.session.user.id, typed)
        return seeOther(withNotice(wsPath(workspace.slug), 'Workspace created'))
      } catch (error) {
        if (!(error instanceof ApiError)) throw error
        return picker(viewer, { error: error.message, typed, status: error.status })
      }
    })({ request }), formRoute)
    .get(`${DASHBOARD}/:workspace_slug`, inWorkspace(async (viewer, { query }) => {
      const filters: Record<string, string> = {}
      for (const key of VIEW_KEYS) if (typeof query[key] === 'string' && query[key] !== '') filters[key] = query[key]!.slice(0, 200)
      const pageNumber = Math.min(Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1), 1000)
      const staleDays = filters.stale_days ? Number.parseInt(filters.stale_days, 10) : undefined
      // The list and what the page shows around it are independent reads: side by side on the pool.
      const [listed, choices, views] = await Promise.all([
        listInbox(ctx.db, { workspaceId: viewer.workspace.id, userId: viewer.session.user.id }, {
          ...filters, sort: filters.sort as never, stale_days: staleDays && staleDays > 0 ? staleDays : undefined,
          unanswered: filters.unanswered === undefined ? undefined : filters.unanswered === 'true', verified: filters.verified === undefined ? undefined : filters.verified === 'true',
        }, { page: pageNumber, perPage: 50, offset: (pageNumber - 1) * 50 }),
        workspaceChoices(ctx, viewer.workspace.id, { steps: true }), listViews(ctx.db, actorOf(viewer)),
      ])
      const { steps, ...lists } = choices
      const checklist = onboardingChecklist(viewer, steps!)
      const shell = { title: 'Inbox', slug: viewer.workspace.slug, csrf: viewer.csrf, notice: notice(query), script: (await dashboardScript()).path }
      return dashboardHtml(inboxPage(shell, { items: listed.items, total: listed.total, page: listed.page, totalPages: listed.total_pages, query: filters, ...lists, views: views.items.map((view) => ({ ...view, mine: view.owner_user_id === viewer.session.user.id, mayDelete: view.owner_user_id === viewer.session.user.id || viewer.member.role !== 'member' })), checklist }))
    }), hidden)
    .post(`${DASHBOARD}/:workspace_slug/bulk`, inWorkspace(async (viewer, { body }) => {
      const postIds = list(body.post_ids)
      if (postIds.length === 0) return seeOther(withNotice(wsPath(viewer.workspace.slug), 'Select posts first'))
      const owner = text(body.owner_user_id)
      const result = await bulkChange(ctx.db, viewer.workspace.id, viewer.session, {
        post_ids: postIds.slice(0, 500),
        ...(text(body.status) && { status: text(body.status) }),
        ...(text(body.status) && text(body.status_message).trim() && { status_message: text(body.status_message).trim() }),
        ...(text(body.add_label) && { add_labels: [text(body.add_label)] }),
        ...(owner && { owner_user_id: owner === 'none' ? null : owner }),
      })
      return seeOther(withNotice(wsPath(viewer.workspace.slug), `${result.results.length} posts changed`))
    }), formRoute)
    .get(`${DASHBOARD}/:workspace_slug/posts/:post_id`, inWorkspace(async (viewer, { params, query }) => {
      const response = await renderPost(viewer, params.post_id!, { notice: notice(query) })
      // Opening a post marks it read for this member (the read state of GET …/inbox).
      await setReadState(ctx.db, viewer.workspace.id, viewer.session.user.id, [params.post_id!], true)
      return response
    }), hidden)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/edit`, postAction('edit', async (viewer, postId, body) => {
      // Stale-edit check: the form carries the updated_at it was rendered with; a later change wins and is reported.
      const current = await getPost(ctx.db, viewer.workspace.id, postId)
      if (text(body.updated_at) !== current.updated_at) throw new ApiError('CONFLICT', 'Someone else changed this post after you opened it. Your text is kept below; compare it with the current version and save again.')
      await updatePost(ctx.db, viewer.workspace.id, viewer.session, postId, { title: text(body.title), body: text(body.body) })
      return 'Saved'
    }), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/status`, postAction('status', async (viewer, postId, body) => {
      const message = text(body.status_message).trim()
      await updatePost(ctx.db, viewer.workspace.id, viewer.session, postId, { status: text(body.status), ...(message && { status_message: message }) })
      return message ? 'Status changed; voters will hear about it' : 'Status changed'
    }, 'status_message'), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/assign`, postAction('assign', async (viewer, postId, body) => {
      const owner = text(body.owner_user_id)
      await updatePost(ctx.db, viewer.workspace.id, viewer.session, postId, { owner_user_id: owner === 'none' || owner === '' ? null : owner })
      return 'Owner set'
    }), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/labels`, postAction('labels', async (viewer, postId, body) => {
      await updatePost(ctx.db, viewer.workspace.id, viewer.session, postId, { labels: list(body.labels) })
      return 'Labels saved'
    }), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/move`, postAction('move', async (viewer, postId, body) => {
      await updatePost(ctx.db, viewer.workspace.id, viewer.session, postId, { board: text(body.board) })
      return 'Moved'
    }), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/merge`, postAction('merge', async (viewer, postId, body) => {
      const into = text(body.into).trim()
      let target = into
      if (!/^post_[0-9a-z]+$/.test(into)) {
        // Search: one other match is the target; several are listed for the member to pick by id.
        if (!into) throw new ApiError('VALIDATION_ERROR', 'Name the post to merge into: its id, or words of its title.')
        const found = (await listInbox(ctx.db, { workspaceId: viewer.workspace.id, userId: null }, { q: into }, { page: 1, perPage: 6, offset: 0 })).items.filter((post) => post.id !== postId)
        if (found.length !== 1) throw new ApiError('VALIDATION_ERROR', found.length === 0 ? `No other post matches "${into}".` : `${found.length} posts match; enter the id of one: ${found.map((post) => `${post.title} (${post.id})`).join('; ')}.`)
        target = found[0]!.id
      }
      await mergePost(ctx.db, viewer.workspace.id, postId, target)
      return 'Merged'
    }, 'into'), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/reply`, postAction('reply', async (viewer, postId, body) => {
      await createComment(ctx.db, viewer.workspace.id, viewer.session, postId, { body: text(body.body) })
      return 'Reply posted'
    }, 'reply'), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/note`, postAction('note', async (viewer, postId, body) => {
      await createComment(ctx.db, viewer.workspace.id, viewer.session, postId, { body: text(body.body), internal: true })
      return 'Internal note added'
    }, 'note'), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/posts/:post_id/delete`, postAction('delete', async (viewer, postId, body) => {
      if (text(body.confirm) !== 'yes') throw new ApiError('VALIDATION_ERROR', 'Tick the box to confirm the deletion.')
      await deletePost(ctx.db, viewer.workspace.id, postId)
      return seeOther(withNotice(wsPath(viewer.workspace.slug), 'Post deleted'))
    }), formRoute)
    .use(dashboardChangelog(ctx))
    .use(dashboardModeration(ctx))
    .use(dashboardViews(ctx))
}
