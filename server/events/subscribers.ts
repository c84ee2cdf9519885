// The one list of outbox subscribers. The dispatcher and the webhook delivery loop
// both dispatch through dispatch.ts, which reads this list: add a subscriber here and nowhere else.
import { duplicateCheckSubscriber } from '../modules/duplicates/check-subscriber.ts'
import { chatSubscriber } from '../modules/integrations/chat-fanout.ts'
import { notificationSubscriber } from '../modules/notifications/fanout.ts'
import { postSubscribersSubscriber } from '../modules/post-subscriptions/fanout.ts'
import { webhookSubscriber } from '../modules/webhooks/subscriber.ts'
import type { EventSubscriber } from './subscriber.ts'

export const SUBSCRIBERS: readonly EventSubscriber[] = [webhookSubscriber, notificationSubscriber, chatSubscriber, postSubscribersSubscriber, duplicateCheckSubscriber]
