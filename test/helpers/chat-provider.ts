// A Slack-compatible Web API on a random loopback port, speaking the documented wire format:
// form-encoded POSTs to /api/{method}, bearer tokens, answers `{ok: true, ...}` or `{ok: false, error}`
// with HTTP 200, and 429 with Retry-After when rate limited.

export interface PostedMessage { channel: string; text: string; blocks: any[]; token: string; at: number }

export interface FakeChatOptions {
  clientId?: string
  clientSecret?: string
}

export const CHAT_CLIENT = { id: 'chat-client-id', secret: 'chat-client-secret' }

export function startFakeChat(options: FakeChatOptions = {}) {
  const clientId = options.clientId ?? CHAT_CLIENT.id
  const clientSecret = options.clientSecret ?? CHAT_CLIENT.secret
  const channels = [
    { id: 'C0000FEED', name: 'feedback', is_private: false },
    { id: 'C0000ROAD', name: 'roadmap', is_private: false },
    { id: 'C0000PRIV', name: 'leadership', is_private: true },
  ]
  const state = {
    /** Valid access token → whether it is still valid. */
    tokens: new Set<string>(),
    /** Refresh token → usable once. */
    refreshTokens: new Set<string>(),
    /** Codes the "authorize page" handed out. */
    codes: new Set<string>(['good-code']),
    /** When set, new grants rotate: they expire after this many seconds and carry a refresh token. */
    rotateEvery: null as number | null,
    members: new Set<string>(['C0000ROAD']),
    messages: [] as PostedMessage[],
    calls: [] as { method: string; params: URLSearchParams; token: string | null }[],
    /** The next N chat.postMessage calls answer HTTP 503. */
    outages: 0,
    /** Every call with a token answers this error (`token_revoked`, `internal_error`, ...). */
    failWith: null as string | null,
    issued: 0,
    /** The query of every visit to the authorize page. */
    authorizations: [] as Record<string, string>[],
  }

  function grant() {
    const n = ++state.issued
    const access = `xoxb-fake-${n}-${crypto.randomUUID()}`
    state.tokens.add(access)
    const body: Record<string, unknown> = {
      ok: true, access_token: access, token_type: 'bot', scope: 'chat:write,channels:read,channels:join,groups:read',
      bot_user_id: 'U0BOT', app_id: 'A0APP', team: { id: 'T0001', name: 'Acme & Co' }, enterprise: null,
    }
    if (state.rotateEvery !== null) {
      const refresh = `xoxe-1-refresh-${n}-${crypto.randomUUID()}`
      state.refreshTokens.add(refresh)
      body.access_token = access.replace('xoxb', 'xoxe.xoxb')
      state.tokens.delete(access)
      state.tokens.add(body.access_token as string)
      body.expires_in = state.rotateEvery
      body.refresh_token = refresh
    }
    return body
  }

  const ok = (body: Record<string, unknown> = {}) => Response.json({ ok: true, ...body })
  const fail = (error: string) => Response.json({ ok: false, error })

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      // The "authorize page": the admin approves at once and is sent back with a fresh code and the state it brought.
      if (request.method === 'GET' && url.pathname === '/oauth/v2/authorize') {
        const redirect = url.searchParams.get('redirect_uri')
        if (url.searchParams.get('client_id') !== clientId || !redirect) return new Response('bad client or redirect_uri', { status: 400 })
        state.authorizations.push(Object.fromEntries(url.searchParams))
        const code = `code-${crypto.randomUUID()}`
        state.codes.add(code)
        const back = new URL(redirect)
        back.searchParams.set('code', code)
        back.searchParams.set('state', url.searchParams.get('state') ?? '')
        return Response.redirect(back.toString(), 302)
      }
      const method = url.pathname.replace(/^\/api\//, '')
      if (request.method !== 'POST' || !request.headers.get('content-type')?.startsWith('application/x-www-form-urlencoded')) return new Response('bad request', { status: 400 })
      const params = new URLSearchParams(await request.text())
      const token = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? null
      state.calls.push({ method, params, token })

      if (method === 'oauth.v2.access') {
        if (params.get('client_id') !== clientId || params.get('client_secret') !== clientSecret) return fail('invalid_client_id')
        if (params.get('grant_type') === 'refresh_token') {
          const refresh = params.get('refresh_token') ?? ''
          if (!state.refreshTokens.delete(refresh)) return fail('invalid_refresh_token')
          return ok(grant())
        }
        const code = params.get('code') ?? ''
        if (!state.codes.delete(code)) return fail('invalid_code')
        return ok(grant())
      }

      if (!token) return fail('not_authed')
      if (state.failWith) return fail(state.failWith)
      if (!state.tokens.has(token)) return fail('invalid_auth')

      switch (method) {
        case 'conversations.list': {
          const start = Number(params.get('cursor')?.replace('page-', '') || 0)
          const size = 2
          const page = channels.slice(start, start + size).map((channel) => ({ ...channel, is_member: state.members.has(channel.id), is_archived: false }))
          const next = start + size < channels.length ? `page-${start + size}` : ''
          return ok({ channels: page, response_metadata: { next_cursor: next } })
        }
        case 'conversations.join': {
          const channel = channels.find((c) => c.id === params.get('channel'))
          if (!channel) return fail('channel_not_found')
          if (channel.is_private) return fail('method_not_supported_for_channel_type')
          state.members.add(channel.id)
          return ok({ channel: { id: channel.id, name: channel.name } })
        }
        case 'chat.postMessage': {
          if (state.outages > 0) {
            state.outages--
            return new Response('upstream unavailable', { status: 503 })
          }
          const channelId = params.get('channel') ?? ''
          if (!channels.some((c) => c.id === channelId)) return fail('channel_not_found')
          if (!state.members.has(channelId)) return fail('not_in_channel')
          const text = params.get('text')
          if (!text) return fail('no_text')
          state.messages.push({ channel: channelId, text, blocks: JSON.parse(params.get('blocks') ?? '[]'), token, at: Date.now() })
          return ok({ channel: channelId, ts: `${Date.now() / 1000}` })
        }
        default:
          return fail('unknown_method')
      }
    },
  })

  return {
    base: `http://127.0.0.1:${server.port}/api`,
    authorizeUrl: `http://127.0.0.1:${server.port}/oauth/v2/authorize`,
    state,
    /** Resolves once `count` messages reached `channel`. */
    async waitForMessages(channel: string, count = 1, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const hits = state.messages.filter((message) => message.channel === channel)
        if (hits.length >= count) return hits
        if (Date.now() > deadline) throw new Error(`expected ${count} message(s) in ${channel} within ${timeoutMs} ms, got ${hits.length}`)
        await Bun.sleep(10)
      }
    },
    stop: () => server.stop(true),
  }
}
