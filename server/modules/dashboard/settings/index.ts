import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { requestPlugin } from '../../../plugins/request.ts'
import { accountSettingsModule } from './account.ts'
import { boardsSettingsModule } from './boards.ts'
import { brandingSettingsModule } from './branding.ts'
import { dataSettingsModule } from './data.ts'
import { integrationsSettingsModule } from './integrations.ts'

/** The settings pages of issue 35 this module owns: `/dashboard/{slug}/settings/{section}` (CONTRACT.md section 19). */
export const settingsModule = (ctx: AppContext) =>
  new Elysia({ name: 'dashboard-settings' })
    .use(requestPlugin(ctx))
    .use(boardsSettingsModule(ctx))
    .use(brandingSettingsModule(ctx))
    .use(integrationsSettingsModule(ctx))
    .use(dataSettingsModule(ctx))
    .use(accountSettingsModule(ctx))
