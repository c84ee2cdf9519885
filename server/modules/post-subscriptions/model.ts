import { t } from 'elysia'
import { PagingQuery, pageEnvelope } from '../../lib/paging-schema.ts'
import { Enum, Timestamp } from '../../lib/schema.ts'
import { SUBSCRIPTION_REASONS } from '../../db/schema/index.ts'

const subscriberExample = {
  end_user_id: 'eu_0mi9x2k3aq1b2c3d4e5f6g7h8', external_id: null, email: 'grace@customer.example', name: 'Grace Hopper', reason: 'author' as const,
  subscribed: true, mail_blocked: null, locale: 'de', created_at: '2026-11-22T09:30:00.000Z',
}

export const SubscriberResponse = t.Object({
  end_user_id: t.String(),
  external_id: t.Nullable(t.String()),
  email: t.Nullable(t.String()),
  name: t.Nullable(t.String()),
  reason: Enum([...SUBSCRIPTION_REASONS], { description: 'Why they follow the post: they wrote it, voted for it, commented publicly, or followed a post merged into it' }),
  subscribed: t.Boolean({ description: 'False once they unsubscribed from this post or from all of the workspace' }),
  mail_blocked: t.Nullable(Enum(['no_address', 'unconfirmed', 'bounced'], { description: 'Why no e-mail reaches them although subscribed: no address (identified users hear through `end_user.notified`), an address not yet confirmed, or one that bounced' })),
  locale: t.Nullable(t.String({ description: 'The language of their e-mail (their last public write)' })),
  created_at: Timestamp,
}, { $id: 'PostSubscriber', examples: [subscriberExample] })

export const SubscriberListResponse = pageEnvelope(SubscriberResponse, 'PostSubscriberPage', [{ items: [subscriberExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])
export const SubscriberListQuery = t.Object({ ...PagingQuery }, { additionalProperties: false })

export const NotificationUnsubscribeQuery = t.Object({
  token: t.String({ minLength: 1, maxLength: 128, description: 'The token from the e-mail' }),
  post: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'Only this post; without it, every e-mail of the workspace' })),
})
