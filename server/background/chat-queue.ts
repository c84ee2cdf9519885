// Chat messages as a queue of the delivery loop: the shared lease (leases.ts) claims them as SQL text, and
// the chat module (its reads, the providers' clients, the send and the record, on drizzle) loads with the
// first claimed job, not with the worker: most servers have no chat connection.
import type { Db } from '../db/client.ts'
import type { Logger } from '../lib/log.ts'
import type { Outbound } from '../lib/outbound.ts'
import { leaseChatJobs } from '../modules/integrations/chat-lease.ts'
import type { ChatAttemptResult, ChatJob } from '../modules/integrations/delivery.ts'
import type { BackgroundContext } from './context.ts'
import type { DeliveryQueue } from './delivery-loop.ts'
import { CHAT_JOBS, msUntilDue, releaseJob, releaseOwnerExcept } from './leases.ts'

interface ChatSettings { baseUrl: string; retryScale: number; sentBy: string; log: Logger }

export function chatQueue(ctx: Pick<BackgroundContext, 'db' | 'secrets' | 'config' | 'outbound' | 'database'>, outbound: Outbound, settings: ChatSettings): DeliveryQueue<ChatJob, ChatAttemptResult> {
  let loaded: Promise<{ chat: typeof import('../modules/integrations/delivery.ts'); deps: import('../modules/integrations/service.ts').IntegrationDeps }> | undefined
  const load = () => (loaded ??= (async () => {
    await ctx.database.loadDb?.()
    const [chat, { integrationClients }] = await Promise.all([import('../modules/integrations/delivery.ts'), import('../modules/integrations/service.ts')])
    return { chat, deps: integrationClients(ctx, outbound) }
  })())
  return {
    name: 'chat',
    table: 'chat_deliveries',
    async claim(owner, limit) {
      const claimed = await leaseChatJobs(ctx.database.sql, owner, limit)
      if (!claimed.length) return []
      const { chat } = await load()
      return chat.chatJobsOf(ctx.db as Db, claimed)
    },
    send: async (job) => { const { chat, deps } = await load(); return chat.sendChatDelivery(deps, settings.baseUrl, job) },
    async record(owner, job, result) {
      if (!result.success) settings.log.warn('chat delivery failed', { mapping_id: job.mappingId, event_id: job.eventId, attempt: job.attempt, error: result.error })
      const { chat, deps } = await load()
      await chat.recordChatAttempt(deps.db, owner, job, result, settings)
    },
    release: (owner, job) => releaseJob(ctx.database.sql, CHAT_JOBS, owner, [job.mappingId, job.eventId]),
    releaseAllBut: (owner, held) => releaseOwnerExcept(ctx.database.sql, CHAT_JOBS, owner, Array.from(held, (job): [string, string] => [job.mappingId, job.eventId])),
    msUntilDue: () => msUntilDue(ctx.database.sql, CHAT_JOBS),
  }
}
