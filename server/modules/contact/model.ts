import { t } from 'elysia'
import { Timestamp } from '../../lib/schema.ts'

export const ContactRequest = t.Object({
  name: t.String({ minLength: 1, maxLength: 100, examples: ['Ada Lovelace'] }),
  email: t.String({ format: 'email', maxLength: 254, examples: ['ada@example.com'] }),
  message: t.String({ minLength: 1, maxLength: 5000, examples: ['We would like a demo for 40 seats.'] }),
  challenge: t.Optional(t.String({
    maxLength: 8192,
    description: 'The solved ALTCHA payload (base64 JSON `{challenge, solution}`, what the ALTCHA widget puts in its form field). Required: without it the request is 422 CHALLENGE_FAILED.',
  })),
}, { additionalProperties: false, $id: 'ContactRequest', examples: [{ name: 'Ada Lovelace', email: 'ada@example.com', message: 'We would like a demo for 40 seats.', challenge: 'eyJjaGFsbGVuZ2UiOnsicGFyYW1ldGVycyI6ey4uLn0sInNpZ25hdHVyZSI6Ii4uLiJ9LCJzb2x1dGlvbiI6eyJjb3VudGVyIjo3MTUxLCJkZXJpdmVkS2V5IjoiLi4uIn19' }] })

export const ContactResponse = t.Object({
  id: t.String({ examples: ['ctm_0mi9x2k3aq1b2c3d4e5f6g7h8'] }),
  status: t.Literal('received'),
  created_at: Timestamp,
}, { $id: 'ContactResponse', examples: [{ id: 'ctm_0mi9x2k3aq1b2c3d4e5f6g7h8', status: 'received', created_at: '2026-11-22T09:30:00.000Z' }] })

export const ChallengeResponse = t.Object({
  parameters: t.Object({
    algorithm: t.String({ examples: ['PBKDF2/SHA-256'] }),
    nonce: t.String(),
    salt: t.String(),
    cost: t.Integer({ examples: [1000] }),
    keyLength: t.Integer({ examples: [32] }),
    keyPrefix: t.String(),
    keySignature: t.Optional(t.String()),
    expiresAt: t.Integer({ description: 'Unix seconds; 10 minutes after issue' }),
  }, { additionalProperties: true }),
  signature: t.String(),
}, {
  $id: 'ContactChallenge',
  description: 'An ALTCHA v2 challenge (HMAC-signed), for altcha-lib or the ALTCHA widget to solve',
  examples: [{
    parameters: {
      algorithm: 'PBKDF2/SHA-256', nonce: '5f0c7e1d9a2b4c6e8f1a3b5c7d9e0f12', salt: '9c1e3a5b7d0f2a4c6e8b0d2f4a6c8e01', cost: 1000, keyLength: 32,
      keyPrefix: '3fa85f6457174562b3fc2c963f66afa6', keySignature: 'b1946ac92492d2347c6235b4d2611184e0c54b1a5e8f7a6c3d2b1e0f9a8b7c6d', expiresAt: 1795400600,
    },
    signature: '6dcd4ce23d88e2ee9568ba546c007c63d9131c1b2f4a6e8c0d2e4f6a8b0c2d4e',
  }],
})
