// A Slack-compatible Web API client: form-encoded POSTs to `{CHAT_API_BASE}/{method}` answering
// `{ok, error}`. Plain fetch, so the base URL can be any compatible server the operator names.
import { ProviderError, providerFetch, type ProviderApi } from './provider-http.ts'

/** Errors that mean the token will never work again: the integration goes to `error`, no retries. */
export const REVOKED_ERRORS = new Set(['invalid_auth', 'token_revoked', 'account_inactive', 'not_authed', 'token_expired'])

export interface ChatTokenGrant {
  accessToken: string
  refreshToken: string | null
  /** Seconds; present when the workspace has token rotation on. */
  expiresIn: number | null
  scope: string | null
  teamId: string | null
  teamName: string | null
}

export interface ChatChannel { id: string; name: string; is_private: boolean; is_member: boolean }

export async function callChat(api: ProviderApi, method: string, params: Record<string, string | undefined>, token?: string): Promise<any> {
  const form = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined) form.set(name, value)
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (token) headers.authorization = `Bearer ${token}`
  const { json } = await providerFetch(api, `/${method}`, { method: 'POST', headers, body: form.toString() })
  if (!json || typeof json !== 'object') throw new ProviderError(`${method}: empty answer`)
  if (json.ok !== true) throw new ProviderError(String(json.error ?? 'unknown_error'))
  return json
}

function toGrant(json: any): ChatTokenGrant {
  if (typeof json.access_token !== 'string') throw new ProviderError('oauth.v2.access: no access_token in the answer')
  return {
    accessToken: json.access_token,
    refreshToken: typeof json.refresh_token === 'string' ? json.refresh_token : null,
    expiresIn: typeof json.expires_in === 'number' ? json.expires_in : null,
    scope: typeof json.scope === 'string' ? json.scope : null,
    teamId: json.team?.id ?? null,
    teamName: json.team?.name ?? null,
  }
}

export interface ChatClientCredentials extends ProviderApi { clientId?: string; clientSecret?: string }

export async function exchangeChatCode(app: ChatClientCredentials, code: string, redirectUri?: string) {
  return toGrant(await callChat(app, 'oauth.v2.access', { code, redirect_uri: redirectUri, client_id: app.clientId, client_secret: app.clientSecret }))
}

/** Rotating tokens: the refresh token is single-use, the answer carries the next pair. */
export async function refreshChatToken(app: ChatClientCredentials, refreshToken: string) {
  return toGrant(await callChat(app, 'oauth.v2.access', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: app.clientId, client_secret: app.clientSecret }))
}

const MAX_PAGES = 50

/** Every channel the bot can see, following `response_metadata.next_cursor`. */
export async function listChatChannels(api: ProviderApi, token: string): Promise<ChatChannel[]> {
  const channels: ChatChannel[] = []
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const json = await callChat(api, 'conversations.list', { types: 'public_channel,private_channel', exclude_archived: 'true', limit: '200', cursor }, token)
    for (const channel of json.channels ?? []) {
      channels.push({ id: String(channel.id), name: String(channel.name ?? channel.id), is_private: channel.is_private === true, is_member: channel.is_member === true })
    }
    cursor = json.response_metadata?.next_cursor || undefined
    if (!cursor) break
  }
  return channels
}

/** Posts a message; a bot not yet in a public channel joins it and tries once more. */
export async function postChatMessage(api: ProviderApi, token: string, channel: string, text: string, blocks: unknown[]) {
  const params = { channel, text, blocks: JSON.stringify(blocks), unfurl_links: 'false' }
  try {
    return await callChat(api, 'chat.postMessage', params, token)
  } catch (error) {
    if (!(error instanceof ProviderError) || error.detail !== 'not_in_channel') throw error
    await callChat(api, 'conversations.join', { channel }, token)
    return callChat(api, 'chat.postMessage', params, token)
  }
}
