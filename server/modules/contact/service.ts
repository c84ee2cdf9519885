import { createChallenge, randomInt, verifySolution, type Payload } from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2'
import { lt, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import { contactChallengesUsed, contactMessages } from '../../db/schema/index.ts'
import { invalid } from '../../errors.ts'
import { sha256Hex, toHex, type Secrets } from '../../lib/secrets.ts'
import { newId } from '../../lib/ids.ts'

/**
 * ALTCHA proof of work, v2, deterministic mode: the server picks the counter, so the client must try
 * about 5,000 to 10,000 PBKDF2 derivations (a second or two in a browser) while the server checks one
 * HMAC. The work parameters are signed, so a client cannot make them cheaper.
 */
export const CHALLENGE = { algorithm: 'PBKDF2/SHA-256', cost: 1_000, counterMin: 5_000, counterMax: 10_000, lifetimeSeconds: 600 } as const

export interface ChallengeSecrets { signature: string; keySignature: string }

/** Two HMAC keys derived from SECRET_KEY, so every process that shares it verifies every other's challenges. */
export async function challengeSecrets(secrets: Pick<Secrets, 'deriveKey'>): Promise<ChallengeSecrets> {
  return {
    signature: toHex(await secrets.deriveKey('contact-challenge')),
    keySignature: toHex(await secrets.deriveKey('contact-challenge-key')),
  }
}

export async function newChallenge(secrets: ChallengeSecrets) {
  const challenge = await createChallenge({
    algorithm: CHALLENGE.algorithm,
    cost: CHALLENGE.cost,
    counter: randomInt(CHALLENGE.counterMax, CHALLENGE.counterMin),
    deriveKey,
    expiresAt: new Date(Date.now() + CHALLENGE.lifetimeSeconds * 1000),
    hmacSignatureSecret: secrets.signature,
    hmacKeySignatureSecret: secrets.keySignature,
  })
  const { expiresAt } = challenge.parameters
  if (!challenge.signature || expiresAt === undefined) throw new Error('altcha-lib returned an unsigned or unexpiring challenge')
  return { parameters: { ...challenge.parameters, expiresAt }, signature: challenge.signature }
}

// Every 422 is an HTTPValidationError: the failed challenge is an issue of the `challenge` field.
const failed = (why: string) => invalid(['body', 'challenge'], `The bot challenge failed: ${why}. Fetch a new one from GET /contact/challenge and solve it.`, 'challenge_failed', 'CHALLENGE_FAILED')

function decode(payload: string | undefined): Payload {
  if (!payload) throw failed('no solution was sent')
  try {
    const decoded = JSON.parse(atob(payload)) as Payload
    if (typeof decoded?.challenge?.parameters === 'object' && typeof decoded.solution === 'object' && decoded.solution !== null) return decoded
  } catch {}
  throw failed('the payload is not base64 JSON with challenge and solution')
}

/**
 * Verifies an ALTCHA payload (base64 JSON `{challenge, solution}`) and spends it: the nonce's hash is
 * inserted until the challenge expires, so a second use fails on any process sharing the database.
 */
export async function redeemChallenge(ctx: Pick<AppContext, 'db'>, secrets: ChallengeSecrets, payload: string | undefined) {
  const { challenge, solution } = decode(payload)
  const expiresAt = challenge.parameters.expiresAt
  // Every challenge we sign expires; one without expiry (or with a far one) is not ours to honour forever.
  if (typeof expiresAt !== 'number' || expiresAt > Date.now() / 1000 + CHALLENGE.lifetimeSeconds + 60) throw failed('the challenge has no valid expiry')
  let result: Awaited<ReturnType<typeof verifySolution>>
  try {
    result = await verifySolution({ challenge, solution, deriveKey, hmacSignatureSecret: secrets.signature, hmacKeySignatureSecret: secrets.keySignature })
  } catch {
    throw failed('the payload is malformed')
  }
  if (result.expired) throw failed('the challenge has expired')
  if (!result.verified) throw failed(result.invalidSignature ? 'the challenge was not issued by this server' : 'the solution is wrong')

  const id = await sha256Hex(String(challenge.parameters.nonce))
  const spent = await ctx.db.insert(contactChallengesUsed).values({ id, expiresAt: new Date(expiresAt * 1000) }).onConflictDoNothing().returning({ id: contactChallengesUsed.id })
  if (!spent.length) throw failed('this solution was already used')
  await ctx.db.delete(contactChallengesUsed).where(lt(contactChallengesUsed.expiresAt, sql`now()`))
}

export interface ContactInput { name: string; email: string; message: string }

/** Stores the message, then e-mails it to CONTACT_EMAIL (when set) with the sender as Reply-To. */
export async function submitContact(ctx: Pick<AppContext, 'db' | 'mail' | 'log' | 'config'>, input: ContactInput) {
  const [row] = await ctx.db.insert(contactMessages).values({
    id: newId('contactMessage'),
    name: input.name.trim(),
    email: input.email.trim().toLowerCase(),
    message: input.message.trim(),
  }).returning()
  const message = row!
  if (ctx.config.contactEmail) {
    // The message is kept either way; a mail failure is logged, not shown to the visitor.
    await ctx.mail.send({
      to: ctx.config.contactEmail,
      replyTo: message.email,
      subject: `Contact form: ${message.name.replace(/[\r\n]+/g, ' ')}`,
      text: `${message.name} <${message.email}> wrote through the contact form (${message.id}):\n\n${message.message}\n`,
    }).catch((error) => ctx.log.error('contact e-mail failed', { id: message.id, error: String(error) }))
  }
  return message
}
