import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { html } from '../../lib/html.ts'
import { requireRole as requireApiRole, roleAllows } from '../../plugins/auth.ts'
import type { Role } from '../../db/schema/index.ts'
import { checkCsrf, errorPage, seeOther, viewerOf, workspaceViewer, type Viewer, type WorkspaceViewer } from './context.ts'

// How every dashboard page runs: signed out → the sign-in page (and back); in a workspace → the API's
// membership rule (404 otherwise); every POST → the form's CSRF token; an API error → its page.

export type Form = Record<string, unknown>
export interface PageRequest { params: Record<string, string>; query: Record<string, string | undefined>; body: Form; request: Request }

/** A form field as one string ('' when absent or not text). */
export const text = (value: unknown) => (typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '')
/** A form field that may repeat (checkboxes), as a list of strings. */
export const list = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [])
export const withNotice = (path: string, notice: string) => `${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams({ done: notice })}`
/** The Post/Redirect/Get notice a redirect carried in `?done=`. */
export const noticeOf = (query: Record<string, string | undefined>) => (typeof query.done === 'string' ? query.done.slice(0, 200) : undefined)
/** Dashboard routes are pages, not API operations: kept out of the OpenAPI document. */
export const hidden = { detail: { hide: true } }
export const formRoute = { parse: 'urlencoded' as const, ...hidden }

/** The API's role rule (plugins/auth.ts), for a page's viewer: the same 403 the route answers. */
export const hasRole = (viewer: WorkspaceViewer, role: Role) => roleAllows(viewer.member.role, role)
export const requireRole = (viewer: WorkspaceViewer, role: Role) => requireApiRole(viewer.member.role, role)
/** A form's CSRF field. */
export const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`
/** The first reason of a refusal, in words for the page. */
export const messageOf = (error: ApiError) => error.issues?.[0]?.msg ?? error.message

export function dashboardGuards(ctx: AppContext) {
  const signInRedirect = (request: Request) => seeOther(`/signin?${new URLSearchParams({ return_to: new URL(request.url).pathname })}`)

  /** Runs a page: signed out → the sign-in page (and back); an API error → its page (404 for foreign ids). */
  const signedIn = (run: (viewer: Viewer, request: Request) => Promise<Response>) => async ({ request }: { request: Request }) => {
    const viewer = await viewerOf(ctx, request)
    if (!viewer) return signInRedirect(request)
    try {
      return await run(viewer, request)
    } catch (error) {
      if (error instanceof ApiError) return errorPage(error, viewer.csrf)
      throw error
    }
  }
  const inWorkspace = (run: (viewer: WorkspaceViewer, context: PageRequest) => Promise<Response>) =>
    async (context: { request: Request; params: Record<string, string>; query: Record<string, string | undefined>; body: unknown }) =>
      signedIn(async (viewer, request) => {
        const member = await workspaceViewer(ctx, viewer, context.params.workspace_slug!)
        if (request.method === 'POST') checkCsrf(viewer, (context.body as Form | undefined)?.csrf)
        return run(member, { ...context, body: (context.body ?? {}) as Form })
      })(context)
  return { signedIn, inWorkspace }
}
