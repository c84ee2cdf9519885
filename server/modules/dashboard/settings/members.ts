import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { ApiError, notFound } from '../../../errors.ts'
import { html } from '../../../lib/html.ts'
import { mailFailureError } from '../../../lib/mail.ts'
import { changeRole, inviteMember, listMembers, removeMember } from '../../members/service.ts'
import { seeOther, type WorkspaceViewer } from '../context.ts'
import { dashboardGuards, requireRole, text, withNotice, type Form } from '../guard.ts'
import { page, wsPath } from '../pages.ts'
import { hidden, isFormError, messageOf, noticeOf, requireConfirmation, settingsPage, settingsPath, urlencoded, type Rendered } from './kit.ts'
import { membersView } from './members-view.ts'

// Members (issue 35, page 1) over the members service, with the API's role rules: any member sees the
// list; admins invite, resend, revoke, change roles and remove; anyone may leave; the owner hands over
// ownership. The e-mailed invitation lands on /accept-invite (docs/dashboard.md; the page is in server/modules/signin).

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/
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
    } catch (thrown) {
      // An invitation's e-mail that did not go out is told in the form, as the API tells it (502/503).
      const error = mailFailureError(thrown) ?? thrown
      if (!isFormError(error)) throw thrown
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
      } catch (thrown) {
        const error = mailFailureError(thrown) ?? thrown
        if (!isFormError(error)) throw thrown
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
}
