// No imports but the error class: the credential plugin reads this file, and must not pull in the module around it.
import { OAuthError } from './errors.ts'

/** The resource indicators (RFC 8707) this service answers for: the MCP endpoint and the REST API. */
export function resources(baseUrl: string) {
  return { mcp: `${baseUrl}/mcp`, api: [baseUrl, `${baseUrl}/api`, `${baseUrl}/api/v1`] }
}

/** The canonical form of an accepted `resource`, or an invalid_target error. */
export function checkResource(baseUrl: string, raw: string | null): string | null {
  if (raw === null) return null
  const value = raw.replace(/\/+$/, '') || raw
  const known = resources(baseUrl)
  if (value === known.mcp || known.api.includes(value)) return value
  throw new OAuthError('invalid_target', `resource must be one of ${[known.mcp, ...known.api].join(', ')}`)
}

/** Whether a token bound to `resource` may be used at the MCP endpoint (`mcp`) or the REST API (`api`). */
export function resourceAllows(baseUrl: string, resource: string | null, audience: 'mcp' | 'api') {
  if (resource === null) return true
  const known = resources(baseUrl)
  return audience === 'mcp' ? resource === known.mcp : known.api.includes(resource)
}
