import { t } from 'elysia'
import type { users } from '../../db/schema/index.ts'
import { fileUrl } from '../files/model.ts'
import { Timestamp } from '../../lib/schema.ts'


export const UserResponse = t.Object({
  id: t.String({ examples: ['usr_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  email: t.String({ format: 'email' }),
  name: t.Nullable(t.String()),
  avatar_url: t.Nullable(t.String()),
  email_verified: t.Boolean(),
  locale: t.String(),
  created_at: Timestamp,
}, { $id: 'User', examples: [{ id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', email: 'ada@acme.example', name: 'Ada Lovelace', avatar_url: null, email_verified: true, locale: 'en', created_at: '2026-11-22T09:30:00.000Z' }] })

export const UserUpdate = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
  locale: t.Optional(t.String({ pattern: '^[a-z]{2}(-[A-Z]{2})?$', description: 'BCP 47 language tag such as `en` or `pt-BR`' })),
}, { additionalProperties: false, $id: 'UserUpdate', examples: [{ name: 'Ada King', locale: 'en-GB' }] })

export const AccountDeletedResponse = t.Object({
  status: t.Literal('deleted'),
  id: t.String({ examples: ['usr_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  deleted_workspaces: t.Array(t.String(), { description: 'Ids of the workspaces deleted with the account (the user was their only active member)' }),
}, { $id: 'AccountDeleted', examples: [{ status: 'deleted', id: 'usr_0mi9x2k3aq1b2c3d4e5f6g7h8', deleted_workspaces: ['ws_0mi9x2k3aq1b2c3d4e5f6g7h8'] }] })

type UserRow = typeof users.$inferSelect

export function toUserResponse(user: UserRow, baseUrl: string) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    avatar_url: fileUrl(baseUrl, user.avatarFileId),
    email_verified: user.emailVerified,
    locale: user.locale,
    created_at: user.createdAt.toISOString(),
  }
}
