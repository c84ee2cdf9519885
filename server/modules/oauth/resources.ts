import { resources } from '../../identity/audiences.ts'
import { OAuthError } from './errors.ts'

/** The canonical form of an accepted `resource` (RFC 8707), or an invalid_target error. */
export function checkResource(baseUrl: string, raw: string | null): string | null {
  if (raw === null) return null
  const value = raw.replace(/\/+$/, '') || raw
  const known = resources(baseUrl)
  if (value === known.mcp || known.api.includes(value)) return value
  throw new OAuthError('invalid_target', `resource must be one of ${[known.mcp, ...known.api].join(', ')}`)
}
