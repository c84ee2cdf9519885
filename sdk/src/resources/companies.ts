// Companies and revenue-weighted demand (docs/demand.md). Revenue needs the companies:read scope.
import type { Company, CompanyDetail, CompanyPutParams, DemandSettings, DemandSettingsUpdateParams, QueryOf, Result } from '../api-types.js'
import type { RequestOptions } from '../core/request.js'
import { APIResource } from './resource.js'

export class Companies extends APIResource {
  /** One page, highest MRR first: `chorus.companies.list({ sort: 'name', page: 2 })`. */
  async list(query: QueryOf<'listCompanies'> = {}, options?: RequestOptions): Promise<Result<'listCompanies'>> {
    return this.client.call('listCompanies', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, query })
  }

  /** With what the company asked for (`requested`) and voted for (`voted`); by your id or the `co_` id. */
  async get(companyId: string, options?: RequestOptions): Promise<CompanyDetail> {
    return this.client.call('getCompany', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), company_id: companyId } })
  }

  /** Creates or updates by your id: `chorus.companies.upsert('cust-981', { name: 'Customer Inc', mrr: 500000 })` (MRR in cents). */
  async upsert(externalId: string, params: CompanyPutParams, options?: RequestOptions): Promise<Company> {
    return this.client.call('putCompany', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), company_id: externalId }, body: params })
  }

  async delete(companyId: string, options?: RequestOptions): Promise<void> {
    await this.client.call('deleteCompany', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), company_id: companyId } })
  }

  /** Adds an end user (your id for them, or `eu_`) to the company: their verified votes count in its demand. */
  async addUser(companyId: string, endUserId: string, options?: RequestOptions): Promise<Company> {
    return this.client.call('linkCompanyUser', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), company_id: companyId, end_user_id: endUserId } })
  }

  async removeUser(companyId: string, endUserId: string, options?: RequestOptions): Promise<void> {
    await this.client.call('unlinkCompanyUser', { ...options, path: { workspace_slug: await this.client.workspaceSlug(), company_id: companyId, end_user_id: endUserId } })
  }

  async demandSettings(options?: RequestOptions): Promise<DemandSettings> {
    return this.client.call('getDemandSettings', { ...options, path: { workspace_slug: await this.client.workspaceSlug() } })
  }

  async updateDemandSettings(params: DemandSettingsUpdateParams, options?: RequestOptions): Promise<DemandSettings> {
    return this.client.call('updateDemandSettings', { ...options, path: { workspace_slug: await this.client.workspaceSlug() }, body: params })
  }
}
