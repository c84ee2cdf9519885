// The OAuth `state` of an install, bound to the admin's session: an HMAC over the session id, the
// workspace, the provider, the issue time and a nonce. Nothing is stored; a state minted for another
// session, workspace or provider, altered, or older than STATE_TTL_SECONDS does not verify. This
// stops an attacker from having a victim's dashboard finish the attacker's install (login CSRF on
// the callback): the victim's session could never produce the attacker's state.
import { randomToken, timingSafeEqual } from '../../lib/secrets.ts'
import type { IntegrationProvider } from '../../db/schema/index.ts'
import { hmacBase64Url } from './signing.ts'

export const STATE_TTL_SECONDS = 10 * 60

interface Binding { sessionId: string; workspaceId: string; provider: IntegrationProvider }

const signed = (binding: Binding, issuedAt: number, nonce: string) =>
  `${binding.sessionId}|${binding.workspaceId}|${binding.provider}|${issuedAt}|${nonce}`

export async function mintState(key: Uint8Array, binding: Binding, now = Date.now()) {
  const issuedAt = Math.floor(now / 1000)
  const nonce = randomToken(12)
  return {
    state: `${issuedAt}.${nonce}.${await hmacBase64Url(key, signed(binding, issuedAt, nonce))}`,
    expiresAt: new Date((issuedAt + STATE_TTL_SECONDS) * 1000),
  }
}

export async function verifyState(key: Uint8Array, binding: Binding, state: string, now = Date.now()): Promise<boolean> {
  const [issued, nonce, mac, extra] = state.split('.')
  if (!issued || !nonce || !mac || extra !== undefined || !/^\d{1,12}$/.test(issued)) return false
  const issuedAt = Number(issued)
  const age = Math.floor(now / 1000) - issuedAt
  if (age < -60 || age > STATE_TTL_SECONDS) return false
  return timingSafeEqual(mac, await hmacBase64Url(key, signed(binding, issuedAt, nonce)))
}
