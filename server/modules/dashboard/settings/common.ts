import { Value } from '@sinclair/typebox/value'
import type { TSchema } from 'elysia'
import type { AppContext } from '../../../context.ts'
import type { Role } from '../../../db/schema/index.ts'
import { ApiError, invalid } from '../../../errors.ts'
import { html, type HtmlValue } from '../../../lib/html.ts'
import { dashboardAccess } from '../../../lib/subscription.ts'
import { requireRole, roleAllows } from '../../../plugins/auth.ts'
import { checkCsrf, dashboardHtml, errorPage, seeOther, viewerOf, workspaceViewer, type WorkspaceViewer } from '../context.ts'
import { page, wsPath, type Shell } from '../pages.ts'
import { dashboardScript } from '../script.ts'
import { messageOf } from '../guard.ts'

// What every settings page shares (issue 35; docs/dashboard.md): who may look and act (the API's own
// role rule, `requireRole`), CSRF on every form, the subscription gate on writes, Post/Redirect/Get with
// a notice, and a refused form re-rendered with the error, the field marked and what was typed kept.

export type Form = Record<string, unknown>
export type SettingsSection = 'boards' | 'integrations' | 'branding' | 'data' | 'account'

export const settingsPath = (slug: string, section: SettingsSection) => `${wsPath(slug)}/settings/${section}`
export { csrfField, hidden, list as formList, messageOf, text as formText } from '../guard.ts'

/** What a re-rendered page carries after a refused form. */
export interface Refusal { notice?: string; error?: string; field?: string; typed?: Record<string, string>; status?: number }

export interface RouteContext { params: Record<string, string>; query: Record<string, string | undefined>; body: Form; request: Request }

/** A settings page: heading and content in the dashboard's shell, never cached (`no-store`, as every dashboard page). */
export async function settingsPage(viewer: WorkspaceViewer, title: string, refusal: Refusal, content: HtmlValue, formOrigins: string[] = []) {
  const shell: Shell = { title, slug: viewer.workspace.slug, csrf: viewer.csrf, notice: refusal.notice, error: refusal.error, script: (await dashboardScript()).path }
  return dashboardHtml(page(shell, content), refusal.status ?? 200, formOrigins)
}

/** `aria-invalid` and the error's id on the field a refusal names. */
export const invalidIf = (refusal: Refusal, field: string) => (refusal.field === field ? html` aria-invalid="true" aria-describedby="form-error"` : '')

/** A refusal's message for the page: the first validation issue's words, else the error's. */
const fieldOf = (error: ApiError) => {
  const last = error.issues?.[0]?.loc.at(-1)
  return typeof last === 'string' ? last : undefined
}

/**
 * A form's values checked against the JSON route's own body schema, so the page accepts exactly what the
 * API accepts; the first wrong field is a 422 with `messages[field]` (or a general sentence) for the page.
 */
export function checkedBody<T>(schema: TSchema, input: Record<string, unknown>, messages: Record<string, string>): T {
  const [issue] = Value.Errors(schema, input)
  if (!issue) return input as T
  const field = issue.path.split('/')[1] || Object.keys(messages)[0] || 'form'
  throw invalid(['body', field], messages[field] ?? `Check the field "${field}" and try again.`)
}

const withNotice = (path: string, notice: string) => `${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams({ done: notice })}`

export type Render = (viewer: WorkspaceViewer, refusal: Refusal, context: RouteContext) => Promise<Response>

export const settingsRoutes = (ctx: AppContext) => {
  /** Signed out → sign-in and back; not a member → 404 page; an API refusal → its page. */
  const inWorkspace = (run: (viewer: WorkspaceViewer, context: RouteContext) => Promise<Response>) =>
    async (context: { request: Request; params: Record<string, string>; query: Record<string, string | undefined>; body: unknown }) => {
      const viewer = await viewerOf(ctx, context.request)
      if (!viewer) return seeOther(`/signin?${new URLSearchParams({ return_to: new URL(context.request.url).pathname })}`)
      try {
        const member = await workspaceViewer(ctx, viewer, context.params.workspace_slug!)
        return await run(member, { ...context, body: (context.body ?? {}) as Form })
      } catch (error) {
        if (error instanceof ApiError) return errorPage(error, viewer.csrf)
        throw error
      }
    }

  return {
    /** A page members of at least `role` may see (others get the API's 403 as a page). */
    view: (role: Role, render: Render) => inWorkspace(async (viewer, context) => {
      requireRole(viewer.member.role, role)
      const done = context.query.done
      return render(viewer, { notice: typeof done === 'string' ? done.slice(0, 200) : undefined }, context)
    }),
    /**
     * A form: CSRF, the API's role rule, the subscription gate (unless `gate: false`, as on the API's
     * routes that work on a lapsed subscription), then `act`. Its string is the notice of the redirect
     * back to `section`; a Response is returned as is; an ApiError re-renders the page with `typed`.
     */
    action: (options: { role: Role; section: SettingsSection; render: Render; gate?: boolean; typed?: (body: Form) => Record<string, string> }, act: (viewer: WorkspaceViewer, context: RouteContext) => Promise<string | Response>) =>
      inWorkspace(async (viewer, context) => {
        checkCsrf(viewer, context.body.csrf)
        requireRole(viewer.member.role, options.role)
        if (options.gate !== false && dashboardAccess(viewer.workspace, new Date(), ctx.config.billing) !== 'full') {
          throw new ApiError('SUBSCRIPTION_INACTIVE', 'The subscription has lapsed: the dashboard is read-only until it is renewed')
        }
        try {
          const done = await act(viewer, context)
          if (done instanceof Response) return done
          return seeOther(withNotice(settingsPath(viewer.workspace.slug, options.section), done))
        } catch (error) {
          if (!(error instanceof ApiError) || error.status === 404 || error.status === 403) throw error
          return options.render(viewer, { error: messageOf(error), field: fieldOf(error), typed: options.typed?.(context.body), status: error.status }, context)
        }
      }),
  }
}

export { roleAllows }
