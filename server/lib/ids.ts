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

/** The base36 string one greater, or undefined past `zzz…` (1 in 36^16 for a random start). */
function incrementBase36(value: string): string | undefined {
  for (let i = value.length - 1; i >= 0; i--) {
    const digit = BASE36.indexOf(value[i]!)
    if (digit < 35) return value.slice(0, i) + BASE36[digit + 1] + '0'.repeat(value.length - 1 - i)
  }
  return undefined
}

// The last event id this thread minted. Events are dispatched and listed in id order, and one request
// often writes several in the same millisecond (a create's `post.created`, then its author's
// `vote.created`): with a random suffix each, those sorted at random. Within a millisecond an event id's
// suffix counts up from the previous one instead, so this thread's events sort in the order they were
// minted. (Event ids are not secrets: a receiver that sees one learns nothing it could call.)
let lastEvent = { time: 0, suffix: '' }

function newEventId(): string {
  const now = Date.now()
  if (now > lastEvent.time) lastEvent = { time: now, suffix: randomBase36(RANDOM_CHARS) }
  else {
    // The same millisecond, or a clock that stepped back: the last time kept, the suffix one up.
    const suffix = incrementBase36(lastEvent.suffix)
    lastEvent = suffix ? { time: lastEvent.time, suffix } : { time: lastEvent.time + 1, suffix: randomBase36(RANDOM_CHARS) }
  }
  return `${ID_PREFIXES.event}_${lastEvent.time.toString(36).padStart(9, '0')}${lastEvent.suffix}`
}

export function newId(kind: IdKind): string {
  if (kind === 'event') return newEventId()
  const time = Date.now().toString(36).padStart(9, '0')
  return `${ID_PREFIXES[kind]}_${time}${randomBase36(RANDOM_CHARS)}`
}

/** True when `value` looks like an id of this kind; used to turn malformed ids into 404s without a query. */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = ID_PREFIXES[kind]
  return value.length === prefix.length + 1 + 9 + RANDOM_CHARS && value.startsWith(`${prefix}_`) && /^[0-9a-z]+$/.test(value.slice(prefix.length + 1))
}
