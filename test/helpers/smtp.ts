import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  to: string[]
  raw: string
  /** The raw message with quoted-printable soft breaks and escapes undone, enough to find links. */
  decoded: string
}

// A run of escapes is decoded as the UTF-8 bytes it stands for, so non-ASCII text (e-mail in German, Arabic...) reads right.
const decodeQuotedPrintable = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/(?:=[0-9A-F]{2})+/g, (run) => Buffer.from(run.replaceAll('=', ''), 'hex').toString('utf8'))

/**
 * A real SMTP server (the `smtp-server` package) on a random loopback port that keeps what it receives.
 * `reject`: recipients it refuses with a permanent 550, as a mailbox that does not exist (a bounce).
 * `stalled`: recipients whose message it reads to the end and then never answers, as a server that hangs;
 * `slow`: recipients whose message it answers (and keeps) only after that many milliseconds;
 * `refused`: recipients whose message it reads to the end and then refuses for good (554, as a spam filter does).
 */
export async function startSmtp(options: { reject?: (address: string) => boolean } = {}) {
  const inbox: ReceivedMail[] = []
  const waiters: (() => void)[] = []
  const stalled = new Set<string>()
  const slow = new Map<string, number>()
  const refused = new Set<string>()
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    // A pooled client keeps its connections open: closing waits this long for them (smtp-server's default is 30 s).
    closeTimeout: 500,
    onRcptTo(address, _session, callback) {
      if (options.reject?.(address.address)) return callback(Object.assign(new Error('5.1.1 No such user'), { responseCode: 550 }))
      callback()
    },
    onData(stream, session, callback) {
      let raw = ''
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')))
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address)
        if (to.some((address) => stalled.has(address))) return
        if (to.some((address) => refused.has(address))) return callback(Object.assign(new Error('5.7.1 Message refused as spam'), { responseCode: 554 }))
        setTimeout(() => {
          inbox.push({ to, raw, decoded: decodeQuotedPrintable(raw) })
          waiters.splice(0).forEach((wake) => wake())
          callback()
        }, Math.max(0, ...to.map((address) => slow.get(address) ?? 0)))
      })
    },
  })
  // A client that drops mid-message (a stopped server, a killed process) is a test's business, not an unhandled error.
  server.on('error', () => {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as { port: number }).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    inbox,
    stalled,
    slow,
    refused,
    /** Resolves with the first message to `address` that arrives (or has arrived). */
    async waitFor(address: string, timeoutMs = 5000): Promise<ReceivedMail> {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = inbox.find((mail) => mail.to.includes(address))
        if (found) {
          inbox.splice(inbox.indexOf(found), 1)
          return found
        }
        if (Date.now() > deadline) throw new Error(`no e-mail to ${address} within ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 100)
        })
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

export function tokenFromMail(mail: { decoded?: string; text?: string }): string {
  const match = /[?&]token=([A-Za-z0-9_-]+)/.exec(mail.decoded ?? mail.text ?? '')
  if (!match) throw new Error('no token link in the e-mail')
  return match[1]!
}
