import { sql } from 'drizzle-orm'
import type { JWTPayload } from 'jose'
import type { AppContext } from '../../context.ts'
import { endUsers } from '../../db/schema/index.ts'
import { conflict, invalid } from '../../errors.ts'
import { mintWidgetSession, workspaceBySlug } from '../../identity/end-users.ts'
import { newId } from '../../lib/ids.ts'
import { findJwtConfig } from '../jwt-config/service.ts'
import { verifyCustomerToken } from '../jwt-config/verify.ts'
import { companyClaims } from '../companies/claims.ts'
import { setEndUserCompanies } from '../companies/service.ts'

type Profile = { email?: string | null; name?: string | null; avatarUrl?: string | null; company?: string | null }

/** The optional profile claims; present ones must be strings of sane length (a malformed one is the integrator's bug: 422). */
function profileOf(payload: JWTPayload): Profile {
  const claim = (name: string, max: number, check?: (value: string) => boolean) => {
    const value = payload[name]
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'string' || value.length > max || (check && !check(value))) {
      throw invalid(['body', 'token', name], `The token's ${name} claim must be ${check ? 'a valid ' + (name === 'email' ? 'e-mail address' : 'http(s) URL') : 'a string'} of at most ${max} characters`)
    }
    return value.trim() || null
  }
  const email = claim('email', 254, (value) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value))
  return {
    email: email === undefined ? undefined : email?.toLowerCase() ?? null,
    name: claim('name', 200),
    avatarUrl: claim('avatar_url', 2048, (value) => /^https?:\/\//i.test(value)),
  }
}

/**
 * Verifies the customer's token with the workspace's JWT configuration, upserts the end user by
 * (workspace, sub) with the claims it carries (absent claims keep what was stored), and mints a widget session.
 */
export async function identify(ctx: AppContext, workspaceSlug: string, token: string) {
  const workspace = await workspaceBySlug(ctx, workspaceSlug)
  const config = await findJwtConfig(ctx, workspace.id)
  if (!config) throw conflict('This workspace has no JWT configuration, so identify is off; an admin sets it up under /workspaces/{slug}/jwt-config')
  const payload = await verifyCustomerToken(ctx, config, token)
  // `company`/`companies` never fail identify: see companyClaims for the rule.
  const claims = companyClaims(payload)
  const profile: Profile = { ...profileOf(payload), ...(claims.label !== undefined && { company: claims.label }) }
  // The end user and their companies in one transaction: nothing half-written.
  const row = await ctx.db.transaction(async (tx) => {
    const [row] = await tx.insert(endUsers).values({ id: newId('endUser'), workspaceId: workspace.id, externalId: payload.sub, ...profile, verifiedAt: sql`now()` })
      .onConflictDoUpdate({ target: [endUsers.workspaceId, endUsers.externalId], set: { ...profile, verifiedAt: sql`coalesce(${endUsers.verifiedAt}, now())`, updatedAt: sql`now()` } })
      .returning()
    if (claims.companies) await setEndUserCompanies(tx, workspace.id, row!.id, claims.companies)
    return row
  })
  return { endUser: row!, ...(await mintWidgetSession(ctx, workspace.id, row!)) }
}

