// SSRF guard for webhook URLs: at creation and again before every delivery the host is resolved,
// each address is classified, and the delivery connects to the address that was checked (so a DNS
// answer that changes between check and connect cannot redirect it).
import { isIP } from 'node:net'
import { classifyAddress } from '../../lib/address.ts'
import type { Dns } from '../../lib/dns.ts'

export class TargetRefused extends Error {}

export interface CheckedTarget {
  url: URL
  /** The address to connect to: every address the host resolved to passed the check. */
  address: string
}

/** Throws TargetRefused with a reason a person can act on; resolves the host through `dns`. */
export async function checkTarget(raw: string, dns: Dns, allowPrivate: boolean): Promise<CheckedTarget> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new TargetRefused('is not a valid URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRefused('must use http or https')
  if (url.username || url.password) throw new TargetRefused('must not carry credentials')
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    try {
      addresses = await dns.addresses(host)
    } catch (error) {
      throw new TargetRefused(`host ${host} could not be resolved (${(error as { code?: string }).code ?? 'error'})`)
    }
    if (!addresses.length) throw new TargetRefused(`host ${host} does not resolve`)
  }
  // Every address must pass: a host with one public and one private address could be steered to the private one.
  for (const address of addresses) {
    const verdict = classifyAddress(address)
    if (verdict === 'always' || (verdict === 'private' && !allowPrivate)) {
      throw new TargetRefused(`${host} resolves to ${address}, a ${verdict === 'always' ? 'reserved or metadata' : 'loopback, private or link-local'} address`)
    }
  }
  return { url, address: addresses[0]! }
}
