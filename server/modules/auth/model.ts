import { t } from 'elysia'

export const Email = t.String({ format: 'email', maxLength: 254 })

/** Relative paths only: an absolute URL here would make the login an open redirect. */
export const RedirectPath = t.String({ pattern: '^/(?![/\\\\])[^\\s]*$', maxLength: 2048 })

export const MagicLinkRequest = t.Object({ email: Email, redirect_to: t.Optional(RedirectPath) }, { additionalProperties: false, description: 'MagicLinkRequest' })
export const MagicLinkVerifyRequest = t.Object({ token: t.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false, description: 'MagicLinkVerifyRequest' })
export const TokenRequest = t.Object({ token: t.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false, description: 'TokenRequest' })

export const StatusResponse = t.Object({ status: t.String() }, { description: 'A status acknowledgement such as `{"status":"sent"}`' })

export const TokenResponse = t.Object({
  token_type: t.Literal('cookie', { description: 'Tokens travel only in HttpOnly cookies, never in the body' }),
  expires_in: t.Integer({ description: 'Seconds until the new access_token cookie expires' }),
  access_token_expires_at: t.String({ format: 'date-time' }),
  refresh_token_expires_at: t.String({ format: 'date-time' }),
}, { description: 'TokenResponse' })

export const SessionCookies = t.Cookie({
  access_token: t.Optional(t.String()),
  refresh_token: t.Optional(t.String()),
})
