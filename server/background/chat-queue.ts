// Chat messages as a queue of the delivery loop: the chat module's claim, send and record, and the
// shared lease's release (leases.ts).
import type { Logger } from '../lib/log.ts'
import { claimChatDeliveries, recordChatAttempt, sendChatDelivery, type ChatAttemptResult, type ChatJob } from '../modules/integrations/delivery.ts'
import type { IntegrationDeps } from '../modules/integrations/service.ts'
import type { DeliveryQueue } from './delivery-loop.ts'
import { CHAT_JOBS, msUntilDue, releaseJob } from './leases.ts'

export function chatQueue(deps: IntegrationDeps, settings: { baseUrl: string; retryScale: number; sentBy: string; log: Logger }): DeliveryQueue<ChatJob, ChatAttemptResult> {
  return {
    name: 'chat',
    claim: (owner, limit) => claimChatDeliveries(deps.db, owner, limit),
    send: (job) => sendChatDelivery(deps, settings.baseUrl, job),
    async record(owner, job, result) {
      if (!result.success) settings.log.warn('chat delivery failed', { mapping_id: job.mappingId, event_id: job.eventId, attempt: job.attempt, error: result.error })
      await recordChatAttempt(deps.db, owner, job, result, settings)
    },
    release: (owner, job) => releaseJob(deps.db, CHAT_JOBS, owner, [job.mappingId, job.eventId]),
    msUntilDue: () => msUntilDue(deps.db, CHAT_JOBS),
  }
}
