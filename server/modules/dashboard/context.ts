import { asc, eq, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { rowsOf } from '../../db/client.ts'
import { boards, labels, members, statusChanges, statuses, users } from '../../db/schema/index.ts'
import { ApiError, notFound } from '../../errors.ts'
import { htmlResponse } from '../../lib/http-headers.ts'
import { html, type SafeHtml } from '../../lib/html.ts'
import { sha256Hex, timingSafeEqual } from '../../lib/secrets.ts'
import { accessCookie, sharedCredentialResolvers, type Member, type SessionCaller, type Workspace } from '../../plugins/credentials.ts'
import { page } from './pages.ts'
import { stepsProbe, type StepsDone } from './settings/checklist.ts'

// Who is looking at a dashboard page, and the answers every page shares. The session is the API's own
// (the access_token cookie) and the membership rule is the API's own (credentials.membership): a
// workspace the user is not an active member of is a 404 page, exactly as the API answers 404. The
// resolvers are the app's one set (sharedCredentialResolvers), so a page's membership is answered from the
// same per-process cache as the API's, dropped on every process when a membership or workspace changes.

export interface Viewer { session: SessionCaller; csrf: string }
export interface WorkspaceViewer extends Viewer { workspace: Workspace; member: Member }

/** The form token: bound to the session (its id never leaves the HttpOnly cookie), checked on every POST. */
export const csrfOf = (session: SessionCaller) => sha256Hex(`chorus-dashboard-csrf:${session.sessionId}`)

export async function viewerOf(ctx: AppContext, request: Request): Promise<Viewer | null> {
  const session = await sharedCredentialResolvers(ctx).session(accessCookie(request))
  return session ? { session, csrf: csrfOf(session) } : null
}

export async function workspaceViewer(ctx: AppContext, viewer: Viewer, slug: string): Promise<WorkspaceViewer> {
  const row = await sharedCredentialResolvers(ctx).membership(slug, viewer.session.user.id)
  if (!row || row.member?.status !== 'active') throw notFound('Workspace')
  return { ...viewer, workspace: row.workspace, member: row.member }
}

export function checkCsrf(viewer: Viewer, field: unknown) {
  if (typeof field !== 'string' || field.length !== viewer.csrf.length || !timingSafeEqual(field, viewer.csrf)) {
    throw new ApiError('CSRF_REJECTED', 'This form expired or came from another site. Reload the page and try again.')
  }
}

/** Every dashboard page: CSP without inline script or style (our own stylesheet and script only), never stored. */
export const dashboardHtml = (body: SafeHtml, status = 200, forms: string[] = []) =>
  htmlResponse(body.value, { scripts: ["'self'"], forms }, { status, headers: { 'cache-control': 'no-store', vary: 'Cookie' } })

export const seeOther = (location: string) => new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } })

/** An API error as a page: 404 for what is not there or not the member's, the error's own status otherwise. */
export function errorPage(error: ApiError, csrf = '') {
  const title = error.status === 404 ? 'Not found' : 'Something went wrong'
  return dashboardHtml(page({ title, csrf }, html`<h1>${title}</h1><p>${error.issues?.[0]?.msg ?? error.message}</p><p><a href="/dashboard">Back to your workspaces</a></p>`), error.status)
}

/**
 * The names the pages offer in their selects: statuses in workflow order, labels, boards, active members,
 * in one statement; with `steps`, the onboarding checklist's probes (settings/checklist.ts) in it too.
 */
export async function workspaceChoices(ctx: AppContext, workspaceId: string, options: { steps?: boolean } = {}) {
  const [row] = rowsOf<{ statuses: string[] | null; labels: string[] | null; boards: string[] | null; members: { id: string; name: string }[] | null; steps: StepsDone | null }>(await ctx.db.execute(sql`select
    (select array_agg(${statuses.name} order by ${statuses.position}) from ${statuses} where ${statuses.workspaceId} = ${workspaceId}) as statuses,
    (select array_agg(${labels.slug} order by ${labels.slug}) from ${labels} where ${labels.workspaceId} = ${workspaceId}) as labels,
    (select array_agg(${boards.slug} order by ${boards.slug}) from ${boards} where ${boards.workspaceId} = ${workspaceId}) as boards,
    (select json_agg(json_build_object('id', ${users.id}, 'name', coalesce(nullif(${users.name}, ''), ${users.email})) order by ${users.email})
       from ${members} join ${users} on ${users.id} = ${members.userId}
       where ${members.workspaceId} = ${workspaceId} and ${members.status} = 'active') as members,
    ${options.steps ? stepsProbe(workspaceId) : sql`null`} as steps`))
  return { statuses: row?.statuses ?? [], labels: row?.labels ?? [], boards: row?.boards ?? [], members: row?.members ?? [], steps: row?.steps ?? undefined }
}

export async function statusHistory(ctx: AppContext, postId: string) {
  const rows = await ctx.db.select({ to: statuses.name, from: statusChanges.fromStatusId, at: statusChanges.createdAt })
    .from(statusChanges).innerJoin(statuses, eq(statuses.id, statusChanges.toStatusId))
    .where(eq(statusChanges.postId, postId)).orderBy(asc(statusChanges.createdAt))
  return rows.map((row, i) => ({ from: i > 0 ? rows[i - 1]!.to : null, to: row.to, at: row.at.toISOString() }))
}
