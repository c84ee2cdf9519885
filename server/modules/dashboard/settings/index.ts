import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { apiKeysSettings } from './api-keys.ts'
import { membersSettings } from './members.ts'
import { webhooksSettings } from './webhooks.ts'
import { widgetSettings } from './widget.ts'

/** Settings pages of issue 35 at /dashboard/{slug}/settings/{section}: members, API keys, webhooks, widget. */
export const teamSettingsPages = (ctx: AppContext) => new Elysia({ name: 'dashboard-settings-team' })
  .use(membersSettings(ctx))
  .use(apiKeysSettings(ctx))
  .use(webhooksSettings(ctx))
  .use(widgetSettings(ctx))
