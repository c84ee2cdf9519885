import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { toUserResponse, UserResponse, UserUpdate } from './model.ts'
import { updateProfile } from './service.ts'

const tags = ['User']
const security = [{ cookieAuth: [] }]

export const userModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/user' })
    .use(authPlugin(ctx))
    .get('/profile', ({ user }) => toUserResponse(user, ctx.config.baseUrl), {
      user: true,
      response: { 200: UserResponse },
      detail: { operationId: 'getProfile', tags, security, summary: 'The signed-in user profile' },
    })
    .patch('/profile', async ({ user, body }) => toUserResponse(await updateProfile(ctx.db, user.id, body), ctx.config.baseUrl), {
      user: true,
      body: UserUpdate,
      response: { 200: UserResponse },
      detail: { operationId: 'updateProfile', tags, security, summary: 'Update name or locale' },
    })
