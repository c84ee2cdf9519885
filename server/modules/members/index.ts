import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { setSessionCookies } from '../auth/cookies.ts'
import { SessionCookies } from '../auth/model.ts'
import { toUserResponse, UserResponse } from '../user/model.ts'
import { toWorkspaceResponse, WorkspaceResponse, WorkspaceSlugParams } from '../workspaces/model.ts'
import { workspacesOfUser } from '../workspaces/service.ts'
import { AcceptInviteRequest, InviteMemberRequest, MemberParams, MemberResponse, MembersListResponse, toMemberResponse, UpdateMemberRoleRequest } from './model.ts'
import * as service from './service.ts'

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
      detail: { operationId: 'listMembers', tags, summary: 'Members and pending invitations (dashboard only)' },
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
      detail: { operationId: 'inviteMember', tags, summary: 'Invite by e-mail (admin); the link is valid 7 days' },
    })
    .post('/workspaces/:workspace_slug/members/accept', async ({ params, user }) => toMemberResponse(await service.acceptInvitation(ctx.db, params.workspace_slug, user.id)), {
      params: WorkspaceSlugParams,
      user: true,
      response: { 200: MemberResponse },
      detail: { operationId: 'acceptInvitation', tags, summary: "Accept the signed-in user's pending invitation" },
    })
    .patch('/workspaces/:workspace_slug/members/:user_id', async ({ workspace, member, params, body }) => toMemberResponse(await service.changeRole(ctx.db, workspace.id, member!, params.user_id, body.role)), {
      params: MemberParams,
      body: UpdateMemberRoleRequest,
      workspace: { role: 'admin' },
      response: { 200: MemberResponse },
      detail: { operationId: 'updateMemberRole', tags, summary: 'Change a role; `owner` transfers ownership (owner only)' },
    })
    .delete('/workspaces/:workspace_slug/members/:user_id', async ({ workspace, member, params, set }) => {
      await service.removeMember(ctx.db, workspace.id, member!, params.user_id)
      set.status = 204
    }, {
      params: MemberParams,
      workspace: { role: 'member' },
      response: { 204: t.Void() },
      detail: { operationId: 'removeMember', tags, summary: 'Remove a member (admin) or leave (self); the owner cannot be removed' },
    })
    .get('/user/invitations', async ({ user }) => {
      const rows = await workspacesOfUser(ctx.db, user.id, 'pending')
      return rows.map((row) => toWorkspaceResponse(row.workspace, row.role, ctx.config.baseUrl))
    }, {
      user: true,
      response: { 200: t.Array(WorkspaceResponse) },
      detail: { operationId: 'listMyInvitations', tags: ['User'], summary: 'Workspaces with a pending invitation for the signed-in user' },
    })
    .post('/auth/accept-invite', async ({ body, cookie, request }) => {
      const { user, session } = await service.acceptInviteToken(ctx, body.token, body.name, request.headers.get('user-agent'))
      setSessionCookies(cookie, session, ctx.config)
      return toUserResponse(user, ctx.config.baseUrl)
    }, {
      body: AcceptInviteRequest,
      cookie: SessionCookies,
      response: { 200: UserResponse },
      detail: { operationId: 'acceptInvite', tags: ['Auth'], security: [], summary: 'Accept an e-mailed invitation: sets the name, verifies the e-mail, signs in' },
    })
