import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  to: string[]
  raw: string
  /** The raw message with quoted-printable soft breaks and escapes undone, enough to find links. */
  decoded: string
}

const decodeQuotedPrintable = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

/** A real SMTP server (the `smtp-server` package) on a random loopback port that keeps what it receives. */
export async function startSmtp() {
  const inbox: ReceivedMail[] = []
  const waiters: (() => void)[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      let raw = ''
      stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')))
      stream.on('end', () => {
        inbox.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, decoded: decodeQuotedPrintable(raw) })
        waiters.splice(0).forEach((wake) => wake())
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as { port: number }).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    inbox,
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
