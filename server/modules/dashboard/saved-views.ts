import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { createView, deleteView, type ViewActor } from '../inbox/saved-views.ts'
import { seeOther, type WorkspaceViewer } from './context.ts'
import { DASHBOARD, wsPath } from './pages.ts'
import { formRoute, dashboardGuards, text, withNotice } from './guard.ts'

// Saved views on the inbox page: "Save view" stores the filters on the page (private, or shared with the
// team), and a view is a link to the inbox with its filters. The service is the one behind
// /api/v1/workspaces/{slug}/views, with its rules (who may delete a shared view).

/** The inbox filters a view keeps (the inbox page's query keys, without paging). */
export const VIEW_KEYS = ['q', 'status', 'board', 'label', 'owner', 'sort', 'unanswered', 'stale_days', 'verified'] as const

export const actorOf = (viewer: WorkspaceViewer): ViewActor => ({ workspaceId: viewer.workspace.id, userId: viewer.session.user.id, role: viewer.member.role })

export const dashboardViews = (ctx: AppContext) => {
  const { inWorkspace } = dashboardGuards(ctx)
  const back = (viewer: WorkspaceViewer, filters: Record<string, string>, notice: string) =>
    seeOther(withNotice(`${wsPath(viewer.workspace.slug)}${Object.keys(filters).length ? `?${new URLSearchParams(filters)}` : ''}`, notice))

  return new Elysia({ name: 'dashboard-views' })
    .use(requestPlugin(ctx))
    .post(`${DASHBOARD}/:workspace_slug/views`, inWorkspace(async (viewer, { body }) => {
      const filters: Record<string, string> = {}
      for (const key of VIEW_KEYS) if (text(body[key])) filters[key] = text(body[key]).slice(0, 200)
      const name = text(body.name).trim()
      if (!name || name.length > 80) return back(viewer, filters, 'Give the view a name (at most 80 characters)')
      try {
        await createView(ctx.db, actorOf(viewer), { name, filters, shared: text(body.shared) === 'yes' })
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 404) throw error
        return back(viewer, filters, `The view was not saved: ${error.issues?.[0]?.msg ?? error.message}`)
      }
      return back(viewer, filters, `View "${name}" saved`)
    }), formRoute)
    .post(`${DASHBOARD}/:workspace_slug/views/:view_id/delete`, inWorkspace(async (viewer, { params }) => {
      await deleteView(ctx.db, actorOf(viewer), params.view_id!)
      return back(viewer, {}, 'View deleted')
    }), formRoute)
}
