// Classifies IP addresses for the outbound guard (server/lib/outbound.ts), so server-side fetches
// cannot reach the server's own network.
import { isIP } from 'node:net'

type Range = { kind: 'private' | 'always'; network: number; mask: number }

/** An IPv4 address as an unsigned 32-bit number; ranges compare with two integer operations (this runs once per outbound call). */
const toUint32 = (bytes: readonly number[]) => ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0

const v4 = (cidr: string, kind: Range['kind']): Range => {
  const [base, bits] = cidr.split('/') as [string, string]
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0
  return { kind, network: (toUint32(base.split('.').map(Number)) & mask) >>> 0, mask }
}

/** IPv4 ranges no webhook may reach unless the operator allows private targets; `always` ones never. */
const V4_RANGES: Range[] = [
  v4('0.0.0.0/8', 'always'), // "this network"; 0.0.0.0 reaches the local host on Linux
  v4('169.254.169.254/32', 'always'), // cloud metadata
  v4('100.100.100.200/32', 'always'), // cloud metadata (Alibaba)
  v4('224.0.0.0/4', 'always'), // multicast
  v4('240.0.0.0/4', 'always'), // reserved, broadcast
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'private'), // carrier-grade NAT
  v4('127.0.0.0/8', 'private'),
  v4('169.254.0.0/16', 'private'), // link-local
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'private'),
  v4('192.0.2.0/24', 'private'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'private'), // benchmarking
  v4('198.51.100.0/24', 'private'),
  v4('203.0.113.0/24', 'private'),
]

function parseV6(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number)
    text = text.slice(0, -dotted[1]!.length) + `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') as [string, string] : [text, undefined]
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return groups.flatMap((group) => {
    const value = parseInt(group || '0', 16)
    return [value >> 8, value & 0xff]
  })
}

const V6_METADATA = parseV6('fd00:ec2::254') // cloud metadata (AWS)

/** `private`: refused unless the operator allows private targets; `always`: refused even then. */
export type Verdict = 'public' | 'private' | 'always'

function classifyV4(bytes: number[]): Verdict {
  if (bytes.length !== 4) return 'always'
  const value = toUint32(bytes)
  const hit = V4_RANGES.find((range) => ((value & range.mask) >>> 0) === range.network)
  return hit?.kind ?? 'public'
}

function classifyV6(bytes: number[]): Verdict {
  const zeroUpTo = (n: number) => bytes.slice(0, n).every((b) => b === 0)
  if (zeroUpTo(16)) return 'always' // ::
  if (zeroUpTo(15) && bytes[15] === 1) return 'private' // ::1
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96): judge the embedded IPv4.
  if ((zeroUpTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) || zeroUpTo(12)) return classifyV4(bytes.slice(12))
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && bytes.slice(4, 12).every((b) => b === 0)) return classifyV4(bytes.slice(12))
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return classifyV4(bytes.slice(2, 6)) // 6to4
  if (bytes[0] === 0xff) return 'always' // multicast
  if (bytes.every((b, i) => b === V6_METADATA[i])) return 'always'
  if ((bytes[0]! & 0xfe) === 0xfc) return 'private' // unique local fc00::/7
  if (bytes[0] === 0xfe && (bytes[1]! & 0xc0) === 0x80) return 'private' // link-local fe80::/10
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0x0d && bytes[3] === 0xb8) return 'private' // documentation
  if (bytes[0] === 0x01 && zeroUpTo(8)) return 'private' // discard-only 100::/64
  return 'public'
}

export function classifyAddress(address: string): Verdict {
  const family = isIP(address)
  if (family === 4) return classifyV4(address.split('.').map(Number))
  if (family === 6) return classifyV6(parseV6(address))
  return 'always'
}
