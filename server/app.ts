import { Elysia, type AnyElysia } from 'elysia'
import type { Config } from './config.ts'
import { createContext, type AppContext, type ContextOverrides } from './context.ts'
import type { Database } from './db/client.ts'
import { registerStringFormats } from './lib/schema.ts'
import { apiKeysModule } from './modules/api-keys/index.ts'
import { authModule } from './modules/auth/index.ts'
import { changelogModule, publicChangelogModule } from './modules/changelog/index.ts'
import { commentsModule } from './modules/comments/index.ts'
import { companiesModule } from './modules/companies/index.ts'
import { scoringModule } from './modules/scoring/index.ts'
import { billingModule } from './modules/billing/index.ts'
import { boardsModule } from './modules/boards/index.ts'
import { contactModule } from './modules/contact/index.ts'
import { docsModule } from './modules/docs/index.ts'
import { fileServingModule, uploadsModule } from './modules/files/index.ts'
import { idpModule } from './modules/idp/index.ts'
import { identifyModule } from './modules/end-users/index.ts'
import { endUserRecordsModule } from './modules/end-users/records.ts'
import { inboundEmailModule } from './modules/inbound-email/index.ts'
import { exportsModule } from './modules/exports/index.ts'
import { importsModule } from './modules/imports/index.ts'
import { integrationsModule } from './modules/integrations/index.ts'
import { trackerModule } from './modules/integrations/tracker-routes.ts'
import { publicWritesModule } from './modules/end-users/writes.ts'
import { healthModule } from './modules/health/index.ts'
import { jwtConfigModule } from './modules/jwt-config/index.ts'
import { labelsModule } from './modules/labels/index.ts'
import { mcpModule } from './modules/mcp/index.ts'
import { signInModule } from './modules/signin/index.ts'
import { membersModule } from './modules/members/index.ts'
import { notificationsModule } from './modules/notifications/index.ts'
import { postSubscriptionsModule } from './modules/post-subscriptions/index.ts'
import { oauthApiModule } from './modules/oauth/api.ts'
import { oauthServerModule } from './modules/oauth/index.ts'
import { portalModule } from './modules/portal/index.ts'
import { postsModule } from './modules/posts/index.ts'
import { duplicatesModule } from './modules/duplicates/index.ts'
import { moderationModule } from './modules/moderation/index.ts'
import { publicModule } from './modules/public/index.ts'
import { statusesModule } from './modules/statuses/index.ts'
import { sendingDomainModule } from './modules/sending-domain/index.ts'
import { superadminModule } from './modules/superadmin/index.ts'
import { userModule } from './modules/user/index.ts'
import { viewsModule } from './modules/views/index.ts'
import { inboxModule } from './modules/inbox/index.ts'
import { dashboardModule } from './modules/dashboard/index.ts'
import { settingsModule } from './modules/dashboard/settings/index.ts'
import { votesModule } from './modules/votes/index.ts'
import { visitorsModule } from './modules/visitors/index.ts'
import { widgetModule } from './modules/widget/index.ts'
import { webhooksModule } from './modules/webhooks/index.ts'
import { workspacesModule } from './modules/workspaces/index.ts'
import { publicCors } from './plugins/cors.ts'
import { errorHandler } from './plugins/errors.ts'
import { BODY_BACKSTOP, bindRouteTable, requestPlugin, unversionedPaths } from './plugins/request.ts'

/**
 * The one route table, mounted at `/api/v1`; `unversionedPaths` serves it at `/api` too
 * (docs/api.md#addresses). Typed as AnyElysia: nothing consumes the route types (no Eden client), and
 * inferring them across every module exceeds TypeScript's instantiation depth.
 */
function apiRoutes(ctx: AppContext): AnyElysia {
  return new Elysia({ prefix: '/api/v1' })
    .use(healthModule(ctx))
    .use(authModule(ctx))
    .use(idpModule(ctx))
    .use(userModule(ctx))
    .use(workspacesModule(ctx))
    .use(membersModule(ctx))
    .use(apiKeysModule(ctx))
    .use(boardsModule(ctx))
    .use(statusesModule(ctx))
    .use(labelsModule(ctx))
    .use(companiesModule(ctx))
    .use(scoringModule(ctx))
    .use(superadminModule(ctx))
    .use(billingModule(ctx))
    .use(postsModule(ctx))
    .use(duplicatesModule(ctx))
    .use(moderationModule(ctx))
    .use(commentsModule(ctx))
    .use(votesModule(ctx))
    .use(viewsModule(ctx))
    .use(inboxModule(ctx))
    .use(publicModule(ctx))
    .use(publicChangelogModule(ctx))
    .use(changelogModule(ctx))
    .use(jwtConfigModule(ctx))
    .use(identifyModule(ctx))
    .use(endUserRecordsModule(ctx))
    .use(publicWritesModule(ctx))
    .use(visitorsModule(ctx))
    .use(webhooksModule(ctx))
    .use(notificationsModule(ctx))
    .use(postSubscriptionsModule(ctx))
    .use(sendingDomainModule(ctx))
    .use(inboundEmailModule(ctx))
    .use(exportsModule(ctx))
    .use(importsModule(ctx))
    .use(uploadsModule(ctx))
    .use(contactModule(ctx))
    .use(oauthApiModule(ctx))
    .use(integrationsModule(ctx))
    .use(trackerModule(ctx))
}

export interface CreateAppOptions {
  config: Config
  database: Database
  overrides?: ContextOverrides
}

export async function createApp({ config, database, overrides }: CreateAppOptions) {
  registerStringFormats()
  const ctx = await createContext(config, database, overrides)
  let self: AnyElysia | undefined
  const app = new Elysia({ normalize: false, serve: { maxRequestBodySize: BODY_BACKSTOP } })
    // Errors first, so every module's failures render in the common error body (docs/api.md#errors).
    .use(errorHandler(ctx))
    // First of the request hooks: a request to `/api/<path>` runs them all again at `/api/v1/<path>`.
    .use(unversionedPaths(() => self!))
    // Before the request plugin, so even its early rejections (413, CSRF) carry CORS headers on public routes.
    .use(publicCors())
    .use(requestPlugin(ctx))
    .use(apiRoutes(ctx))
    .use(oauthServerModule(ctx))
    .use(docsModule())
    .use(widgetModule(ctx))
    .use(fileServingModule(ctx))
    .use(mcpModule(ctx))
    .use(signInModule(ctx))
    .use(portalModule(ctx))
    .use(dashboardModule(ctx))
    .use(settingsModule(ctx))
  self = app
  bindRouteTable(ctx, () => self!)
  return { app, ctx }
}

export type App = Awaited<ReturnType<typeof createApp>>['app']
