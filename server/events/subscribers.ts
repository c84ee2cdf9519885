// The one list of outbox subscribers: the dispatcher fans each event out to them through dispatch.ts. Add a
// subscriber here and nowhere else. Webhooks are not among them: they have a lane of their own (migration 0066,
// modules/webhooks/queue.ts `takeWebhookEvents`), so a delivery waits on no other subscriber's work.
import { DEFAULT_DIGEST_HOUR, type Config } from '../config.ts'
import { duplicateCheckSubscriber } from '../modules/duplicates/check-subscriber.ts'
import { chatSubscriber } from '../modules/integrations/chat-fanout.ts'
import { notificationSubscriberAt } from '../modules/notifications/fanout.ts'
import { postSubscribersSubscriber } from '../modules/post-subscriptions/fanout.ts'
import type { EventSubscriber } from './subscriber.ts'

/** The subscribers as a server's configuration sets them up (the digest hour of notifications). */
export const subscribersFor = (config: Pick<Config, 'notifyDigestHour'>): readonly EventSubscriber[] =>
  [notificationSubscriberAt(config.notifyDigestHour), chatSubscriber, postSubscribersSubscriber, duplicateCheckSubscriber]

/** The subscribers with the default configuration: what a dispatch given no list runs (tests, benchmarks). */
export const SUBSCRIBERS = subscribersFor({ notifyDigestHour: DEFAULT_DIGEST_HOUR })
