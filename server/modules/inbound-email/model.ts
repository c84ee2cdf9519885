import { t } from 'elysia'
import { Enum } from '../../lib/schema.ts'

export const InboundTokenParams = t.Object({ token: t.String({ maxLength: 64, description: 'The local part of the intake address' }) })

export const InboundEmailResult = t.Object({
  outcome: Enum(['post', 'comment', 'duplicate', 'dropped'], { description: '`post`: a new post; `comment`: a reply threaded onto a post; `duplicate`: this Message-ID was already received; `dropped`: not feedback (see reason)' }),
  post_id: t.Nullable(t.String()),
  comment_id: t.Nullable(t.String()),
  reason: t.Nullable(Enum(['auto_submitted', 'auto_reply', 'list_mail', 'bounce', 'own_mail', 'no_sender', 'subscription_inactive'])),
}, { $id: 'InboundEmailResult', examples: [{ outcome: 'post', post_id: 'post_0mi9x2k3aq1b2c3d4e5f6g7h8', comment_id: null, reason: null }] })

export const IntakeTokenResponse = t.Object({
  email_intake_token: t.String({ examples: ['0f8c2d1e9a7b4c3d5e6f708192a3b4c5'] }),
  email_intake_address: t.String({ description: 'The intake address (`{token}@{INBOUND_EMAIL_DOMAIN}`; a single-label domain such as `localhost` is possible on self-hosted installs)', examples: ['0f8c2d1e9a7b4c3d5e6f708192a3b4c5@in.chorus.example.com'] }),
}, { $id: 'IntakeToken', examples: [{ email_intake_token: '0f8c2d1e9a7b4c3d5e6f708192a3b4c5', email_intake_address: '0f8c2d1e9a7b4c3d5e6f708192a3b4c5@in.chorus.example.com' }] })
