import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { checkCsrf, errorPage, seeOther, viewerOf, workspaceViewer, type Viewer, type WorkspaceViewer } from './context.ts'

// What every dashboard route file shares: reading form fields, the Post/Redirect/Get notice, and the two
// page runners (signed in; signed in and an active member of the workspace in the path, CSRF checked on POST).

export type Form = Record<string, unknown>
export interface PageContext { params: Record<string, string>; query: Record<string, string | undefined>; body: Form; request: Request }

export const text = (value: unknown) => (typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '')
export const list = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [])
export const withNotice = (path: string, notice: string) => `${path}${path.includes('?') ? '&' : '?'}${new URLSearchParams({ done: notice })}`
export const noticeOf = (query: Record<string, string | undefined>) => (typeof query.done === 'string' ? query.done.slice(0, 200) : undefined)
/** Dashboard routes are pages, not API operations: kept out of the OpenAPI document. */
export const hidden = { detail: { hide: true } }
export const formRoute = { parse: 'urlencoded' as const, ...hidden }

export function pageRunners(ctx: AppContext) {
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
  const inWorkspace = (run: (viewer: WorkspaceViewer, context: PageContext) => Promise<Response>) =>
    async (context: { request: Request; params: Record<string, string>; query: Record<string, string | undefined>; body: unknown }) =>
      signedIn(async (viewer, request) => {
        const member = await workspaceViewer(ctx, viewer, context.params.workspace_slug!)
        if (request.method === 'POST') checkCsrf(viewer, (context.body as Form | undefined)?.csrf)
        return run(member, { ...context, body: (context.body ?? {}) as Form })
      })(context)
  return { signedIn, inWorkspace }
}
