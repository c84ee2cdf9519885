import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { setSessionCookies } from '../auth/cookies.ts'
import { SessionCookies } from '../auth/model.ts'
import { toUserResponse, UserResponse } from '../user/model.ts'
import { toWorkspaceResponse, WorkspaceResponse } from '../workspaces/model.ts'
import { workspacesOfUser } from '../workspaces/service.ts'
import { AcceptInviteRequest, InviteMemberRequest, MemberParams, MemberResponse, MembersListResponse, toMemberResponse, UpdateMemberRoleRequest } from './model.ts'
import * as service from './service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['Members']

export const membersModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/workspaces/:workspace_slug/members', async ({ workspace }) => {
      const items = (await service.listMembers(ctx.db, workspace.id)).map(toMemberResponse)
      return { items, total: items.length }
    }, {
      params: WorkspaceSlugParams,
      workspace: { role: 'member' },
      response: { 200: MembersListResponse },
      detail: { operationId: 'listMembers', tags, summary: 'Members and pending invitations (dashboard only)', description: 'Dashboard session of any member (API keys get 403 DASHBOARD_ONLY). Pending invitations have `status: pending`.' },
    })
    .post('/workspaces/:workspace_slug/members', async ({ workspace, member: inviter, body, set }) => {
      const member = await service.inviteMember(ctx, workspace, inviter!.userId, body)
      set.status = 201
      return toMemberResponse(member)
    }, {
      params: WorkspaceSlugParams,
      body: InviteMemberRequest,
      workspace: { role: 'admin' },
      response: { 201: MemberResponse },
      detail: { operationId: 'inviteMember', tags, summary: 'Invite by e-mail (admin); the link is valid 7 days', description: 'Dashboard session of an admin. E-mails an invitation link valid for 7 days; an address that is already an active member is 409 CONFLICT. When the e-mail does not go out, no invitation is left pending (a re-invitation keeps the earlier one), nor the account made for a new address: an address the mail server refuses is 422 `value_error.email_refused` on `body.email`, a refused message 502 UPSTREAM_ERROR, a server that does not answer 503.' },
    })
    .post('/workspaces/:workspace_slug/members/accept', async ({ params, user }) => toMemberResponse(await service.acceptInvitation(ctx.db, params.workspace_slug, user.id)), {
      params: WorkspaceSlugParams,
      user: true,
      response: { 200: MemberResponse },
      detail: { operationId: 'acceptInvitation', tags, summary: "Accept the signed-in user's pending invitation", description: 'Dashboard session of the invited user. Activates the pending membership; without one it is 404 NOT_FOUND.' },
    })
    .patch('/workspaces/:workspace_slug/members/:user_id', async ({ workspace, member, params, body }) => toMemberResponse(await service.changeRole(ctx.db, workspace.id, member!, params.user_id, body.role)), {
      params: MemberParams,
      body: UpdateMemberRoleRequest,
      workspace: { role: 'admin' },
      response: { 200: MemberResponse },
      detail: { operationId: 'updateMemberRole', tags, summary: 'Change a role; `owner` transfers ownership (owner only)', description: 'Dashboard session. Admins change roles between admin and member; only the owner may hand over ownership (`owner`, to an active member; the old owner becomes admin), otherwise 403 OWNER_ONLY.' },
    })
    .delete('/workspaces/:workspace_slug/members/:user_id', async ({ workspace, member, params, set }) => {
      await service.removeMember(ctx.db, workspace.id, member!, params.user_id)
      set.status = 204
    }, {
      params: MemberParams,
      workspace: { role: 'member' },
      response: { 204: t.Void() },
      detail: { operationId: 'removeMember', tags, summary: 'Remove a member (admin) or leave (self); the owner cannot be removed', description: 'Dashboard session. Admins remove members; any member may remove themselves (leave). The owner cannot be removed (409 CONFLICT): hand over ownership first.' },
    })
    .get('/user/invitations', async ({ user }) => {
      const rows = await workspacesOfUser(ctx.db, user.id, 'pending')
      // An invitation is not membership yet: no intake token until it is accepted.
      return rows.map((row) => ({ ...toWorkspaceResponse(row.workspace, row.role, ctx.config.baseUrl), email_intake_token: null }))
    }, {
      user: true,
      response: { 200: t.Array(WorkspaceResponse) },
      detail: { operationId: 'listMyInvitations', tags: ['User'], summary: 'Workspaces with a pending invitation for the signed-in user', description: 'Dashboard session only. The workspaces that invited the signed-in user\'s address and are waiting for POST /workspaces/{slug}/members/accept.' },
    })
    .post('/auth/accept-invite', async ({ body, cookie, request }) => {
      const { user, session } = await service.acceptInviteToken(ctx, body.token, body.name, request.headers.get('user-agent'))
      setSessionCookies(cookie, session, ctx.config)
      return toUserResponse(user, ctx.config.baseUrl)
    }, {
      body: AcceptInviteRequest,
      cookie: SessionCookies,
      response: { 200: UserResponse },
      detail: { operationId: 'acceptInvite', tags: ['Auth'], security: [], summary: 'Accept an e-mailed invitation: sets the name, verifies the e-mail, signs in', description: 'For a user who was invited but has never signed in: the token from the invitation e-mail sets their name, marks the address verified, activates the membership and sets the session cookies. An invalid, expired or used token is 401 UNAUTHENTICATED.' },
    })
