import type { Cookie } from 'elysia'
import type { Config } from '../../config.ts'
import type { IssuedSession } from './service.ts'

type Jar = Record<string, Cookie<unknown>>

// The refresh cookie is only sent to the API (both prefixes), never to pages.
const REFRESH_PATH = '/api'

export function setSessionCookies(cookie: Jar, session: IssuedSession, config: Config) {
  const common = { httpOnly: true, sameSite: 'lax' as const, secure: config.secureCookies }
  cookie.access_token!.set({ ...common, value: session.accessToken, path: '/', expires: session.accessExpiresAt })
  if (session.refreshToken && session.refreshExpiresAt) {
    cookie.refresh_token!.set({ ...common, value: session.refreshToken, path: REFRESH_PATH, expires: session.refreshExpiresAt })
  }
}

export function clearSessionCookies(cookie: Jar, config: Config) {
  const common = { httpOnly: true, sameSite: 'lax' as const, secure: config.secureCookies, value: '', maxAge: 0, expires: new Date(0) }
  cookie.access_token!.set({ ...common, path: '/' })
  cookie.refresh_token!.set({ ...common, path: REFRESH_PATH })
}
