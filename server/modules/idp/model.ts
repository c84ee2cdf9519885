import { t } from 'elysia'
import { RedirectPath } from '../auth/model.ts'

export const IdpLoginQuery = t.Object({
  data_region: t.Optional(t.UnionEnum(['US', 'EU'], { default: 'US', description: 'Which configured issuer to sign in with (IDP_ISSUER_US or IDP_ISSUER_EU)', examples: ['EU'] })),
  redirect_to: t.Optional(t.String({ ...RedirectPath, default: '/dashboard', description: 'Where to land after signing in: a path relative to the dashboard; an absolute URL is 422', examples: ['/dashboard'] })),
  locale: t.Optional(t.String({ pattern: '^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$', maxLength: 35, default: 'en', description: 'Passed to the provider as `ui_locales`; the locale of an account created by this login', examples: ['de'] })),
}, { additionalProperties: false, description: 'IdpLoginQuery' })

export const IdpCallbackQuery = t.Object({
  code: t.Optional(t.String({ maxLength: 4096, description: 'The authorization code', examples: ['SplxlOBeZQQYbYS6WxSbIA'] })),
  state: t.Optional(t.String({ maxLength: 512, description: 'Must equal the state sealed in the idp_oauth_state cookie', examples: ['af0ifjsldkj'] })),
  error: t.Optional(t.String({ maxLength: 256, description: 'The provider\'s error, e.g. access_denied', examples: ['access_denied'] })),
  error_description: t.Optional(t.String({ maxLength: 2048 })),
  error_uri: t.Optional(t.String({ maxLength: 2048 })),
  iss: t.Optional(t.String({ maxLength: 2048, description: 'RFC 9207: when present it must equal the issuer the login went to' })),
  session_state: t.Optional(t.String({ maxLength: 512, description: 'Must equal the state sealed in the idp_oauth_state cookie', examples: ['af0ifjsldkj'] })),
}, { description: 'IdpCallbackQuery', examples: [{ code: 'SplxlOBeZQQYbYS6WxSbIA', state: 'af0ifjsldkj', iss: 'https://idp.example.com' }] })

export const IdpStateCookie = t.Cookie({
  idp_oauth_state: t.Optional(t.String({ maxLength: 4096 })),
  access_token: t.Optional(t.String()),
  refresh_token: t.Optional(t.String()),
})

export const Redirect = t.Void({ description: 'Redirect; `Location` names the next step' })
