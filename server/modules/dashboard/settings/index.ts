import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { requestPlugin } from '../../../plugins/request.ts'
import { accountSettingsModule } from './account.ts'
import { apiKeysSettings } from './api-keys.ts'
import { boardsSettingsModule } from './boards.ts'
import { brandingSettingsModule } from './branding.ts'
import { dataSettingsModule } from './data.ts'
import { integrationsSettingsModule } from './integrations.ts'
import { membersSettings } from './members.ts'
import { webhooksSettings } from './webhooks.ts'
import { widgetSettings } from './widget.ts'

/** Settings pages of issue 35 at /dashboard/{slug}/settings/{section}: members, API keys, webhooks, widget (mounted by the dashboard module). */
export const teamSettingsPages = (ctx: AppContext) => new Elysia({ name: 'dashboard-settings-team' })
  .use(membersSettings(ctx))
  .use(apiKeysSettings(ctx))
  .use(webhooksSettings(ctx))
  .use(widgetSettings(ctx))

/** The rest of them: boards, branding, integrations, workspace data, account (mounted by app.ts; docs/dashboard.md). */
export const settingsModule = (ctx: AppContext) =>
  new Elysia({ name: 'dashboard-settings' })
    .use(requestPlugin(ctx))
    .use(boardsSettingsModule(ctx))
    .use(brandingSettingsModule(ctx))
    .use(integrationsSettingsModule(ctx))
    .use(dataSettingsModule(ctx))
    .use(accountSettingsModule(ctx))
