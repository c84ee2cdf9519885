import { createRemoteJWKSet, customFetch, type RemoteJWKSet } from 'jose'
import type { Outbound } from '../../lib/outbound.ts'

// A JWKS address is chosen by a workspace admin and fetched by the server, so every fetch goes through
// the outbound guard: https only, no private addresses unless WEBHOOK_ALLOW_PRIVATE, never metadata.

/** A key set is a few keys; anything larger is cut, fails to parse and is refused. */
export const JWKS_MAX_BYTES = 64 * 1024

const MAX_SETS = 1000
const sets = new Map<string, RemoteJWKSet>()

/** One cached key set per workspace and address (jose refetches after 10 min, or on an unknown `kid` after 30 s). */
export function remoteKeySet(workspaceId: string, jwksUrl: string, outbound: Outbound): RemoteJWKSet {
  const cacheKey = `${workspaceId} ${jwksUrl}`
  let set = sets.get(cacheKey)
  if (!set) {
    set = createRemoteJWKSet(new URL(jwksUrl), {
      timeoutDuration: 5000,
      // Checked again at every fetch, since DNS may point elsewhere than when the address was saved.
      [customFetch]: async (url, options) => (await outbound.fetch(url, { headers: options.headers, signal: options.signal, httpsOnly: true, maxBytes: JWKS_MAX_BYTES })).toResponse(),
    })
    if (sets.size >= MAX_SETS) sets.delete(sets.keys().next().value!)
    sets.set(cacheKey, set)
  }
  return set
}

/** Drops the cached sets of a workspace when its configuration changes. */
export function forgetKeySets(workspaceId: string) {
  for (const key of sets.keys()) if (key.startsWith(`${workspaceId} `)) sets.delete(key)
}
