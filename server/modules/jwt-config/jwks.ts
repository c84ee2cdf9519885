import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { createRemoteJWKSet, customFetch, type RemoteJWKSet } from 'jose'

// A JWKS address is chosen by a workspace admin and fetched by the server, so it must not reach the
// server's own network: loopback, private, link-local (cloud metadata) and similar ranges are refused
// unless WEBHOOK_ALLOW_PRIVATE allows private targets (local development and tests).

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
]

const v4ToInt = (ip: string) => ip.split('.').reduce((value, part) => (value << 8) + Number(part), 0) >>> 0

function blockedV4(ip: string) {
  const value = v4ToInt(ip)
  return V4_BLOCKED.some(([base, bits]) => (value >>> (32 - bits)) === (v4ToInt(base) >>> (32 - bits)))
}

/** True for addresses a server-side fetch must not reach: loopback, private, link-local, multicast, reserved. */
export function isPrivateAddress(ip: string): boolean {
  if (isIP(ip) === 4) return blockedV4(ip)
  const lower = ip.toLowerCase().replace(/^\[|\]$/g, '')
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ?? /^64:ff9b::(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped) return blockedV4(mapped[1]!)
  if (lower === '::' || lower === '::1' || /^::ffff:/.test(lower)) return true
  return /^(f[cd]|fe[89ab]|ff)/.test(lower)
}

export class UnsafeUrlError extends Error {}

/** Throws UnsafeUrlError unless `raw` is an https URL (http only with allowPrivate) whose host resolves to public addresses. */
export async function assertFetchable(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UnsafeUrlError('is not a valid URL')
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw new UnsafeUrlError('must use https')
  if (url.username || url.password) throw new UnsafeUrlError('must not carry credentials')
  if (allowPrivate) return url
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((entry) => entry.address)
  if (addresses.length === 0) throw new UnsafeUrlError(`host ${host} does not resolve`)
  if (addresses.some(isPrivateAddress)) throw new UnsafeUrlError(`host ${host} resolves to a private or reserved address`)
  return url
}

const MAX_SETS = 1000
const sets = new Map<string, RemoteJWKSet>()

/** One cached key set per workspace and address (jose refetches after 10 min, or on an unknown `kid` after 30 s). */
export function remoteKeySet(workspaceId: string, jwksUrl: string, allowPrivate: boolean): RemoteJWKSet {
  const cacheKey = `${workspaceId} ${jwksUrl}`
  let set = sets.get(cacheKey)
  if (!set) {
    set = createRemoteJWKSet(new URL(jwksUrl), {
      timeoutDuration: 5000,
      // Checked again at every fetch, since DNS may point elsewhere than when the address was saved.
      [customFetch]: async (url, options) => {
        await assertFetchable(url, allowPrivate)
        return fetch(url, options)
      },
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
