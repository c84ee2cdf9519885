import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { readPage } from '../../lib/paging.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { canSeeRevenue, demandSettings, revenueView, updateDemandSettings } from './demand.ts'
import { CompanyDetail, CompanyListQuery, CompanyPage, CompanyParams, CompanyPut, CompanyResponse, CompanyUserParams, DemandSettings, DemandSettingsUpdate } from './model.ts'
import { findEndUser } from '../end-users/records-service.ts'
import * as companies from './service.ts'

const tags = ['Companies']
const REVENUE = '`mrr` is null for a member when the workspace shows revenue to admins only (`revenue_visible_to`), and for keys and access tokens without `companies:read`.'

/** Companies and the demand settings (docs/demand.md). Company data never appears on public routes. */
export const companiesModule = (ctx: AppContext) =>
  new Elysia({ prefix: '/workspaces/:workspace_slug' })
    .use(authPlugin(ctx))
    .get('/companies', async ({ workspace, caller, member, query }) => {
      const page = readPage(query)
      return companies.companyPage(await companies.listCompanies(ctx.db, workspace.id, query, page), page, canSeeRevenue(workspace, caller, member))
    }, {
      params: WorkspaceSlugParams,
      query: CompanyListQuery,
      workspace: { scope: 'companies:read' },
      response: { 200: CompanyPage },
      detail: { operationId: 'listCompanies', tags, summary: "The workspace's companies, paged", description: `Highest MRR first by default (\`sort=name|new\` otherwise); \`q\` matches name or external id. ${REVENUE}` },
    })
    .put('/companies/:company_id', async ({ workspace, caller, member, params, body, set }) => {
      companies.checkCurrency(body, ['body', 'currency'])
      const row = await companies.upsertCompany(ctx.db, workspace.id, params.company_id, body)
      const { users } = await companies.companyWithUsers(ctx.db, workspace.id, row.externalId)
      set.status = row.createdAt.getTime() === row.updatedAt.getTime() ? 201 : 200
      return companies.toCompanyResponse(row, users, canSeeRevenue(workspace, caller, member))
    }, {
      params: CompanyParams,
      body: CompanyPut,
      workspace: { scope: 'companies:write' },
      response: { 200: CompanyResponse, 201: CompanyResponse },
      detail: {
        operationId: 'putCompany', tags, summary: 'Create or update a company by your id',
        description: `201 when created, 200 when updated. Fields left out keep their values (\`name\` defaults to the external id). \`mrr\` is a non-negative integer in minor units, \`currency\` an ISO 4217 code; \`attributes\` at most 50 flat values. Anything else is 422 and nothing is written. A new MRR, currency or plan updates the \`demand\` of every post the company voted for in the same transaction. ${REVENUE}`,
      },
    })
    .get('/companies/:company_id', async ({ workspace, caller, member, params }) => {
      const { company, users } = await companies.companyWithUsers(ctx.db, workspace.id, params.company_id)
      const revenue = canSeeRevenue(workspace, caller, member)
      const activity = await companies.companyActivity(ctx.db, company)
      const view = revenueView(workspace, caller, member)
      return { ...companies.toCompanyResponse(company, users, revenue), requested: activity.requested.map(view), voted: activity.voted.map(view) }
    }, {
      params: CompanyParams,
      workspace: { scope: 'companies:read' },
      response: { 200: CompanyDetail },
      detail: { operationId: 'getCompany', tags, summary: 'A company with what it asked for and voted for', description: `By external id or \`co_\` id. \`requested\`: posts written by its end users; \`voted\`: posts its verified end users voted for. ${REVENUE} Unknown: 404.` },
    })
    .delete('/companies/:company_id', async ({ workspace, params, set }) => {
      await companies.deleteCompany(ctx.db, workspace.id, params.company_id)
      set.status = 204
    }, {
      params: CompanyParams,
      workspace: { scope: 'companies:write' },
      response: { 204: t.Void() },
      detail: { operationId: 'deleteCompany', tags, summary: 'Delete a company', description: 'Its end users stay (unlinked); its share of every post\'s `demand` goes in the same transaction. Unknown: 404.' },
    })
    .put('/companies/:company_id/users/:end_user_id', async ({ workspace, caller, member, params, set }) => {
      const [company, endUser] = await Promise.all([companies.findCompany(ctx.db, workspace.id, params.company_id), findEndUser(ctx.db, workspace.id, params.end_user_id)])
      set.status = (await companies.linkEndUser(ctx.db, company, endUser.id, true)) ? 201 : 200
      const { users } = await companies.companyWithUsers(ctx.db, workspace.id, company.id)
      return companies.toCompanyResponse(company, users, canSeeRevenue(workspace, caller, member))
    }, {
      params: CompanyUserParams,
      workspace: { scope: 'companies:write' },
      response: { 200: CompanyResponse, 201: CompanyResponse },
      detail: {
        operationId: 'linkCompanyUser', tags, summary: 'Add an end user to a company',
        description: `201 when linked, 200 when they already were. The end user by \`eu_\` id or your id for them, the company by your id or \`co_\` id; either unknown (or of another workspace) is 404. Their verified votes join the company's share of each post's \`demand\` in the same transaction. An identify token that carries \`company\`/\`companies\` sets the user's companies to exactly those; one without leaves links made here. ${REVENUE}`,
      },
    })
    .delete('/companies/:company_id/users/:end_user_id', async ({ workspace, params, set }) => {
      const [company, endUser] = await Promise.all([companies.findCompany(ctx.db, workspace.id, params.company_id), findEndUser(ctx.db, workspace.id, params.end_user_id)])
      await companies.linkEndUser(ctx.db, company, endUser.id, false)
      set.status = 204
    }, {
      params: CompanyUserParams,
      workspace: { scope: 'companies:write' },
      response: { 204: t.Void() },
      detail: { operationId: 'unlinkCompanyUser', tags, summary: 'Remove an end user from a company', description: "204 whether or not they were linked; an unknown company or end user is 404. The company's share of the user's votes leaves each post's `demand` in the same transaction." },
    })
    .get('/demand-settings', ({ workspace }) => demandSettings(workspace), {
      params: WorkspaceSlugParams,
      workspace: { scope: 'companies:read' },
      response: { 200: DemandSettings },
      detail: { operationId: 'getDemandSettings', tags, summary: 'How demand is counted: revenue currency, plan weights, who sees revenue', description: 'Defaults: USD, no plan weights, default weight 1, revenue visible to every member.' },
    })
    .patch('/demand-settings', ({ workspace, body }) => updateDemandSettings(ctx.db, workspace, body), {
      params: WorkspaceSlugParams,
      body: DemandSettingsUpdate,
      workspace: { scope: 'companies:write', role: 'admin' },
      response: { 200: DemandSettings },
      detail: { operationId: 'updateDemandSettings', tags, summary: 'Change the revenue currency, plan weights or revenue visibility (admin)', description: 'Fields left out stay. A new currency, `plan_weights` (replaced whole) or `default_weight` recounts the demand of every post of the workspace from its votes, in the same transaction. An unknown currency is 422.' },
    })
