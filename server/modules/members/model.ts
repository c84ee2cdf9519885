import { Enum, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'
import { t } from 'elysia'
import { Email } from '../auth/model.ts'
import { Role } from '../workspaces/model.ts'

export const InviteMemberRequest = t.Object({
  email: Email,
  role: Enum(['admin', 'member'], { description: 'Ownership is handed over with a role change, never by invitation' }),
}, { additionalProperties: false, $id: 'InviteMemberRequest', examples: [{ email: 'linus@acme.example', role: 'member' }] })

export const UpdateMemberRoleRequest = t.Object({
  role: Enum(['owner', 'admin', 'member'], { description: 'Setting `owner` transfers ownership (owner only); the previous owner becomes admin' }),
}, { additionalProperties: false, $id: 'UpdateMemberRoleRequest', examples: [{ role: 'admin' }] })

export const AcceptInviteRequest = t.Object({
  token: t.String({ minLength: 1, maxLength: 512 }),
  name: t.String({ minLength: 1, maxLength: 100 }),
}, { additionalProperties: false, $id: 'AcceptInviteRequest', examples: [{ name: 'Ada Lovelace', token: 'inv_token_from_the_email' }] })

export const MemberParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, user_id: t.String({ maxLength: 64, examples: ['usr_0mi9x2k3aq1b2c3d4e5f6g7h8'] }) })

export const MemberResponse = t.Object({
  user_id: t.String(),
  email: t.String(),
  name: t.Nullable(t.String()),
  role: Role,
  status: Enum(['pending', 'active']),
  invited_at: t.Nullable(Timestamp),
  joined_at: t.Nullable(Timestamp),
}, { $id: 'Member', examples: [{ user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', email: 'ada@acme.example', name: 'Ada Lovelace', role: 'admin', status: 'active', invited_at: '2026-11-22T09:30:00.000Z', joined_at: '2026-11-23T14:05:12.345Z' }] })

export const MembersListResponse = t.Object({ items: t.Array(MemberResponse), total: t.Integer() }, { $id: 'MemberList', examples: [{ items: [{ user_id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', email: 'ada@acme.example', name: 'Ada Lovelace', role: 'owner', status: 'active', invited_at: null, joined_at: '2026-11-22T09:30:00.000Z' }], total: 1 }] })

export interface MemberRow {
  userId: string
  email: string
  name: string | null
  role: 'owner' | 'admin' | 'member'
  status: 'pending' | 'active'
  invitedAt: Date | null
  joinedAt: Date | null
}

export const toMemberResponse = (row: MemberRow) => ({
  user_id: row.userId,
  email: row.email,
  name: row.name,
  role: row.role,
  status: row.status,
  invited_at: row.invitedAt?.toISOString() ?? null,
  joined_at: row.joinedAt?.toISOString() ?? null,
})
