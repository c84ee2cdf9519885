import { Elysia, type AnyElysia } from 'elysia'
import type { Config } from './config.ts'
import { createContext, type AppContext, type ContextOverrides } from './context.ts'
import type { Database } from './db/client.ts'
import { apiKeysModule } from './modules/api-keys/index.ts'
import { authModule } from './modules/auth/index.ts'
import { commentsModule } from './modules/comments/index.ts'
import { billingModule } from './modules/billing/index.ts'
import { boardsModule } from './modules/boards/index.ts'
import { docsModule } from './modules/docs/index.ts'
import { identifyModule } from './modules/end-users/index.ts'
import { publicWritesModule } from './modules/end-users/writes.ts'
import { healthModule } from './modules/health/index.ts'
import { jwtConfigModule } from './modules/jwt-config/index.ts'
import { labelsModule } from './modules/labels/index.ts'
import { membersModule } from './modules/members/index.ts'
import { notificationsModule } from './modules/notifications/index.ts'
import { postsModule } from './modules/posts/index.ts'
import { publicModule } from './modules/public/index.ts'
import { statusesModule } from './modules/statuses/index.ts'
import { sendingDomainModule } from './modules/sending-domain/index.ts'
import { superadminModule } from './modules/superadmin/index.ts'
import { userModule } from './modules/user/index.ts'
import { viewsModule } from './modules/views/index.ts'
import { votesModule } from './modules/votes/index.ts'
import { widgetModule } from './modules/widget/index.ts'
import { webhooksModule } from './modules/webhooks/index.ts'
import { workspacesModule } from './modules/workspaces/index.ts'
import { publicCors } from './plugins/cors.ts'
import { errorHandler } from './plugins/errors.ts'
import { requestPlugin, UPLOAD_BODY_LIMIT } from './plugins/request.ts'

/** The one route table, mounted twice: at `/api/v1` and at `/api` (CONTRACT §1). */
function apiRoutes(ctx: AppContext, prefix: string) {
  return new Elysia({ prefix })
    .use(healthModule(ctx))
    .use(authModule(ctx))
    .use(userModule(ctx))
    .use(workspacesModule(ctx))
    .use(membersModule(ctx))
    .use(apiKeysModule(ctx))
    .use(boardsModule(ctx))
    .use(statusesModule(ctx))
    .use(labelsModule(ctx))
    .use(superadminModule(ctx))
    .use(billingModule(ctx))
    .use(postsModule(ctx))
    .use(commentsModule(ctx))
    .use(votesModule(ctx))
    .use(viewsModule(ctx))
    .use(publicModule(ctx))
    .use(jwtConfigModule(ctx))
    .use(identifyModule(ctx))
    .use(publicWritesModule(ctx))
    .use(webhooksModule(ctx))
    .use(notificationsModule(ctx))
    .use(sendingDomainModule(ctx))
}

export interface CreateAppOptions {
  config: Config
  database: Database
  overrides?: ContextOverrides
}

export async function createApp({ config, database, overrides }: CreateAppOptions) {
  const ctx = await createContext(config, database, overrides)
  let self: AnyElysia | undefined
  const app = new Elysia({ normalize: false, serve: { maxRequestBodySize: UPLOAD_BODY_LIMIT } })
    // Errors first, so every module's failures render in the CONTRACT shape.
    .use(errorHandler(ctx))
    // Before the request plugin, so even its early rejections (413, CSRF) carry CORS headers on public routes.
    .use(publicCors())
    .use(requestPlugin(ctx))
    .use(apiRoutes(ctx, '/api/v1'))
    .use(apiRoutes(ctx, '/api'))
    .use(docsModule(() => self!))
    .use(widgetModule(ctx))
  self = app
  return { app, ctx }
}

export type App = Awaited<ReturnType<typeof createApp>>['app']
