// `<prefix>_<time><random>`: 9 base36 chars of milliseconds (sortable until year 5188), then 16 base36
// chars from 11 random bytes (> 80 bits). Lowercase [0-9a-z] only, so ids are URL- and slug-safe.

export const ID_PREFIXES = {
  workspace: 'ws', user: 'usr', invitation: 'inv', board: 'brd', post: 'post', comment: 'cmt',
  vote: 'vote', status: 'sts', label: 'lbl', apiKey: 'key', webhook: 'wh', deliveryLog: 'dlv',
  event: 'evt', notificationSubscription: 'nsub', notificationEvent: 'ntf', integration: 'int',
  chatMapping: 'map', endUser: 'eu', oauthClient: 'oac', consentRequest: 'ocr', grantFamily: 'ogf',
  file: 'file', request: 'req', session: 'ses', email: 'eml', statusChange: 'stc',
} as const

export type IdKind = keyof typeof ID_PREFIXES

const RANDOM_CHARS = 16

function randomBase36(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(11))
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  return value.toString(36).padStart(length, '0').slice(-length)
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
