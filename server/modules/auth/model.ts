import { t } from 'elysia'

export const Email = t.String({ format: 'email', maxLength: 254 })

/**
 * Relative paths only: an absolute URL here would make the login an open redirect. `/` then nothing,
 * or a first character other than `/` and `\` (`//host` is protocol-relative), and no whitespace.
 * Written without lookahead so generators of valid values (the fuzz test's) can read it.
 */
export const RedirectPath = t.String({ pattern: '^/(?:[^/\\\\\\s][^\\s]*)?$', maxLength: 2048, examples: ['/settings'] })

export const MagicLinkRequest = t.Object({ email: Email, redirect_to: t.Optional(RedirectPath) }, { additionalProperties: false, $id: 'MagicLinkRequest', examples: [{ email: 'ada@acme.example', redirect_to: '/settings' }] })
export const MagicLinkVerifyRequest = t.Object({ token: t.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false, $id: 'MagicLinkVerifyRequest', examples: [{ token: 'mlt_token_from_the_email' }] })
export const TokenRequest = t.Object({ token: t.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false, $id: 'TokenRequest', examples: [{ token: 'evt_token_from_the_email' }] })

export const StatusResponse = t.Object({ status: t.String() }, { $id: 'Acknowledgement', description: 'A status acknowledgement such as `{"status":"sent"}`', examples: [{ status: 'sent' }] })

export const TokenResponse = t.Object({
  token_type: t.Literal('cookie', { description: 'Tokens travel only in HttpOnly cookies, never in the body' }),
  expires_in: t.Integer({ description: 'Seconds until the new access_token cookie expires' }),
  access_token_expires_at: t.String({ format: 'date-time' }),
  refresh_token_expires_at: t.String({ format: 'date-time' }),
}, { $id: 'Token', examples: [{ token_type: 'cookie', expires_in: 900, access_token_expires_at: '2026-11-22T09:30:00.000Z', refresh_token_expires_at: '2026-11-23T14:05:12.345Z' }] })

export const SessionCookies = t.Cookie({
  access_token: t.Optional(t.String()),
  refresh_token: t.Optional(t.String()),
})
