import { eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { workspaces } from '../../db/schema/index.ts'
import type { Caller } from '../../plugins/auth.ts'
import type { Member, Workspace } from '../../plugins/credentials.ts'
import { checkCurrency } from './service.ts'

export interface DemandSettings {
  currency: string
  plan_weights: Record<string, number>
  default_weight: number
  revenue_visible_to: 'member' | 'admin'
}

const DEFAULTS: DemandSettings = { currency: 'USD', plan_weights: {}, default_weight: 1, revenue_visible_to: 'member' }

/** `settings.demand` with its defaults; the SQL of migration 0029 reads the same keys with the same defaults. */
export function demandSettings(workspace: Pick<Workspace, 'settings'>): DemandSettings {
  return { ...DEFAULTS, ...(workspace.settings.demand as Partial<DemandSettings> | undefined) }
}

/**
 * Whether the caller may read revenue (company `mrr`, post `demand.mrr`): a member session by role against
 * `revenue_visible_to`; a key or access token by the `companies:read` scope, revenue being company data.
 */
export function canSeeRevenue(workspace: Pick<Workspace, 'settings'>, caller: Caller, member: Member | null) {
  if (caller.kind === 'api_key' || caller.kind === 'oauth') return caller.scopes.includes('companies:read')
  if (!member) return false
  return demandSettings(workspace).revenue_visible_to === 'member' || member.role !== 'member'
}

/** The response for a caller who may not read revenue (docs/demand.md#who-sees-revenue): `demand.mrr` null. */
export function withoutRevenue<T extends { demand?: { mrr: number | null } }>(post: T): T {
  return post.demand ? { ...post, demand: { ...post.demand, mrr: null } } : post
}

/** The team's view of posts for one caller, for every route that answers posts (lists, reads, the inbox, a company's page). */
export function revenueView(workspace: Pick<Workspace, 'settings'>, caller: Caller, member: Member | null) {
  return canSeeRevenue(workspace, caller, member) ? <T>(post: T) => post : withoutRevenue
}

/**
 * Merges the change into `settings.demand`. A new currency, weight or default weight changes what every
 * post's demand counts, so the workspace's posts are recounted from their votes in the same transaction.
 */
export async function updateDemandSettings(db: Db, workspace: Workspace, change: Partial<DemandSettings>) {
  checkCurrency(change, ['body', 'currency'])
  return db.transaction(async (tx) => {
    const [row] = await tx.update(workspaces).set({ settings: sql`jsonb_set(${workspaces.settings}, '{demand}', coalesce(${workspaces.settings}->'demand', '{}'::jsonb) || ${JSON.stringify(change)}::jsonb)`, updatedAt: sql`now()` })
      .where(eq(workspaces.id, workspace.id)).returning()
    if (change.currency !== undefined || change.plan_weights !== undefined || change.default_weight !== undefined) {
      await tx.execute(sql`select chorus_demand_recount(${workspace.id})`)
    }
    return demandSettings(row!)
  })
}
