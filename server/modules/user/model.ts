import { t } from 'elysia'
import type { users } from '../../db/schema/index.ts'

export const Timestamp = t.String({ format: 'date-time', examples: ['2026-11-22T09:30:00.000Z'] })

export const UserResponse = t.Object({
  id: t.String({ examples: ['usr_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  email: t.String({ format: 'email' }),
  name: t.Nullable(t.String()),
  avatar_url: t.Nullable(t.String()),
  email_verified: t.Boolean(),
  locale: t.String(),
  created_at: Timestamp,
}, { description: 'UserResponse' })

export const UserUpdate = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
  locale: t.Optional(t.String({ pattern: '^[a-z]{2}(-[A-Z]{2})?$', description: 'BCP 47 language tag such as `en` or `pt-BR`' })),
}, { additionalProperties: false, description: 'UserUpdate' })

type UserRow = typeof users.$inferSelect

export function toUserResponse(user: UserRow, baseUrl: string) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    avatar_url: user.avatarFileId ? `${baseUrl}/files/${user.avatarFileId}` : null,
    email_verified: user.emailVerified,
    locale: user.locale,
    created_at: user.createdAt.toISOString(),
  }
}
