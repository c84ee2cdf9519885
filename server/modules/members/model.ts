import { Enum } from '../../lib/schema.ts'
import { t } from 'elysia'
import { Email } from '../auth/model.ts'
import { Timestamp } from '../user/model.ts'
import { Role, WorkspaceSlugParams } from '../workspaces/model.ts'

export const InviteMemberRequest = t.Object({
  email: Email,
  role: Enum(['admin', 'member'], { description: 'Ownership is handed over with a role change, never by invitation' }),
}, { additionalProperties: false, description: 'InviteMemberRequest' })

export const UpdateMemberRoleRequest = t.Object({
  role: Enum(['owner', 'admin', 'member'], { description: 'Setting `owner` transfers ownership (owner only); the previous owner becomes admin' }),
}, { additionalProperties: false, description: 'UpdateMemberRoleRequest' })

export const AcceptInviteRequest = t.Object({
  token: t.String({ minLength: 1, maxLength: 512 }),
  name: t.String({ minLength: 1, maxLength: 100 }),
}, { additionalProperties: false, description: 'AcceptInviteRequest' })

export const MemberParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, user_id: t.String({ maxLength: 64 }) })

export const MemberResponse = t.Object({
  user_id: t.String(),
  email: t.String(),
  name: t.Nullable(t.String()),
  role: Role,
  status: Enum(['pending', 'active']),
  invited_at: t.Nullable(Timestamp),
  joined_at: t.Nullable(Timestamp),
}, { description: 'MemberResponse' })

export const MembersListResponse = t.Object({ items: t.Array(MemberResponse), total: t.Integer() }, { description: 'MembersListResponse' })

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
