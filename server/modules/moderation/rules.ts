// Every rule of the spam score, in one place (docs/moderation.md repeats this table for the team).
// The score is a plain sum of the rules' points over one write and what the same writer did just before:
// deterministic (no model, no randomness, no clock but the burst windows), so the same write in the same
// history always scores the same and a held write can always say why. Only anonymous and unverified
// end-user writes are scored; identified (JWT) and confirmed end users, members and API keys never are.

/** A write is held under `settings.moderation = "suspicious"` from this many points. */
export const HOLD_AT = 5
/** The window bursts are counted in, and the one repeated text is looked for in. */
export const BURST_WINDOW_MINUTES = 10
export const REPEAT_WINDOW_HOURS = 24

/** What the score sees of one write: its text, its writer's address, and counts of the writer's recent writes. */
export interface WriteSignals {
  /** Title and body (a comment: its body). */
  text: string
  /** The writer's address and its domain, lower-cased; null when unknown. */
  email: string | null
  domain: string | null
  /** Earlier scored writes in this workspace within BURST_WINDOW_MINUTES: from the same IP, address, and domain. */
  recentByIp: number
  recentByEmail: number
  recentByDomain: number
  /** Earlier scored writes in this workspace within REPEAT_WINDOW_HOURS with the same normalised text. */
  sameTextRecent: number
}

export interface Rule {
  id: string
  /** Why the rule exists and what it gives: shown in docs/moderation.md and in the held queue's reasons. */
  explain: string
  points(signals: WriteSignals): number
}

const URL_PATTERN = /\b(?:https?:\/\/|www\.)[^\s<>"')\]]+/gi
const SHORTENERS = ['bit.ly', 'tinyurl.com', 't.co', 'goo.gl', 'ow.ly', 'is.gd', 'cutt.ly', 'rebrand.ly', 'shorturl.at', 'rb.gy', 'tiny.cc']
const SPAM_TLDS = ['xyz', 'top', 'click', 'loan', 'win', 'bid', 'icu', 'buzz', 'casino', 'work', 'rest', 'monster', 'cam']
/** Words of the classic spam trades; feedback about a product almost never needs them. */
const BAD_PATTERNS = [
  /\bcasino\b/i, /\b(?:viagra|cialis|levitra)\b/i, /\bpayday\s+loans?\b/i, /\bforex\b/i, /\bescorts?\b/i, /\bporn\w*/i,
  /\b(?:crypto|bitcoin|btc)\s+(?:investment|profits?|trading\s+signals?)\b/i, /\bseo\s+(?:services?|agency|experts?)\b/i, /\bbacklinks?\b/i,
  /\b(?:make|earn)\s+\$?\d*\s*(?:money|cash)\s+(?:fast|online|from\s+home)\b/i, /\bwork\s+from\s+home\b/i, /\bwhats\s?app\s*[:+]?\s*\+?\d{6,}/i,
  /\bbuy\s+(?:followers|likes|reviews)\b/i, /\bcheap\s+(?:meds|pills|rolex)\b/i,
]
/** Throw-away mailboxes: an address nobody reads cannot be answered, so it counts against the write. */
const DISPOSABLE_DOMAINS = ['mailinator.com', 'guerrillamail.com', '10minutemail.com', 'tempmail.com', 'temp-mail.org', 'yopmail.com', 'trashmail.com', 'sharklasers.com', 'getnada.com', 'dispostable.com']
/** Shared mail providers: many unrelated people write from them, so a burst from the domain says nothing. */
const SHARED_MAIL_DOMAINS = ['gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'yahoo.com', 'icloud.com', 'me.com', 'proton.me', 'protonmail.com', 'gmx.de', 'gmx.net', 'web.de', 'aol.com', 'mail.ru', 'yandex.ru', 'qq.com']

const hostOf = (url: string) => url.replace(/^https?:\/\//i, '').replace(/^www\./i, '').split(/[/?#:]/)[0]!.toLowerCase()
export const linksIn = (text: string) => text.match(URL_PATTERN) ?? []

export const RULES: Rule[] = [
  {
    id: 'links',
    explain: 'Links: 1 point for one, 3 for two or more. Feedback seldom needs more than one link; link spam is the bulk of board spam.',
    points: ({ text }) => {
      const n = linksIn(text).length
      return n === 0 ? 0 : n === 1 ? 1 : 3
    },
  },
  {
    id: 'suspicious_link',
    explain: 'A link through a URL shortener or to a top-level domain spam favours (.xyz, .top, .click, ...): 2 points. Shorteners hide where a link goes.',
    points: ({ text }) => (linksIn(text).some((url) => {
      const host = hostOf(url)
      return SHORTENERS.includes(host) || SPAM_TLDS.includes(host.split('.').pop() ?? '')
    }) ? 2 : 0),
  },
  {
    id: 'markup_links',
    explain: 'HTML or BBCode links (`<a href`, `[url=`): 3 points. The widget and portal take plain text; pasted markup comes from bots written for forums.',
    points: ({ text }) => (/<a\s+href|\[url[=\]]/i.test(text) ? 3 : 0),
  },
  {
    id: 'known_bad_pattern',
    explain: 'Words of the spam trades (casino, pills, payday loans, SEO services, backlinks, "work from home", a WhatsApp number, ...): 4 points, once however many match.',
    points: ({ text }) => (BAD_PATTERNS.some((pattern) => pattern.test(text)) ? 4 : 0),
  },
  {
    id: 'repeated_text',
    explain: `The same text (case, spacing and punctuation ignored) written in the workspace in the last ${REPEAT_WINDOW_HOURS} hours: 3 points, 5 from the third copy. People rephrase; scripts paste.`,
    points: ({ sameTextRecent }) => (sameTextRecent === 0 ? 0 : sameTextRecent === 1 ? 3 : 5),
  },
  {
    id: 'repetition_inside',
    explain: 'One word making up over 40% of 10 or more words, or a character repeated 12 times in a row: 2 points (keyboard mashing, keyword stuffing).',
    points: ({ text }) => {
      const words = text.toLowerCase().split(/\s+/).filter(Boolean)
      const counts = new Map<string, number>()
      for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1)
      const most = Math.max(0, ...counts.values())
      return (words.length >= 10 && most / words.length > 0.4) || /(.)\1{11}/u.test(text) ? 2 : 0
    },
  },
  {
    id: 'burst_ip',
    explain: `Earlier writes from the same IP in the last ${BURST_WINDOW_MINUTES} minutes: 1 point for one, 3 for two to four, 5 for five or more.`,
    points: ({ recentByIp: n }) => (n === 0 ? 0 : n === 1 ? 1 : n < 5 ? 3 : 5),
  },
  {
    id: 'burst_address',
    explain: `Earlier writes from the same e-mail address in the last ${BURST_WINDOW_MINUTES} minutes: 2 points for two to four, 4 for five or more (one earlier write is a conversation, not a burst).`,
    points: ({ recentByEmail: n }) => (n < 2 ? 0 : n < 5 ? 2 : 4),
  },
  {
    id: 'burst_domain',
    explain: `Earlier writes from the same e-mail domain in the last ${BURST_WINDOW_MINUTES} minutes, shared mail providers (gmail.com, outlook.com, ...) excepted: 2 points for five to nine, 4 for ten or more (a spammer's own domain rotates addresses).`,
    points: ({ recentByDomain: n, domain }) => (domain === null || SHARED_MAIL_DOMAINS.includes(domain) || n < 5 ? 0 : n < 10 ? 2 : 4),
  },
  {
    id: 'disposable_address',
    explain: 'An address at a throw-away mailbox provider (mailinator.com, yopmail.com, ...): 2 points; nobody will read the answer.',
    points: ({ domain }) => (domain !== null && DISPOSABLE_DOMAINS.includes(domain) ? 2 : 0),
  },
  {
    id: 'shouting',
    explain: 'Over 70% capitals among 20 or more letters: 1 point.',
    points: ({ text }) => {
      const letters = text.replace(/[^\p{L}]/gu, '')
      const upper = letters.replace(/[^\p{Lu}]/gu, '').length
      return letters.length >= 20 && upper / letters.length > 0.7 ? 1 : 0
    },
  },
]

/** The text as the repeated-text rule compares it: lower-case letters and digits only. */
export const normaliseText = (text: string) => text.toLowerCase().normalize('NFKC').replace(/[^\p{L}\p{N}]+/gu, ' ').trim()

/** The score and the reasons (`rule: points`) of one write, highest first. */
export function scoreWrite(signals: WriteSignals) {
  const hits = RULES.map((rule) => ({ id: rule.id, points: rule.points(signals) })).filter((hit) => hit.points > 0)
  hits.sort((a, b) => b.points - a.points || a.id.localeCompare(b.id))
  return { score: hits.reduce((sum, hit) => sum + hit.points, 0), reasons: hits.map((hit) => `${hit.id}: ${hit.points}`) }
}
