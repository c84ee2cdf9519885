import { desc, eq } from 'drizzle-orm'
import { emailOutbox } from '../../server/db/schema/index.ts'
import type { Harness, TestClient } from './harness.ts'
import { tokenFromMail } from './smtp.ts'

/** The newest outbox message to `email` (the harness runs without SMTP unless a test starts one). */
export async function lastOutboxMail(h: Harness, email: string) {
  const [mail] = await h.db.select().from(emailOutbox).where(eq(emailOutbox.to, email)).orderBy(desc(emailOutbox.createdAt), desc(emailOutbox.id)).limit(1)
  if (!mail) throw new Error(`no outbox e-mail to ${email}`)
  return mail
}

type Inbox = { waitFor(address: string): Promise<{ decoded: string }> }

/** Signs a client in through the real magic-link routes (reading the link from `inbox`, else the outbox); returns the user body. */
export async function signIn(h: Harness, client: TestClient, email: string, inbox?: Inbox) {
  const request = await client.post('/api/v1/auth/magic-link', { email })
  if (request.status !== 200) throw new Error(`magic-link request failed: ${request.status} ${JSON.stringify(request.body)}`)
  const address = email.toLowerCase()
  const token = tokenFromMail(inbox ? await inbox.waitFor(address) : await lastOutboxMail(h, address))
  const verified = await client.post('/api/v1/auth/magic-link/verify', { token })
  if (verified.status !== 200) throw new Error(`magic-link verify failed: ${verified.status}`)
  return verified.body as { id: string; email: string }
}
