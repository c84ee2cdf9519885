import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { createDns } from '../../lib/dns.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { CustomDomainRequest, CustomDomainResponse } from './model.ts'
import * as domains from './service.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'

const tags = ['Notifications']

/** The custom sending domain: dashboard only, owner only, Business plan (403 PLAN_REQUIRED below it). */
export const sendingDomainModule = (ctx: AppContext) => {
  const deps: domains.DomainDeps = { db: ctx.db, dns: createDns(ctx.config.dnsResolver), secrets: ctx.secrets, mailHost: new URL(ctx.config.baseUrl).hostname }
  return new Elysia({ prefix: '/workspaces/:workspace_slug/notifications/custom-domain' })
    .use(authPlugin(ctx))
    .post('', async ({ workspace, body }) => domains.toDomainResponse(await domains.createDomain(deps, workspace, body.domain), deps.mailHost, null), {
      params: WorkspaceSlugParams,
      body: CustomDomainRequest,
      workspace: { role: 'owner' },
      response: { 200: CustomDomainResponse },
      detail: { operationId: 'createCustomDomain', tags, summary: 'Set up the custom sending domain; returns the DNS records to add', description: 'Business plan, owner only, dashboard only. The DKIM key is generated here (RSA 2048); its private half never leaves the service. 409 when the workspace has a domain already or the domain is taken.' },
    })
    .get('', async ({ workspace }) => {
      const { row, found } = await domains.getDomain(deps, workspace)
      return domains.toDomainResponse(row, deps.mailHost, found)
    }, {
      params: WorkspaceSlugParams,
      workspace: { role: 'owner' },
      response: { 200: CustomDomainResponse },
      detail: { operationId: 'getCustomDomain', tags, summary: 'The domain and its status; while pending, each call looks the records up again', description: 'Dashboard session of the owner. While `status` is pending, each call checks the DNS records again and reports each record\'s `verified`. 404 NOT_FOUND when no domain is set up.' },
    })
    .delete('', async ({ workspace, set }) => {
      await domains.deleteDomain(ctx.db, workspace)
      set.status = 204
    }, {
      params: WorkspaceSlugParams,
      workspace: { role: 'owner' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteCustomDomain', tags, summary: 'Remove the domain; mail goes out from the default sender again', description: 'Dashboard session of the owner. Notification e-mails go out from the default sender again. 404 NOT_FOUND when no domain is set up.' },
    })
}
