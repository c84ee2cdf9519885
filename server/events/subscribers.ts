// The one list of outbox subscribers. The dispatcher and the webhook delivery loop
// both dispatch through dispatch.ts with this list: add a subscriber here and nowhere else.
import { DEFAULT_DIGEST_HOUR, type Config } from '../config.ts'
import { duplicateCheckSubscriber } from '../modules/duplicates/check-subscriber.ts'
import { chatSubscriber } from '../modules/integrations/chat-fanout.ts'
import { notificationSubscriberAt } from '../modules/notifications/fanout.ts'
import { postSubscribersSubscriber } from '../modules/post-subscriptions/fanout.ts'
import { webhookSubscriber } from '../modules/webhooks/subscriber.ts'
import type { EventSubscriber } from './subscriber.ts'

/** The subscribers as a server's configuration sets them up (the digest hour of notifications). */
export const subscribersFor = (config: Pick<Config, 'notifyDigestHour'>): readonly EventSubscriber[] =>
  [webhookSubscriber, notificationSubscriberAt(config.notifyDigestHour), chatSubscriber, postSubscribersSubscriber, duplicateCheckSubscriber]

/** The subscribers with the default configuration: what a dispatch given no list runs (tests, benchmarks). */
export const SUBSCRIBERS = subscribersFor({ notifyDigestHour: DEFAULT_DIGEST_HOUR })
