import { t } from 'elysia'
import type { endUsers } from '../../db/schema/index.ts'
import { Timestamp } from '../user/model.ts'

export const IdentifyRequest = t.Object({
  token: t.String({ minLength: 1, maxLength: 8192, description: "A JWT signed by the workspace's backend (see JWTConfig) with `sub`, `exp` (at most 24 h ahead) and optional `email`, `name`, `avatar_url`, `company`" }),
}, { additionalProperties: false, description: 'IdentifyRequest' })

const endUserFields = {
  id: t.String(),
  external_id: t.Nullable(t.String({ description: "The `sub` of the customer's token" })),
  email: t.Nullable(t.String()),
  name: t.Nullable(t.String()),
  avatar_url: t.Nullable(t.String()),
  created_at: Timestamp,
}

export const EndUserResponse = t.Object(endUserFields, { description: 'EndUserResponse' })

export const IdentifyResponse = t.Object({
  ...endUserFields,
  company: t.Nullable(t.String()),
  session_token: t.String({ description: 'Send as `Authorization: Bearer` on the public write routes. A widget session: it works on no other route' }),
  session_expires_at: Timestamp,
}, { description: 'EndUserResponse with the widget session token (identify)' })

export const toEndUserResponse = (row: typeof endUsers.$inferSelect) => ({
  id: row.id,
  external_id: row.externalId,
  email: row.email,
  name: row.name,
  avatar_url: row.avatarUrl,
  created_at: row.createdAt.toISOString(),
})

const anonymousEmail = t.Optional(t.String({ format: 'email', maxLength: 254, description: 'Anonymous visitors only (when the workspace allows them): who is writing. Identified end users send their session token instead' }))

export const PublicPostCreate = t.Object({
  title: t.String({ minLength: 1, maxLength: 200 }),
  body: t.Optional(t.String({ maxLength: 20_000 })),
  email: anonymousEmail,
}, { additionalProperties: false, description: 'PublicPostCreate' })

export const PublicCommentCreate = t.Object({
  body: t.String({ minLength: 1, maxLength: 10_000 }),
  parent_id: t.Optional(t.String({ maxLength: 64, description: 'Reply to this public comment of the same post' })),
  email: anonymousEmail,
}, { additionalProperties: false, description: 'PublicCommentCreate: public comments are never internal' })

export const PublicVoteToggle = t.Object({ email: anonymousEmail }, { additionalProperties: false, description: 'PublicVoteToggle' })

export const PublicWorkspaceParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }) })
export const PublicBoardParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }), board_slug: t.String({ maxLength: 64 }) })
export const PublicPostParams = t.Object({ workspace_slug: t.String({ maxLength: 64 }), post_id: t.String({ maxLength: 64 }) })
