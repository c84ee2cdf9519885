import { t } from 'elysia'
import type { endUsers } from '../../db/schema/index.ts'
import { Enum, Timestamp } from '../../lib/schema.ts'
import { MAIL_LOCALES } from '../post-subscriptions/i18n.ts'
import { TITLE_TEXT_RULE } from '../../lib/text.ts'

const TITLE_DESCRIPTION = `The post's heading. ${TITLE_TEXT_RULE}`

export const IdentifyRequest = t.Object({
  token: t.String({ minLength: 1, maxLength: 8192, description: "A JWT signed by the workspace's backend (see JWTConfig) with `sub`, `exp` (at most 24 h ahead) and optional `email`, `name`, `avatar_url`, `company`" }),
}, { additionalProperties: false, $id: 'IdentifyRequest', examples: [{ token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEyMzQiLCJleHAiOjE3OTU0MDAwMDB9.c2lnbmF0dXJl' }] })

const endUserFields = {
  id: t.String(),
  external_id: t.Nullable(t.String({ description: "The `sub` of the customer's token" })),
  email: t.Nullable(t.String()),
  name: t.Nullable(t.String()),
  avatar_url: t.Nullable(t.String()),
  verified: t.Boolean({ description: 'False for an anonymous e-mail identity whose owner has not clicked the confirmation link yet; identified (JWT) end users and those named by a member or key are verified' }),
  created_at: Timestamp,
}

export const endUserExample = { id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8', external_id: 'user-1234', email: 'grace@customer.example', name: 'Grace Hopper', avatar_url: null, verified: true, created_at: '2026-11-22T09:30:00.000Z' }

export const EndUserResponse = t.Object(endUserFields, { $id: 'EndUser', examples: [endUserExample] })

export const IdentifyResponse = t.Object({
  ...endUserFields,
  company: t.Nullable(t.String()),
  session_token: t.String({ description: 'Send as `Authorization: Bearer` on the public write routes. A widget session: it works on no other route' }),
  session_expires_at: Timestamp,
}, { $id: 'EndUserSession', examples: [{ ...endUserExample, company: 'Customer Inc', session_token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJldV8uLi4ifQ.c2lnbmF0dXJl', session_expires_at: '2026-11-23T14:05:12.345Z' }], description: 'The end user with the widget session token (identify)' })

export const toEndUserResponse = (row: typeof endUsers.$inferSelect) => ({
  id: row.id,
  external_id: row.externalId,
  email: row.email,
  name: row.name,
  avatar_url: row.avatarUrl,
  verified: row.verifiedAt !== null,
  created_at: row.createdAt.toISOString(),
})

/** The language the writer reads: their e-mail about the post comes in it (one of the widget's seven; the widget sends its own). */
const locale = t.Optional(Enum([...MAIL_LOCALES], { description: "The writer's language (the widget's seven): e-mail about the post is written in it. The latest write's wins" }))

const anonymousEmail = t.Optional(t.String({ format: 'email', maxLength: 254, description: 'Anonymous visitors only (when the workspace allows them): who is writing. Identified end users send their session token instead' }))

export const PublicPostCreate = t.Object({
  title: t.String({ minLength: 1, maxLength: 200, description: TITLE_DESCRIPTION }),
  body: t.Optional(t.String({ maxLength: 20_000 })),
  email: anonymousEmail,
  locale,
  challenge: t.Optional(t.String({ maxLength: 8_000, description: 'A solved ALTCHA challenge from GET /contact/challenge (base64 JSON `{challenge, solution}`): required from anonymous and unconfirmed writers when the workspace turns on `settings.proof_of_work` (docs/moderation.md#proof-of-work)' })),
}, { additionalProperties: false, $id: 'PublicPostCreate', examples: [{ title: 'Dark mode', body: 'Our support team works nights.', email: 'grace@customer.example' }] })

export const PublicCommentCreate = t.Object({
  body: t.String({ minLength: 1, maxLength: 10_000 }),
  parent_id: t.Optional(t.String({ maxLength: 64, description: 'Reply to this public comment of the same post' })),
  email: anonymousEmail,
  locale,
}, { additionalProperties: false, $id: 'PublicCommentCreate', examples: [{ body: 'Same here, please!', email: 'grace@customer.example' }], description: 'Public comments are never internal' })

export const PublicVoteToggle = t.Object({ email: anonymousEmail, locale }, { additionalProperties: false, $id: 'PublicVoteToggle', examples: [{ email: 'grace@customer.example' }] })

