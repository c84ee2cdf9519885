import { Enum, Slug, Timestamp } from '../../lib/schema.ts'
import { t } from 'elysia'
import type { Member, Workspace } from '../../plugins/credentials.ts'
import { fileUrl } from '../files/model.ts'

export const Plan = Enum(['free', 'startup', 'scale', 'business'])
export const SubscriptionStatus = Enum(['active', 'trialing', 'past_due', 'canceled', 'unpaid', 'incomplete', 'none'])
export const Role = Enum(['owner', 'admin', 'member'])

export const WorkspaceCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  slug: Slug,
}, { additionalProperties: false, $id: 'WorkspaceCreate', examples: [{ name: 'Acme', slug: 'acme' }] })

export const WorkspaceUpdate = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
  slug: t.Optional(Slug),
  settings: t.Optional(t.Object({
    allow_anonymous: t.Optional(t.Boolean({ description: 'Anonymous widget visitors may post and vote with an e-mail address (default true)' })),
    default_board: t.Optional(t.Nullable(t.String({ maxLength: 48, description: 'The slug of the public board the widget opens on (default: the oldest public board)' }))),
    brand_color: t.Optional(t.Nullable(t.String({ pattern: '^#[0-9a-fA-F]{6}$', description: "The portal's and widget's accent colour (public as `accent_color`); also the colour of e-mail to end users" }))),
    author_votes: t.Optional(t.Boolean({ description: "An end user's new post starts with their own vote (default true)" })),
    moderation: t.Optional(Enum(['off', 'suspicious', 'anonymous'], { description: 'What end-user posts are held for review (docs/moderation.md): `off` (default) none; `suspicious` anonymous and unconfirmed writers\' posts whose spam score reaches 5; `anonymous` every post by an anonymous or unconfirmed writer. Identified (JWT) and confirmed end users are never held' })),
    proof_of_work: t.Optional(t.Boolean({ description: 'Anonymous and unconfirmed end users solve an ALTCHA proof of work (GET /contact/challenge) to post through the widget and public API (default false; docs/moderation.md#proof-of-work)' })),
    email_identified_users: t.Optional(t.Boolean({ description: 'Post updates are e-mailed to identified (JWT) end users too (default true); off, only `end_user.notified` webhook events tell them, for your own product to pass on' })),
  }, { additionalProperties: false })),
}, { additionalProperties: false, $id: 'WorkspaceUpdate', examples: [{ name: 'Acme Inc', settings: { allow_anonymous: false, default_board: 'ideas' } }] })

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
  email_intake_token: t.Nullable(t.String({ description: 'Admins and the owner only (null for members and API keys): mail to `{email_intake_token}@{INBOUND_EMAIL_DOMAIN}` becomes feedback. Rotate it with POST /workspaces/{slug}/email-intake/rotate-token.', examples: ['0f8c2d1e9a7b4c3d5e6f708192a3b4c5'] })),
  created_at: Timestamp,
}, { $id: 'Workspace', examples: [{ id: 'ws_0mi9x2k3aq1b2c3d4e5f6g7h8', slug: 'acme', name: 'Acme', logo_url: null, favicon_url: null, settings: { allow_anonymous: true }, plan: 'startup', subscription_status: 'active', comped: false, past_due_since: null, current_period_end: '2026-11-23T14:05:12.345Z', role: 'owner', email_intake_token: '0f8c2d1e9a7b4c3d5e6f708192a3b4c5', created_at: '2026-11-22T09:30:00.000Z' }] })

export const DeletedResponse = t.Object({ status: t.Literal('deleted'), id: t.String() }, { $id: 'Deleted', examples: [{ status: 'deleted', id: 'ws_0mi9x2k3aq1b2c3d4e5f6g7h8' }] })

const iso = (value: Date | null) => value?.toISOString() ?? null

export function toWorkspaceResponse(ws: Workspace, role: Member['role'] | null, baseUrl: string) {
  return {
    id: ws.id,
    slug: ws.slug,
    name: ws.name,
    logo_url: fileUrl(baseUrl, ws.logoFileId),
    favicon_url: fileUrl(baseUrl, ws.faviconFileId),
    settings: ws.settings,
    plan: ws.plan,
    subscription_status: ws.subscriptionStatus,
    comped: ws.comped,
    past_due_since: iso(ws.pastDueSince),
    current_period_end: iso(ws.currentPeriodEnd),
    role,
    email_intake_token: role === 'owner' || role === 'admin' ? ws.emailIntakeToken : null,
    created_at: ws.createdAt.toISOString(),
  }
}
