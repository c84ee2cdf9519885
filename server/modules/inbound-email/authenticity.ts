import type { Email } from 'postal-mime'
import type { AppContext } from '../../context.ts'
import { createRecordResolver } from '../../lib/dns.ts'

/** How a sender was proven to own the From address's domain, or null when nothing proves it. */
export type SenderProof = 'dkim' | 'authentication_results' | null

const bareDomain = (domain: string) => domain.trim().toLowerCase().replace(/\.$/, '')
const domainOf = (address: string) => bareDomain(address.slice(address.lastIndexOf('@') + 1))

/** RFC 8601 text without its comments (`(...)`, not nested deeper than the header needs). */
const withoutComments = (value: string) => value.replace(/\([^()]*\)/g, ' ').replace(/\s+/g, ' ').trim()

/**
 * The verdict of the topmost `Authentication-Results` header whose authserv-id the operator trusts
 * (INBOUND_TRUSTED_AUTHSERV_IDS): `dmarc=pass` for the From domain, or `dkim=pass` with `header.d` the
 * From domain itself. Only the topmost one: the trusted server adds its header above whatever the
 * sender wrote, and RFC 8601 §5 has it remove forged ones carrying its own id.
 */
function trustedResultsPass(email: Email, domain: string, trusted: string[]) {
  if (!trusted.length) return false
  for (const header of email.headers) {
    if (header.key !== 'authentication-results') continue
    const [authserv = '', ...results] = withoutComments(header.value).split(';')
    const id = authserv.trim().split(' ')[0]!.toLowerCase()
    if (!trusted.includes(id)) continue
    return results.some((result) => {
      const [method, ...properties] = result.trim().split(' ')
      const values = new Map(properties.map((property) => [property.slice(0, property.indexOf('=')).toLowerCase(), bareDomain(property.slice(property.indexOf('=') + 1).replace(/^"|"$/g, ''))]))
      if (method?.toLowerCase() === 'dmarc=pass') return values.get('header.from') === domain
      if (method?.toLowerCase() === 'dkim=pass') return values.get('header.d') === domain
      return false
    })
  }
  return false
}

/**
 * Whether a valid DKIM signature aligns with the From domain: signed by that very domain, or (when the
 * domain publishes a DMARC record) aligned as its DMARC policy defines it (relaxed: the same
 * organizational domain). Keys and policies are looked up through DNS_RESOLVER.
 */
async function dkimAligned(raw: Uint8Array, address: string, dnsServer: string | undefined) {
  // Loaded on the first message: most processes never receive one.
  const [{ dkimVerify }, { evaluateDmarc }] = await Promise.all([import('mailauth/lib/dkim/verify'), import('mailauth/lib/dmarc')])
  const resolver = createRecordResolver(dnsServer)
  const verified = await dkimVerify(Buffer.from(raw), { resolver })
  const domain = domainOf(address)
  const signers = (verified.results ?? []).filter((result) => result.status?.result === 'pass' && result.signingDomain).map((result) => bareDomain(result.signingDomain!))
  if (!signers.length) return false
  // The From the signatures were checked against must be the one we read the sender from.
  const fromAddresses = [verified.headerFrom ?? []].flat().map((from) => String(from).toLowerCase())
  if (!fromAddresses.includes(address)) return false
  if (signers.includes(domain)) return true
  const dmarc = await evaluateDmarc({ headerFrom: verified.headerFrom, fromFields: verified.fromFields, spfDomains: [], dkimDomains: signers.map((signer) => ({ domain: signer })), resolver })
  return Boolean(dmarc.response && dmarc.response.alignment?.dkim?.result)
}

/**
 * Whether the message is authenticated for its From domain. Until it is, the From address is only a
 * claim: the sender writes as an unverified identity (docs/security.md#inbound-e-mail).
 */
export async function senderProof(ctx: AppContext, raw: Uint8Array, email: Email, address: string): Promise<SenderProof> {
  const domain = domainOf(address)
  if (trustedResultsPass(email, domain, ctx.config.inboundTrustedAuthservIds)) return 'authentication_results'
  try {
    return (await dkimAligned(raw, address, ctx.config.dnsResolver)) ? 'dkim' : null
  } catch (error) {
    // A DNS failure proves nothing: the message is still accepted, as unverified.
    ctx.log.warn('inbound e-mail DKIM check failed', { error: (error as Error).message })
    return null
  }
}
