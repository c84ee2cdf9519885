// The one way the server calls a URL that a user or a provider chose (webhook targets, JWKS addresses,
// client-metadata documents, chat and tracker APIs): the host is resolved through the configured
// resolver (DNS_RESOLVER), every address is classified, and the request connects to the address that
// was checked, so a DNS answer that changes between check and connect cannot steer it elsewhere.
// Redirects are never followed (each hop would need the same check) and answers are cut at a size
// and a time limit, so a hostile server can neither hold a worker nor fill its memory.
import { isIP } from 'node:net'
import { classifyAddress } from './address.ts'
import type { Config } from '../config.ts'
import { createDns, type Dns } from './dns.ts'

/** A URL the guard will not call; the message completes "The URL …" and says what to change. */
export class OutboundRefused extends Error {}

export interface OutboundPolicy {
  dns: Dns
  /** WEBHOOK_ALLOW_PRIVATE: user- and provider-chosen URLs may reach loopback and private addresses (development, tests). */
  allowPrivate: boolean
  /** OPERATOR_URLS_ALLOW_PRIVATE: operator-configured base URLs may (an on-premises tracker, say). */
  operatorAllowPrivate?: boolean
}

export interface CheckOptions {
  /**
   * The call goes to an operator-configured base URL (CHAT_API_BASE, …) rather than one a user chose:
   * the URL must lie under this base (same origin, path below it), and private addresses are allowed
   * when either WEBHOOK_ALLOW_PRIVATE or OPERATOR_URLS_ALLOW_PRIVATE says so.
   */
  operatorBase?: string
  /** Refuse plain http, unless private addresses are allowed (local development serves http). */
  httpsOnly?: boolean
}

export interface CheckedTarget {
  url: URL
  /** The address to connect to: every address the host resolved to passed the check. */
  address: string
}

export interface OutboundRequest extends CheckOptions {
  method?: string
  headers?: HeadersInit
  body?: string | Uint8Array<ArrayBuffer>
  /** For the whole exchange, the answer's body included. Default 10 s. */
  timeoutMs?: number
  /** The answer's body is cut after this many bytes (`truncated` says so). Default 1 MiB. */
  maxBytes?: number
  signal?: AbortSignal
}

export interface OutboundResponse {
  /** 3xx answers are returned as they are: redirects are never followed. */
  status: number
  headers: Headers
  body: Uint8Array<ArrayBuffer>
  /** The body went past maxBytes and was cut there. */
  truncated: boolean
  text(): string
  /** A web Response of the (possibly cut) body, for libraries that take one (jose's customFetch). */
  toResponse(): Response
}

export interface Outbound {
  /** Throws OutboundRefused unless the URL may be called now; for checking a URL when it is saved. */
  check(url: string | URL, options?: CheckOptions): Promise<CheckedTarget>
  /** Checks, then calls the checked address. Throws OutboundRefused, or the network error (a TimeoutError on the limit). */
  fetch(url: string | URL, request?: OutboundRequest): Promise<OutboundResponse>
}

export const DEFAULT_TIMEOUT_MS = 10_000
export const DEFAULT_MAX_BYTES = 1024 * 1024

export function createOutbound(policy: OutboundPolicy): Outbound {
  async function check(raw: string | URL, options: CheckOptions = {}): Promise<CheckedTarget> {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw new OutboundRefused('is not a valid URL')
    }
    const operator = options.operatorBase !== undefined
    const allowPrivate = policy.allowPrivate || (operator && policy.operatorAllowPrivate === true)
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundRefused('must use http or https')
    if (options.httpsOnly && url.protocol !== 'https:' && !allowPrivate) throw new OutboundRefused('must use https')
    if (url.username || url.password) throw new OutboundRefused('must not carry credentials')
    if (operator && !underBase(url, new URL(options.operatorBase!))) throw new OutboundRefused(`must lie under the configured ${options.operatorBase}`)
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    let addresses: string[]
    if (isIP(host)) addresses = [host]
    else {
      try {
        addresses = await policy.dns.addresses(host)
      } catch (error) {
        throw new OutboundRefused(`host ${host} could not be resolved (${(error as { code?: string }).code ?? 'error'})`)
      }
      if (!addresses.length) throw new OutboundRefused(`host ${host} does not resolve`)
    }
    // Every address must pass: a host with one public and one private address could be steered to the private one.
    for (const address of addresses) {
      const verdict = classifyAddress(address)
      if (verdict === 'always' || (verdict === 'private' && !allowPrivate)) {
        throw new OutboundRefused(`${host} resolves to ${address}, a ${verdict === 'always' ? 'reserved or metadata' : 'loopback, private or link-local'} address`)
      }
    }
    return { url, address: addresses[0]! }
  }

  return {
    check,
    async fetch(raw, request = {}) {
      const target = await check(raw, request)
      const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS
      const signal = request.signal ? AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs)
      // Connect to the address that was checked; the name still goes in Host and in TLS (SNI and certificate check).
      const connectTo = new URL(target.url)
      connectTo.hostname = target.address.includes(':') ? `[${target.address}]` : target.address
      const headers = withHost(request.headers, target.url.host)
      const response = await fetch(connectTo, {
        method: request.method ?? 'GET',
        headers,
        body: request.body,
        redirect: 'manual',
        signal,
        tls: { serverName: target.url.hostname.replace(/^\[(.*)\]$/, '$1') },
      })
      const { body, truncated } = await readCapped(response, request.maxBytes ?? DEFAULT_MAX_BYTES, signal)
      return {
        status: response.status,
        headers: response.headers,
        body,
        truncated,
        text: () => new TextDecoder().decode(body),
        toResponse: () => new Response(response.status === 204 || response.status === 304 ? null : body, { status: response.status, headers: withoutLength(response.headers) }),
      }
    },
  }
}

function underBase(url: URL, base: URL): boolean {
  if (url.origin !== base.origin) return false
  const prefix = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`
  return url.pathname === base.pathname || url.pathname.startsWith(prefix)
}

/** The body up to `limit` bytes; the rest is never read. */
async function readCapped(response: Response, limit: number, signal: AbortSignal): Promise<{ body: Uint8Array<ArrayBuffer>; truncated: boolean }> {
  // A body announced as small enough is read whole (the common, cheap case); the timeout still aborts it.
  // `response.body` is not touched on this path: asking for it builds a stream.
  const announced = Number(response.headers.get('content-length') ?? Number.NaN)
  if (!response.headers.has('content-encoding') && Number.isInteger(announced) && announced <= limit) {
    const body = new Uint8Array(await response.arrayBuffer())
    if (body.length <= limit) return { body, truncated: false }
    return { body: body.slice(0, limit), truncated: true }
  }
  if (!response.body) return { body: new Uint8Array(0), truncated: false }
  const reader = response.body.getReader()
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason)
    signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
  aborted.catch(() => {})
  const chunks: Uint8Array[] = []
  let size = 0
  let done = false
  try {
    while (size <= limit) {
      const next = await Promise.race([reader.read(), aborted])
      if (next.done) {
        done = true
        break
      }
      chunks.push(next.value)
      size += next.value.length
    }
  } finally {
    // Only an unfinished body is cancelled, and not awaited: a cancel on a finished stream can stay pending.
    if (!done) void reader.cancel().catch(() => {})
  }
  const all = new Uint8Array(Buffer.concat(chunks))
  return size > limit ? { body: all.slice(0, limit), truncated: true } : { body: all, truncated: false }
}

/** The request's headers with `host` set; a plain record stays one (no Headers object built twice per call). */
function withHost(init: HeadersInit | undefined, host: string): HeadersInit {
  if (init && !(init instanceof Headers) && !Array.isArray(init)) {
    const headers: Record<string, string> = {}
    for (const name in init) if (name.toLowerCase() !== 'host') headers[name] = init[name]!
    headers.host = host
    return headers
  }
  const headers = new Headers(init)
  headers.set('host', host)
  return headers
}

/** The answer's headers without those that described the body as it came over the wire. */
function withoutLength(headers: Headers): Headers {
  const copy = new Headers(headers)
  for (const name of ['content-length', 'content-encoding', 'transfer-encoding']) copy.delete(name)
  return copy
}

/** The outbound guard a process uses, from its configuration (the app and the background worker alike). */
export const outboundFor = (config: Config): Outbound =>
  createOutbound({ dns: createDns(config.dnsResolver), allowPrivate: config.webhookAllowPrivate, operatorAllowPrivate: config.operatorUrlsAllowPrivate })
