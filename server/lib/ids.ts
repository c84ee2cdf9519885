// `<prefix>_<time><random>`: 9 base36 chars of milliseconds (sortable until year 5188), then 16 uniformly
// random base36 chars (82.7 bits). Lowercase [0-9a-z] only, so ids are URL- and slug-safe.

export const ID_PREFIXES = {
  workspace: 'ws', user: 'usr', invitation: 'inv', board: 'brd', post: 'post', comment: 'cmt',
  vote: 'vote', status: 'sts', label: 'lbl', apiKey: 'key', webhook: 'wh', deliveryLog: 'dlv',
  event: 'evt', notificationSubscription: 'nsub', notificationEvent: 'ntf', integration: 'int',
  chatMapping: 'map', endUser: 'eu', oauthClient: 'oac', consentRequest: 'ocr', grantFamily: 'ogf',
  file: 'file', request: 'req', session: 'ses', email: 'eml', statusChange: 'stc', contactMessage: 'ctm', visitorConfirmation: 'vcf',
  changelogEntry: 'chg', savedView: 'view', company: 'co', scoreChange: 'scc', duplicateSuggestion: 'dup', import: 'imp', moderationCheck: 'mck', moderationBlock: 'blk',
} as const

export type IdKind = keyof typeof ID_PREFIXES

const RANDOM_CHARS = 16

const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz'

// Random bytes are drawn from the CSPRNG a few kilobytes at a time and used once each: filling a fresh
// array for every id cost 0.6 µs an id (one per request for its request id, several per write), 0.2 pooled.
const randomPool = new Uint8Array(4096)
let poolAt = randomPool.length

/** Rejection sampling (bytes ≥ 252 are dropped) keeps every character uniform. */
function randomBase36(length: number): string {
  let out = ''
  while (out.length < length) {
    if (poolAt === randomPool.length) {
      crypto.getRandomValues(randomPool)
      poolAt = 0
    }
    const byte = randomPool[poolAt++]!
    if (byte < 252) out += BASE36[byte % 36]
  }
  return out
}

export function newId(kind: IdKind): string {
  const time = Date.now().toString(36).padStart(9, '0')
  return `${ID_PREFIXES[kind]}_${time}${randomBase36(RANDOM_CHARS)}`
}

/** True when `value` looks like an id of this kind; used to turn malformed ids into 404s without a query. */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = ID_PREFIXES[kind]
  return value.length === prefix.length + 1 + 9 + RANDOM_CHARS && value.startsWith(`${prefix}_`) && /^[0-9a-z]+$/.test(value.slice(prefix.length + 1))
}
