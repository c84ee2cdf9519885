import { createHash } from 'node:crypto'
import type { LogLevel } from '../config.ts'

export type Logger = Record<Exclude<LogLevel, 'silent'>, (msg: string, fields?: Record<string, unknown>) => void>

const ORDER: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent']

// Values that look like credentials are masked even if a caller passes them by mistake.
const SECRET_PATTERN = /(chorus_sk_[A-Za-z0-9]+|whsec_[A-Za-z0-9+/=]+|eyJ[\w-]+\.[\w-]+\.[\w-]*)/g

const redact = (value: unknown): unknown =>
  typeof value === 'string' ? value.replace(SECRET_PATTERN, (m) => `${m.slice(0, 10)}…[redacted]`) : value

// Logs carry no e-mail address (docs/security.md#end-user-identity): the addresses of people who were
// since erased would otherwise outlive them there. Any address in any field, a message or an error
// text included, becomes a short hash, enough to correlate lines about the same address.
const EMAIL_PATTERN = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g

/** The short, stable stand-in for an e-mail address (or another personal value) in a log line. */
export const logHash = (value: string) => `h:${createHash('sha256').update(value.trim().toLowerCase()).digest('hex').slice(0, 12)}`

/** JSON lines on stdout (stderr for warn and error), one object per event. */
export function createLogger(level: LogLevel): Logger {
  const min = ORDER.indexOf(level)
  const emit = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER.indexOf(lvl) < min) return
    const entry: Record<string, unknown> = { level: lvl, time: new Date().toISOString(), msg: redact(msg) }
    for (const [key, value] of Object.entries(fields)) entry[key] = redact(value)
    const line = JSON.stringify(entry).replace(EMAIL_PATTERN, logHash)
    if (lvl === 'warn' || lvl === 'error') console.error(line)
    else console.log(line)
  }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}
