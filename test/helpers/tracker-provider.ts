// A Linear-compatible API on a random loopback port: the OAuth token endpoint (`POST /oauth/token`,
// form-encoded, authorization_code and refresh_token grants, OAuth error bodies) and GraphQL at
// `POST /graphql` (bearer token; `organization`, `teams`, `issueCreate`, `issue(id)`; 401 with `errors` for a bad token).

export const TRACKER_CLIENT = { id: 'tracker-client-id', secret: 'tracker-client-secret' }
export const TRACKER_WEBHOOK_SECRET = 'lin_wh_test_secret_0123456789abcdef'
export const TRACKER_ORG = { id: 'org-1a2b3c', name: 'Acme Engineering' }

export interface CreatedIssue { id: string; identifier: string; url: string; teamId: string; title: string; description: string; stateType: string }

export function startFakeTracker() {
  const teams = [
    { id: 'team-eng-0001', name: 'Engineering', key: 'ENG' },
    { id: 'team-des-0002', name: 'Design', key: 'DES' },
  ]
  const state = {
    codes: new Set<string>(['tracker-code']),
    tokens: new Set<string>(),
    refreshTokens: new Set<string>(),
    /** Seconds until a new access token expires (Linear: 24 h). */
    expiresIn: 86_399,
    issues: [] as CreatedIssue[],
    tokenRequests: [] as URLSearchParams[],
    graphql: [] as { query: string; variables: any; token: string | null }[],
    issued: 0,
    /** The next N GraphQL calls answer HTTP 503. */
    outages: 0,
  }

  function grant() {
    const n = ++state.issued
    const access = `lin_oauth_${n}_${crypto.randomUUID().replace(/-/g, '')}`
    const refresh = `lin_refresh_${n}_${crypto.randomUUID().replace(/-/g, '')}`
    state.tokens.add(access)
    state.refreshTokens.add(refresh)
    return { access_token: access, token_type: 'Bearer', expires_in: state.expiresIn, scope: 'read,write', refresh_token: refresh }
  }

  const oauthError = (error: string, description: string) => Response.json({ error, error_description: description }, { status: 400 })

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const path = new URL(request.url).pathname
      if (request.method === 'POST' && path === '/oauth/token') {
        const params = new URLSearchParams(await request.text())
        state.tokenRequests.push(params)
        if (params.get('client_id') !== TRACKER_CLIENT.id || params.get('client_secret') !== TRACKER_CLIENT.secret) return Response.json({ error: 'invalid_client' }, { status: 401 })
        if (params.get('grant_type') === 'authorization_code') {
          if (!state.codes.delete(params.get('code') ?? '')) return oauthError('invalid_grant', 'The authorization code is invalid or expired')
          return Response.json(grant())
        }
        if (params.get('grant_type') === 'refresh_token') {
          if (!state.refreshTokens.delete(params.get('refresh_token') ?? '')) return oauthError('invalid_grant', 'The refresh token is invalid')
          return Response.json(grant())
        }
        return oauthError('unsupported_grant_type', 'Unsupported grant type')
      }
      if (request.method === 'POST' && path === '/graphql') {
        const token = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? null
        const { query, variables } = await request.json() as { query: string; variables: any }
        state.graphql.push({ query, variables, token })
        if (state.outages > 0) {
          state.outages--
          return new Response('upstream unavailable', { status: 503 })
        }
        if (!token || !state.tokens.has(token)) {
          return Response.json({ errors: [{ message: 'Authentication required, not authenticated', extensions: { code: 'AUTHENTICATION_ERROR' } }] }, { status: 401 })
        }
        if (/\borganization\b/.test(query)) return Response.json({ data: { organization: TRACKER_ORG } })
        if (/\bteams\b/.test(query)) return Response.json({ data: { teams: { nodes: teams } } })
        if (/\bissue\(id:/.test(query)) {
          const issue = state.issues.find((candidate) => candidate.id === variables?.id)
          if (!issue) return Response.json({ errors: [{ message: 'Entity not found: Issue', extensions: { code: 'INVALID_INPUT' } }], data: null }, { status: 400 })
          return Response.json({ data: { issue: { id: issue.id, state: { type: issue.stateType, name: issue.stateType } } } })
        }
        if (/\bissueCreate\b/.test(query)) {
          const input = variables?.input ?? {}
          const team = teams.find((t) => t.id === input.teamId)
          if (!team) return Response.json({ errors: [{ message: 'Entity not found: Team', extensions: { code: 'INVALID_INPUT' } }], data: null }, { status: 400 })
          const number = state.issues.filter((issue) => issue.teamId === team.id).length + 1
          const issue = { id: crypto.randomUUID(), identifier: `${team.key}-${number}`, url: `https://linear.example/acme/issue/${team.key}-${number}`, teamId: team.id, title: input.title, description: input.description, stateType: 'unstarted' }
          state.issues.push(issue)
          return Response.json({ data: { issueCreate: { success: true, issue: { id: issue.id, identifier: issue.identifier, url: issue.url } } } })
        }
        return Response.json({ errors: [{ message: 'Cannot query this field' }] }, { status: 400 })
      }
      return new Response('not found', { status: 404 })
    },
  })

  return { base: `http://127.0.0.1:${server.port}`, state, stop: () => server.stop(true) }
}

/** A delivery as the tracker sends it: JSON body, `Linear-Signature` (hex HMAC-SHA256 of the raw body), `Linear-Delivery`, `Linear-Event`. */
export async function trackerDelivery(payload: Record<string, unknown>, options: { secret?: string; deliveryId?: string; signature?: string } = {}) {
  const body = JSON.stringify(payload)
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(options.secret ?? TRACKER_WEBHOOK_SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(body)))
  const signature = options.signature ?? Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('')
  return {
    raw: body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'linear-signature': signature,
      'linear-delivery': options.deliveryId ?? crypto.randomUUID(),
      'linear-event': String(payload.type ?? 'Issue'),
      'user-agent': 'Linear-Webhook',
    },
  }
}

/** An `Issue` `update` whose issue moved to a state of `stateType` (`completed`, `started`, ...). */
export const issueUpdate = (issueId: string, stateType: string, timestamp = Date.now()) => ({
  action: 'update',
  type: 'Issue',
  organizationId: TRACKER_ORG.id,
  webhookId: 'wh-0001',
  webhookTimestamp: timestamp,
  createdAt: new Date(timestamp).toISOString(),
  url: 'https://linear.example/acme/issue/ENG-1',
  data: { id: issueId, identifier: 'ENG-1', title: 'x', state: { id: 'state-1', name: stateType === 'completed' ? 'Done' : 'In Progress', type: stateType } },
  updatedFrom: { stateId: 'state-0' },
})
