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
  // Records (custom-domain checks) get a resolver per question: each keeps its own cache, and a cached
  // "not found" would hide a record that was just published. Each is held until its answers arrive.
  const inUse = new Set<Resolver>()
  async function ask<T>(query: (resolver: Resolver) => Promise<T>): Promise<T> {
    const resolver = new Resolver({ timeout: timeoutMs, tries: 2 })
    if (server) resolver.setServers([server])
    inUse.add(resolver)
    try {
      return await query(resolver)
    } finally {
      inUse.delete(resolver)
    }
  }
  // Host addresses (webhook targets) go through one long-lived resolver: a per-question one can leave
  // its queries unanswered inside a worker thread, and a cached address is still the one that gets checked.
  const hosts = new Resolver({ timeout: timeoutMs, tries: 2 })
  if (server) hosts.setServers([server])
  return {
    async addresses(host) {
      if (!server) return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address)
      const [v4, v6] = await Promise.all([orEmpty(hosts.resolve4(host)), orEmpty(hosts.resolve6(host))])
      return [...v4, ...v6]
    },
    async txt(name) {
      return (await ask((resolver) => orEmpty(resolver.resolveTxt(name)))).map((chunks) => chunks.join(''))
    },
    cname: (name) => ask((resolver) => orEmpty(resolver.resolveCname(name))),
  }
}

/**
 * A `dns.resolve`-shaped lookup through DNS_RESOLVER (or the system's servers), for libraries that take
 * one (mailauth's DKIM and DMARC checks). A fresh resolver per question, as for records above; "no such
 * record" errors are thrown as node reports them, which those libraries expect.
 */
export function createRecordResolver(server: string | undefined, timeoutMs = 3000) {
  return (name: string, type: string): Promise<string[] | string[][]> => {
    const resolver = new Resolver({ timeout: timeoutMs, tries: 2 })
    if (server) resolver.setServers([server])
    return resolver.resolve(name, type) as Promise<string[] | string[][]>
  }
}
