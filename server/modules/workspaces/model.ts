import { Enum } from '../../lib/schema.ts'
import { t } from 'elysia'
import type { Member, Workspace } from '../../plugins/credentials.ts'
import { Timestamp } from '../user/model.ts'

export const Slug = t.String({ pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$', minLength: 2, maxLength: 48, examples: ['acme'] })
export const Plan = Enum(['free', 'startup', 'scale', 'business'])
export const SubscriptionStatus = Enum(['active', 'trialing', 'past_due', 'canceled', 'unpaid', 'incomplete', 'none'])
export const Role = Enum(['owner', 'admin', 'member'])
export const WorkspaceSlugParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }) })
/** Routes without a slug in the path: keys use their own workspace, dashboard sessions name one here. */
export const WorkspaceHeader = t.Object({
  'x-workspace': t.Optional(t.String({ maxLength: 64, description: 'Dashboard sessions only: the slug of the workspace to act in (API keys always act in their own)' })),
})

export const WorkspaceCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  slug: Slug,
}, { additionalProperties: false, description: 'WorkspaceCreate' })

export const WorkspaceUpdate = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
  slug: t.Optional(Slug),
  settings: t.Optional(t.Object({
    allow_anonymous: t.Optional(t.Boolean({ description: 'Anonymous widget visitors may post and vote with an e-mail address (default true)' })),
    default_board: t.Optional(t.Nullable(t.String({ maxLength: 48 }))),
    brand_color: t.Optional(t.Nullable(t.String({ pattern: '^#[0-9a-fA-F]{6}$' }))),
  }, { additionalProperties: false })),
}, { additionalProperties: false, description: 'WorkspaceUpdate' })

export const WorkspaceResponse = t.Object({
  id: t.String(),
  slug: t.String(),
  name: t.String(),
  logo_url: t.Nullable(t.String()),
  favicon_url: t.Nullable(t.String()),
  settings: t.Record(t.String(), t.Any()),
  plan: Plan,
  subscription_status: SubscriptionStatus,
  comped: t.Boolean(),
  past_due_since: t.Nullable(Timestamp),
  current_period_end: t.Nullable(Timestamp),
  role: t.Nullable(Role, { description: "The caller's role; null for API keys" }),
  created_at: Timestamp,
}, { description: 'WorkspaceResponse' })

export const DeletedResponse = t.Object({ status: t.Literal('deleted'), id: t.String() })

const iso = (value: Date | null) => value?.toISOString() ?? null

export function toWorkspaceResponse(ws: Workspace, role: Member['role'] | null, baseUrl: string) {
  return {
    id: ws.id,
    slug: ws.slug,
    name: ws.name,
    logo_url: ws.logoFileId ? `${baseUrl}/files/${ws.logoFileId}` : null,
    favicon_url: ws.faviconFileId ? `${baseUrl}/files/${ws.faviconFileId}` : null,
    settings: ws.settings,
    plan: ws.plan,
    subscription_status: ws.subscriptionStatus,
    comped: ws.comped,
    past_due_since: iso(ws.pastDueSince),
    current_period_end: iso(ws.currentPeriodEnd),
    role,
    created_at: ws.createdAt.toISOString(),
  }
}
