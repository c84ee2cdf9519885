import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { AccountDeletedResponse, toUserResponse, UserResponse, UserUpdate } from './model.ts'
import { updateProfile } from './service.ts'
import { clearSessionCookies } from '../auth/cookies.ts'
import { eraseAccount } from '../erasure/service.ts'
import { forbidden } from '../../errors.ts'

const tags = ['User']
const security = [{ cookieAuth: [] }]

export const userModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/user' })
    .use(authPlugin(ctx))
    .get('/profile', ({ user }) => toUserResponse(user, ctx.config.baseUrl), {
      user: true,
      response: { 200: UserResponse },
      detail: { operationId: 'getProfile', tags, security, summary: 'The signed-in user profile', description: 'Dashboard session only (API keys get 403 DASHBOARD_ONLY).' },
    })
    .patch('/profile', async ({ user, body }) => toUserResponse(await updateProfile(ctx.db, user.id, body), ctx.config.baseUrl), {
      user: true,
      body: UserUpdate,
      response: { 200: UserResponse },
      detail: { operationId: 'updateProfile', tags, security, summary: 'Update name or locale', description: 'Dashboard session only. Unknown fields are 422; the e-mail address cannot be changed here.' },
    })
    .delete('/account', async ({ user, caller, cookie }) => {
      if (caller.impersonatorId) throw forbidden('An impersonation session cannot delete the account')
      const { workspaceIds } = await eraseAccount(ctx, user.id)
      clearSessionCookies(cookie, ctx.config)
      return { status: 'deleted' as const, id: user.id, deleted_workspaces: workspaceIds }
    }, {
      user: true,
      response: { 200: AccountDeletedResponse },
      detail: {
        operationId: 'deleteAccount', tags, security, summary: 'Hard-delete the signed-in account',
        description: 'Removes the profile, sessions (the cookies are cleared), OAuth grants, votes (vote counts drop), notification settings and outbox mail, and every workspace the user is the only active member of (listed in `deleted_workspaces`). Posts and comments in other workspaces stay, with the author shown as a deleted user; event payloads there no longer name the user. While the user owns a workspace that other active members share, this is 409 CONFLICT: hand ownership over first (PATCH /workspaces/{slug}/members/{user_id} with `role: owner`). Export first with GET /user/export.',
      },
    })
