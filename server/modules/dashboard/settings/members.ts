import { eq } from 'drizzle-orm'
import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { workspaces } from '../../../db/schema/index.ts'
import { ApiError, notFound } from '../../../errors.ts'
import { html } from '../../../lib/html.ts'
import { randomToken, timingSafeEqual } from '../../../lib/secrets.ts'
import { setSessionCookies } from '../../auth/cookies.ts'
import { acceptInviteToken, changeRole, inviteMember, listMembers, removeMember } from '../../members/service.ts'
import { dashboardHtml, seeOther, type WorkspaceViewer } from '../context.ts'
import { dashboardGuards, requireRole, text, withNotice, type Form } from '../guard.ts'
import { page, wsPath } from '../pages.ts'
import { csrfInput, hidden, isFormError, messageOf, noticeOf, requireConfirmation, settingsPage, settingsPath, urlencoded, type Rendered } from './kit.ts'
import { membersView } from './members-view.ts'

// Members (issue 35, page 1) over the members service, with the API's role rules: any member sees the
// list; admins invite, resend, revoke, change roles and remove; anyone may leave; the owner hands over
// ownership. The e-mailed invitation lands on /accept-invite (CONTRACT section 19).

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/
const INVITE_CSRF = 'chorus_invite_csrf'
const ROLES = ['member', 'admin'] as const

export const membersSettings = (ctx: AppContext) => {
  const { inWorkspace } = dashboardGuards(ctx)
  const path = (viewer: WorkspaceViewer) => settingsPath(viewer.workspace.slug, 'members')

  async function render(viewer: WorkspaceViewer, rendered: Rendered & { typed?: { email?: string; role?: string } } = {}) {
    const rows = await listMembers(ctx.db, viewer.workspace.id)
    return settingsPage(viewer, 'Members', membersView({
      slug: viewer.workspace.slug, workspaceName: viewer.workspace.name, csrf: viewer.csrf, viewerId: viewer.session.user.id,
      viewerRole: viewer.member.role, members: rows, typed: rendered.typed, invalid: Boolean(rendered.error && rendered.typed),
    }), rendered)
  }

  /** A member form: the service call, then back with a notice; a refusal re-renders the page with the reason. */
  const act = (run: (viewer: WorkspaceViewer, userId: string, body: Form) => Promise<string>) => inWorkspace(async (viewer, { params, body }) => {
    try {
      return seeOther(withNotice(path(viewer), await run(viewer, params.user_id!, body)))
    } catch (error) {
      if (!isFormError(error)) throw error
      return render(viewer, { error: messageOf(error), status: error.status })
    }
  })
  const pendingOf = async (viewer: WorkspaceViewer, userId: string) => {
    const row = (await listMembers(ctx.db, viewer.workspace.id)).find((m) => m.userId === userId && m.status === 'pending')
    if (!row) throw notFound('Invitation')
    return row
  }

  return new Elysia({ name: 'dashboard-settings-members' })
    .get('/dashboard/:workspace_slug/settings/members', inWorkspace(async (viewer, { query }) => render(viewer, { notice: noticeOf(query) })), hidden)
    .post('/dashboard/:workspace_slug/settings/members/invite', inWorkspace(async (viewer, { body }) => {
      const typed = { email: text(body.email).trim(), role: text(body.role) }
      try {
        requireRole(viewer, 'admin')
        if (typed.email.length > 254 || !EMAIL.test(typed.email)) throw new ApiError('VALIDATION_ERROR', 'Enter a valid e-mail address.')
        if (!ROLES.includes(typed.role as never)) throw new ApiError('VALIDATION_ERROR', 'Choose the role: member or admin.')
        await inviteMember(ctx, viewer.workspace, viewer.session.user.id, { email: typed.email, role: typed.role as 'admin' | 'member' })
        return seeOther(withNotice(path(viewer), `Invitation sent to ${typed.email}`))
      } catch (error) {
        if (!isFormError(error)) throw error
        return render(viewer, { error: messageOf(error), status: error.status, typed })
      }
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/members/:user_id/resend', act(async (viewer, userId) => {
      requireRole(viewer, 'admin')
      const row = await pendingOf(viewer, userId)
      await inviteMember(ctx, viewer.workspace, viewer.session.user.id, { email: row.email, role: row.role === 'admin' ? 'admin' : 'member' })
      return `A new invitation link was sent to ${row.email}`
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/members/:user_id/role', act(async (viewer, userId, body) => {
      requireRole(viewer, 'admin')
      const role = text(body.role)
      if (!ROLES.includes(role as never)) throw new ApiError('VALIDATION_ERROR', 'Choose the role: member or admin.')
      const changed = await changeRole(ctx.db, viewer.workspace.id, viewer.member, userId, role as 'admin' | 'member')
      return `${changed.email} is now ${changed.role}`
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/members/:user_id/transfer', act(async (viewer, userId, body) => {
      requireRole(viewer, 'owner')
      requireConfirmation(body, 'hand over ownership')
      const changed = await changeRole(ctx.db, viewer.workspace.id, viewer.member, userId, 'owner')
      return `${changed.email} is now the owner; you are an admin`
    }), urlencoded)
    .post('/dashboard/:workspace_slug/settings/members/:user_id/remove', inWorkspace(async (viewer, { params, body }) => {
      try {
        const target = (await listMembers(ctx.db, viewer.workspace.id)).find((m) => m.userId === params.user_id)
        if (!target) throw notFound('Member')
        requireConfirmation(body, target.status === 'pending' ? `revoke the invitation of ${target.email}` : `remove ${target.email}`)
        await removeMember(ctx.db, viewer.workspace.id, viewer.member, target.userId)
        if (target.userId === viewer.session.user.id) return seeOther(withNotice('/dashboard', `You left ${viewer.workspace.name}`))
        return seeOther(withNotice(path(viewer), target.status === 'pending' ? `Invitation of ${target.email} revoked` : `${target.email} removed`))
      } catch (error) {
        if (!isFormError(error)) throw error
        return render(viewer, { error: messageOf(error), status: error.status })
      }
    }), urlencoded)
    .use(acceptInvitePage(ctx))
}

/** The e-mailed link: the name to show to the team, and an "Accept" button (a link scanner's GET spends nothing). */
function acceptInvitePage(ctx: AppContext) {
  const cookie = (value: string) => `${INVITE_CSRF}=${value}; Path=/accept-invite; HttpOnly; SameSite=Strict; Max-Age=3600${ctx.config.secureCookies ? '; Secure' : ''}`
  const form = async (token: string, slug: string, rendered: Rendered & { name?: string } = {}) => {
    const csrf = randomToken()
    const [workspace] = await ctx.db.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.slug, slug))
    const response = dashboardHtml(page({ title: 'Accept the invitation', csrf, error: rendered.error }, html`<h1>Join ${workspace?.name ?? 'the workspace'} on Chorus</h1>
<form method="post" action="/accept-invite">${csrfInput(csrf)}<input type="hidden" name="token" value="${token}"><input type="hidden" name="workspace" value="${slug}">
<p><label for="accept-name">Your name (the team sees it)</label><input id="accept-name" name="name" required maxlength="100" autocomplete="name" value="${rendered.name ?? ''}"></p>
<p><button class="btn" type="submit">Accept</button></p></form>`), rendered.status ?? 200)
    response.headers.append('set-cookie', cookie(csrf))
    return response
  }
  return new Elysia({ name: 'dashboard-accept-invite' })
    .get('/accept-invite', ({ query }) => form(text(query.token).slice(0, 512), text(query.workspace).slice(0, 64)), hidden)
    .post('/accept-invite', async ({ body, cookie: jar, request, set }) => {
      const fields = (body ?? {}) as Form
      const token = text(fields.token).slice(0, 512)
      const slug = text(fields.workspace).slice(0, 64)
      const name = text(fields.name).trim()
      const expected = jar[INVITE_CSRF]?.value
      if (typeof expected !== 'string' || !expected || text(fields.csrf).length !== expected.length || !timingSafeEqual(text(fields.csrf), expected)) {
        return form(token, slug, { error: 'This form expired. Please try again.', status: 403, name })
      }
      if (!name || name.length > 100) return form(token, slug, { error: 'Enter your name (at most 100 characters).', status: 422, name })
      try {
        const { session } = await acceptInviteToken(ctx, token, name, request.headers.get('user-agent'))
        setSessionCookies(jar as never, session, ctx.config)
        set.status = 303
        set.headers.location = withNotice(wsPath(slug), 'Welcome! You joined the workspace')
        set.headers['cache-control'] = 'no-store'
        return ''
      } catch (error) {
        if (!(error instanceof ApiError) || (error.code !== 'UNAUTHENTICATED' && error.status !== 404)) throw error
        return form(token, slug, { error: 'This invitation link is invalid, expired or already used. Ask an admin to resend it.', status: 401, name })
      }
    }, urlencoded)
}

