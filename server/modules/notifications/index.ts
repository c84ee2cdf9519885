import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { authPlugin, type Caller } from '../../plugins/auth.ts'
import type { Workspace } from '../../plugins/credentials.ts'
import {
  NotificationEventListResponse, NotificationEventQuery, SubscriptionCreate, SubscriptionParams, SubscriptionResponse,
  SubscriptionToggle, toNotificationEventResponse, toSubscriptionResponse,
} from './model.ts'
import * as notifications from './service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { pageSizeBody, readPageSize } from '../../lib/paging.ts'

const tags = ['Notifications']

const audience = (workspace: Workspace, caller: Caller): notifications.Audience =>
  ({ workspaceId: workspace.id, userId: caller.kind === 'session' ? caller.user.id : null })

export const notificationsModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug/notifications' })
    .use(authPlugin(ctx))
    .get('/subscriptions', async ({ workspace, caller }) => (await notifications.listSubscriptions(ctx.db, audience(workspace, caller))).map(toSubscriptionResponse), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'notifications:read' },
      response: { 200: t.Array(SubscriptionResponse) },
      detail: { operationId: 'listNotificationSubscriptions', tags, summary: "A member's own subscriptions; with a key, every member's", description: 'With an API key (`notifications:read`) or a dashboard session. A member sees their own subscriptions; a key sees every member\'s.' },
    })
    .post('/subscriptions', async ({ workspace, member, body, set }) => {
      const row = await notifications.createSubscription(ctx.db, workspace.id, member!.userId, body)
      set.status = 201
      return toSubscriptionResponse(row)
    }, {
      params: WorkspaceSlugParams,
      body: SubscriptionCreate,
      // Subscriptions belong to a person; a key has none to subscribe, so creating one is dashboard-only.
      workspace: { role: 'member' },
      response: { 201: SubscriptionResponse },
      detail: { operationId: 'createNotificationSubscription', tags, summary: 'Subscribe the signed-in member to event kinds on one channel', description: 'One subscription per member, channel (`email` or `in_app`) and delivery (`instant`, the default, or `daily`: one e-mail a day at `NOTIFY_DIGEST_HOUR` UTC, e-mail only); a second is 409. A new workspace subscribes its owner to `post.created` as a daily e-mail digest. Dashboard only: an API key has no member to subscribe (403 DASHBOARD_ONLY).' },
    })
    .patch('/subscriptions/:subscription_id', async ({ workspace, caller, params, body }) => toSubscriptionResponse(await notifications.updateSubscription(ctx.db, audience(workspace, caller), params.subscription_id, body)), {
      params: SubscriptionParams,
      body: SubscriptionToggle,
      workspace: { scope: 'notifications:write' },
      response: { 200: SubscriptionResponse },
      detail: { operationId: 'toggleNotificationSubscription', tags, summary: 'Turn a subscription on or off, or change its delivery', description: "`enabled` turns it on or off; `delivery` switches between an e-mail per event (`instant`) and one a day (`daily`, e-mail only; 422 on `in_app`; 409 if the member already has one of that delivery on the channel). A member changes their own; a key any member's in its workspace." },
    })
    .delete('/subscriptions/:subscription_id', async ({ workspace, caller, params, set }) => {
      await notifications.deleteSubscription(ctx.db, audience(workspace, caller), params.subscription_id)
      set.status = 204
    }, {
      params: SubscriptionParams,
      workspace: { scope: 'notifications:write' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteNotificationSubscription', tags, summary: 'Delete a subscription', description: 'With an API key (`notifications:write`) or a dashboard session. A member deletes their own; a key any of the workspace. An unknown id is 404 NOT_FOUND.' },
    })
    .get('/events', async ({ workspace, caller, query }) => {
      const page = readPageSize(query)
      const { items, total } = await notifications.listNotificationEvents(ctx.db, audience(workspace, caller), page)
      return pageSizeBody(items.map(toNotificationEventResponse), page, total)
    }, {
      params: WorkspaceSlugParams,
      query: NotificationEventQuery,
      workspace: { scope: 'notifications:read' },
      response: { 200: NotificationEventListResponse },
      detail: { operationId: 'listNotificationEvents', tags, summary: 'Notifications, newest first, paged', description: "A member's own; with a key, every member's. `page` ≥ 1 (default 1), `page_size` 1–100 (default 50)." },
    })
