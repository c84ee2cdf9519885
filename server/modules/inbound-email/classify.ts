import type { Email } from 'postal-mime'

/** Why a message is not feedback, or null when it is. */
export type DropReason = 'auto_submitted' | 'auto_reply' | 'list_mail' | 'bounce' | 'own_mail' | 'no_sender'

const header = (email: Email, name: string) => email.headers.find((entry) => entry.key === name)?.value.trim()
const has = (email: Email, name: string) => email.headers.some((entry) => entry.key === name)

/**
 * Mail no person wrote to us: answering or posting it would loop or spam (RFC 3834 `Auto-Submitted`,
 * Exchange's `X-Auto-Response-Suppress`, `Precedence`, mailing lists (RFC 2369/2919 `List-*`),
 * delivery reports (RFC 3464 `multipart/report`, the null return path, MAILER-DAEMON), and our own mail.
 */
export function dropReason(email: Email, ownDomain: string): DropReason | null {
  const from = email.from?.address?.toLowerCase()
  const contentType = header(email, 'content-type')?.toLowerCase() ?? ''
  const returnPath = header(email, 'return-path')
  if (contentType.startsWith('multipart/report') || returnPath === '<>' || (from && /^(mailer-daemon|postmaster)@/.test(from))) return 'bounce'
  const autoSubmitted = header(email, 'auto-submitted')?.toLowerCase()
  if (autoSubmitted && autoSubmitted !== 'no') return 'auto_submitted'
  if (has(email, 'x-auto-response-suppress') || has(email, 'x-autoreply') || has(email, 'x-autorespond')) return 'auto_reply'
  const precedence = header(email, 'precedence')?.toLowerCase()
  if (precedence === 'auto_reply') return 'auto_reply'
  if (precedence === 'bulk' || precedence === 'junk' || precedence === 'list' || email.headers.some((entry) => entry.key.startsWith('list-'))) return 'list_mail'
  if (email.messageId && email.messageId.toLowerCase().endsWith(`@${ownDomain}>`)) return 'own_mail'
  if (!from) return 'no_sender'
  return null
}

/** Every Message-ID named by In-Reply-To and References, newest reference first. */
export function referencedIds(email: Email): string[] {
  const ids = `${email.inReplyTo ?? ''} ${email.references ?? ''}`.match(/<[^<>\s]+>/g) ?? []
  return [...new Set(ids.reverse())]
}

const QUOTE_HEADERS = [
  /^On .+ wrote:$/, // Gmail, Apple Mail, Thunderbird
  /^-{2,}\s*Original Message\s*-{2,}$/i, // Outlook
  /^_{10,}$/, // Outlook on the web
  /^From: .+$/, // Outlook's quoted header block
]

/** The new text of a reply: stops at the first quoted part (an attribution line, `>` lines) or the signature. */
export function stripQuotedReply(text: string): string {
  const kept: string[] = []
  const lines = text.replace(/\r\n/g, '\n').split('\n')
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    const trimmed = line.trim()
    // A long attribution line may wrap onto the next one.
    const joined = `${trimmed} ${lines[index + 1]?.trim() ?? ''}`.trim()
    if (trimmed === '--' || QUOTE_HEADERS.some((pattern) => pattern.test(trimmed)) || /^On .+ wrote:$/.test(joined)) break
    if (trimmed.startsWith('>')) continue
    kept.push(line)
  }
  return kept.join('\n').trim()
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' }

/** The message's text part, else its HTML reduced to text (block ends become line breaks, tags go, entities are decoded). */
export function textOf(email: Email): string {
  if (email.text?.trim()) return email.text.replace(/\r\n/g, '\n').trim()
  return (email.html ?? '')
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|tr|h[1-6]|blockquote)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
      if (name[0] === '#') {
        const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1))
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity
      }
      return ENTITIES[name.toLowerCase()] ?? entity
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}
