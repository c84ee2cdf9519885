// The workspace's optional proof of work (docs/moderation.md#proof-of-work): the contact form's ALTCHA
// challenge, solved here with altcha-lib's own solver (PBKDF2 in WebCrypto, a second or two).
import { solveChallenge, type Challenge } from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/web/pbkdf2'

/** A solved challenge as the server takes it: base64 JSON `{challenge, solution}`. */
export async function proofOfWork(api: string): Promise<string> {
  const response = await fetch(`${api}/contact/challenge`, { credentials: 'omit', cache: 'no-store' })
  if (!response.ok) throw new Error(`Request failed (${response.status})`)
  const challenge = (await response.json()) as Challenge
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 60_000 })
  if (!solution) throw new Error('The anti-spam check could not be solved; try again.')
  return btoa(JSON.stringify({ challenge, solution }))
}
