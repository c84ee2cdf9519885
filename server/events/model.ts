import { t } from 'elysia'
import { Enum } from '../lib/schema.ts'
import { EVENT_TYPES } from './outbox.ts'

/** One event kind, as subscribers (webhooks, notification subscriptions) name them in requests and responses. */
export const EventKind = Enum([...EVENT_TYPES])
export const EventKinds = t.Array(EventKind, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, description: 'Event kinds to receive' })
