// Chat delivery, as one more kind of job of the background delivery loop: the dispatcher fans each
// outbox event out to the matching channel mappings (chat-fanout.ts), the loop (server/background/)
// leases due jobs with the shared claim, sends them, and records each attempt with the webhook retry schedule.
// The worker loads this module (and drizzle with it) with its first claimed chat job (background/chat-queue.ts).
import { and, eq, inArray, sql } from 'drizzle-orm'
import { anyOf, runnerOf, type Db } from '../../db/client.ts'
import { chatChannelMappings, chatDeliveries, chatDeliveryLogs, integrations, workspaces } from '../../db/schema/index.ts'
import { newId } from '../../lib/ids.ts'
import { leaseChatJobs, type ChatClaim } from './chat-lease.ts'
import { sql as text } from '../../db/sql-text.ts'
import { outcomeOf } from '../webhooks/queue.ts'
import type { OutboxEvent } from '../../events/outbox-event.ts'
import { postChatMessage } from './chat-api.ts'
import { chatMessage, type MessagePost } from './message.ts'
import { ProviderError } from './provider-http.ts'
import { accessToken, isRevoked, markRevoked, type Integration, type IntegrationDeps } from './service.ts'
import { portalPostUrl } from '../portal/links.ts'

type Data = Record<string, any>

export interface ChatJob {
  mappingId: string
  eventId: string
  eventType: string
  attempt: number
  channelId: string
  integration: Integration
  workspaceSlug: string
  event: OutboxEvent
}

/** Leases due chat jobs and reads what sending them needs. */
export async function claimChatDeliveries(db: Db, owner: number, limit: number): Promise<ChatJob[]> {
  return chatJobsOf(db, await leaseChatJobs(runnerOf(db), owner, limit))
}

/** What sending leased chat jobs needs, read once the lease has committed (the lease holds the jobs meanwhile). */
export async function chatJobsOf(db: Db, claimed: ChatClaim[]): Promise<ChatJob[]> {
  if (!claimed.length) return []
  const [mappingRows, eventRows] = await Promise.all([
    db.select({ mapping: chatChannelMappings, integration: integrations, slug: workspaces.slug }).from(chatChannelMappings)
      .innerJoin(integrations, eq(integrations.id, chatChannelMappings.integrationId))
      .innerJoin(workspaces, eq(workspaces.id, chatChannelMappings.workspaceId))
      .where(anyOf(chatChannelMappings.id, [...new Set(claimed.map((row) => row.mapping_id))])),
    runnerOf(db).rows<OutboxEvent>(text`select id, workspace_id as "workspaceId", type, data, created_at as "createdAt" from events
      where id = any(${[...new Set(claimed.map((row) => row.event_id))]}::text[])`),
  ])
  const mappingsById = new Map(mappingRows.map((row) => [row.mapping.id, row]))
  const eventsById = new Map(eventRows.map((row) => [row.id, row]))
  // A mapping deleted since the claim took its jobs with it (cascade): nothing to send.
  return claimed.filter((row) => mappingsById.has(row.mapping_id) && eventsById.has(row.event_id)).map((row) => {
    const { mapping, integration, slug } = mappingsById.get(row.mapping_id)!
    const event = eventsById.get(row.event_id)!
    return { mappingId: row.mapping_id, eventId: row.event_id, eventType: event.type, attempt: row.attempts + 1, channelId: mapping.channelId, integration, workspaceSlug: slug, event }
  })
}

export interface ChatAttemptResult {
  success: boolean
  error: string | null
  retryAfterMs: number | null
  /** The provider refused the token for good: the integration goes to `error`, nothing is retried. */
  revoked: boolean
  durationMs: number
}

/** The post as the event shows it; comment and vote events name it, so it is read as it is now. */
async function postOf(db: Db, event: OutboxEvent): Promise<MessagePost | null> {
  const data = event.data as Data
  if (data.post?.id) return data.post as MessagePost
  if (typeof data.post_id !== 'string') return null
  // The post reader (and the identity code behind it: jose) loads on the first chat message that needs it, not with the background worker.
  const { getPost } = await import('../posts/queries.ts')
  return getPost(db, event.workspaceId, data.post_id).catch(() => null)
}

export async function sendChatDelivery(deps: IntegrationDeps, baseUrl: string, job: ChatJob): Promise<ChatAttemptResult> {
  const started = performance.now()
  const result = (fields: Partial<ChatAttemptResult>): ChatAttemptResult => ({ success: false, error: null, retryAfterMs: null, revoked: false, ...fields, durationMs: Math.round(performance.now() - started) })
  if (job.integration.status === 'error') return result({ error: `the integration needs to be reconnected: ${job.integration.statusReason ?? 'token refused'}`, revoked: true })
  try {
    const token = await accessToken(deps, job.integration)
    const post = await postOf(deps.db, job.event)
    const { text, blocks } = chatMessage(job.eventType, job.event.data as Data, post, post ? portalPostUrl(baseUrl, job.workspaceSlug, post.id) : null)
    await postChatMessage(deps.chat, token, job.channelId, text, blocks)
    return result({ success: true })
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error
    return result({ error: error.detail, retryAfterMs: error.retryAfterMs, revoked: isRevoked('chat', error) })
  }
}

/** Logs the attempt and moves the job on (done, the next retry, or failed), in one transaction. */
export async function recordChatAttempt(db: Db, owner: number, job: ChatJob, result: ChatAttemptResult, settings: { retryScale: number; sentBy: string }) {
  const outcome = result.revoked
    ? { status: 'failed' as const, nextAttemptAt: null }
    : outcomeOf({ attempt: job.attempt, manual: false }, { ...result, status: null, body: null }, settings.retryScale)
  await db.transaction(async (tx) => {
    const [live] = await tx.select({ id: chatChannelMappings.id }).from(chatChannelMappings).where(eq(chatChannelMappings.id, job.mappingId)).for('share')
    if (!live) return
    await tx.insert(chatDeliveryLogs).values({
      id: newId('deliveryLog'), mappingId: job.mappingId, eventId: job.eventId, eventType: job.eventType, attempt: job.attempt,
      success: result.success, error: result.error, durationMs: result.durationMs, sentBy: settings.sentBy,
    })
    await tx.update(chatDeliveries).set({
      status: outcome.status, attempts: job.attempt, nextAttemptAt: outcome.nextAttemptAt ?? sql`now()`, leaseOwner: null, leaseUntil: null, updatedAt: sql`now()`,
    }).where(and(eq(chatDeliveries.mappingId, job.mappingId), eq(chatDeliveries.eventId, job.eventId), eq(chatDeliveries.leaseOwner, owner)))
    if (result.revoked) {
      if (job.integration.status !== 'error') await markRevoked(tx as unknown as Db, job.integration.id, `the chat provider refused the token: ${result.error}`)
      // Everything else waiting on this connection would meet the same refusal.
      await tx.update(chatDeliveries).set({ status: 'canceled', leaseOwner: null, leaseUntil: null, updatedAt: sql`now()` })
        .where(and(eq(chatDeliveries.status, 'pending'), inArray(chatDeliveries.mappingId,
          tx.select({ id: chatChannelMappings.id }).from(chatChannelMappings).where(eq(chatChannelMappings.integrationId, job.integration.id)))))
    }
  })
}
