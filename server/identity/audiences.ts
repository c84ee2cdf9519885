// Who a token is for: the audience of dashboard session JWTs and the resource indicators (RFC 8707)
// OAuth tokens may be bound to. Below the plugins (docs/architecture.md): the credential plugin checks
// them on every request, the auth and OAuth modules issue tokens with them.

/** The `aud` of a dashboard session's access JWT (`access_token` cookie). */
export const ACCESS_AUDIENCE = 'chorus:dashboard'

/** The resource indicators this service answers for: the MCP endpoint and the REST API. */
export function resources(baseUrl: string) {
  return { mcp: `${baseUrl}/mcp`, api: [baseUrl, `${baseUrl}/api`, `${baseUrl}/api/v1`] }
}

/** Whether a token bound to `resource` may be used at the MCP endpoint (`mcp`) or the REST API (`api`). */
export function resourceAllows(baseUrl: string, resource: string | null, audience: 'mcp' | 'api') {
  if (resource === null) return true
  const known = resources(baseUrl)
  return audience === 'mcp' ? resource === known.mcp : known.api.includes(resource)
}
