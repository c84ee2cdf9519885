import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { enforceRateLimit } from '../../plugins/rate-limit.ts'
import { requestPlugin } from '../../plugins/request.ts'
import { ChallengeResponse, ContactRequest, ContactResponse } from './model.ts'
import { challengeSecrets, newChallenge, redeemChallenge, submitContact, type ChallengeSecrets } from './service.ts'

const tags = ['Contact']

export const contactModule = (ctx: AppContext) => {
  let secrets: Promise<ChallengeSecrets> | undefined
  const keys = () => (secrets ??= challengeSecrets(ctx.secrets))
  return new Elysia()
    .use(requestPlugin(ctx))
    .get('/contact/challenge', async ({ set }) => {
      set.headers['cache-control'] = 'no-store'
      return newChallenge(await keys())
    }, {
      response: { 200: ChallengeResponse },
      detail: {
        operationId: 'getContactChallenge', tags, security: [], summary: 'A bot challenge for the contact form',
        description: 'An ALTCHA v2 proof-of-work challenge (PBKDF2/SHA-256), HMAC-signed with a key derived from SECRET_KEY and valid for 10 minutes; `Cache-Control: no-store`. Solve it with the ALTCHA widget or `altcha-lib` and send the payload as `challenge` to POST /contact.',
      },
    })
    .post('/contact', async ({ body, clientIp, set }) => {
      // Before the proof is checked, so a flood costs the server nothing but a counter.
      await enforceRateLimit(ctx, set.headers, `contact:ip:${clientIp}`, ctx.config.rateLimitPerIp)
      await redeemChallenge(ctx, await keys(), body.challenge)
      const message = await submitContact(ctx, body)
      return { id: message.id, status: 'received' as const, created_at: message.createdAt.toISOString() }
    }, {
      body: ContactRequest,
      response: { 200: ContactResponse },
      detail: {
        operationId: 'submitContact', tags, security: [], summary: 'Send a message through the contact form',
        description: 'Needs a solved challenge from GET /contact/challenge: a missing, wrong, tampered, expired or already used one is 422 CHALLENGE_FAILED (each challenge is accepted once, on every server process). Limited per IP (RATE_LIMIT_PER_IP a minute). The message is stored and e-mailed to CONTACT_EMAIL with the sender as Reply-To.',
      },
    })
}
