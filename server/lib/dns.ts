import { lookup, Resolver } from 'node:dns/promises'

export interface Dns {
  /** Every A and AAAA address of a host name. */
  addresses(host: string): Promise<string[]>
  txt(name: string): Promise<string[]>
  cname(name: string): Promise<string[]>
}

const NO_ANSWER = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NOTFOUND', 'NODATA'])

/** An empty answer for "no such name / no such record"; other failures (timeouts) still throw. */
async function orEmpty<T>(query: Promise<T[]>): Promise<T[]> {
  try {
    return await query
  } catch (error) {
    if (NO_ANSWER.has((error as { code?: string }).code ?? '')) return []
    throw error
  }
}

/**
 * DNS through the server named by DNS_RESOLVER (tests run a local one), or the system's: then host
 * addresses come from getaddrinfo, so /etc/hosts applies as it would for any client on the machine.
 */
export function createDns(server: string | undefined, timeoutMs = 3000): Dns {
  // A resolver per question: each one keeps its own cache, and a cached "not found" would hide a record
  // that was just published (custom-domain checks) or an answer that just changed (webhook targets).
  const resolver = () => {
    const fresh = new Resolver({ timeout: timeoutMs, tries: 2 })
    if (server) fresh.setServers([server])
    return fresh
  }
  return {
    async addresses(host) {
      if (!server) return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address)
      const ask = resolver()
      const [v4, v6] = await Promise.all([orEmpty(ask.resolve4(host)), orEmpty(ask.resolve6(host))])
      return [...v4, ...v6]
    },
    async txt(name) {
      return (await orEmpty(resolver().resolveTxt(name))).map((chunks) => chunks.join(''))
    },
    cname: (name) => orEmpty(resolver().resolveCname(name)),
  }
}
