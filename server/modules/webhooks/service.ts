import { and, desc, eq, sql } from 'drizzle-orm'
import { runnerOf, type Db } from '../../db/client.ts'
import { eventDispatch, events, webhookDeliveries, webhookDeliveryLogs, webhookDispatch, webhooks } from '../../db/schema/index.ts'
import { announceWork } from '../../db/work.ts'
import { conflict, invalid, notFound } from '../../errors.ts'
import { newId } from '../../lib/ids.ts'
import { OutboundRefused, type Outbound } from '../../lib/outbound.ts'
import type { Page } from '../../lib/paging.ts'
import { sealContext, type Sealer } from '../../lib/secrets.ts'
import { disableEndpoint } from './queue.ts'
import { newSecret } from './signing.ts'

export interface WebhookDeps {
  db: Db
  outbound: Outbound
  secrets: Sealer
}

/** How long the previous secret keeps signing after a rotation, so receivers can switch without a gap. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

async function checkUrl(deps: WebhookDeps, url: string) {
  try {
    await deps.outbound.check(url)
  } catch (error) {
    if (error instanceof OutboundRefused) throw invalid(['body', 'url'], `The URL ${error.message}`)
    throw error
  }
}

export async function createWebhook(deps: WebhookDeps, workspaceId: string, input: { url: string; events: string[]; description?: string | null }) {
  await checkUrl(deps, input.url)
  const secret = newSecret()
  const id = newId('webhook')
  const [row] = await deps.db.insert(webhooks).values({
    id,
    workspaceId,
    url: input.url,
    events: input.events,
    description: input.description ?? null,
    secret: await deps.secrets.seal(secret, sealContext.webhookSecret(id)),
  }).returning()
  return { webhook: row!, secret }
}

export const listWebhooks = (db: Db, workspaceId: string) =>
  db.select().from(webhooks).where(eq(webhooks.workspaceId, workspaceId)).orderBy(desc(webhooks.createdAt))

export async function findWebhook(db: Db, workspaceId: string, webhookId: string) {
  const [row] = await db.select().from(webhooks).where(and(eq(webhooks.id, webhookId), eq(webhooks.workspaceId, workspaceId)))
  if (!row) throw notFound('Webhook')
  return row
}

export async function updateWebhook(deps: WebhookDeps, workspaceId: string, webhookId: string, changes: { url?: string; events?: string[]; description?: string | null; enabled?: boolean }) {
  const current = await findWebhook(deps.db, workspaceId, webhookId)
  if (changes.url !== undefined && changes.url !== current.url) await checkUrl(deps, changes.url)
  return deps.db.transaction(async (tx) => {
    if (changes.enabled === false && current.enabled) await disableEndpoint(runnerOf(tx), webhookId, null)
    const [row] = await tx.update(webhooks).set({
      url: changes.url,
      events: changes.events,
      description: changes.description,
      enabled: changes.enabled,
      ...(changes.enabled ? { disabledReason: null } : {}),
      updatedAt: sql`now()`,
    }).where(eq(webhooks.id, webhookId)).returning()
    return row!
  })
}

export async function deleteWebhook(db: Db, workspaceId: string, webhookId: string) {
  const [row] = await db.delete(webhooks).where(and(eq(webhooks.id, webhookId), eq(webhooks.workspaceId, workspaceId))).returning({ id: webhooks.id })
  if (!row) throw notFound('Webhook')
}

/** A new secret; the old one keeps signing (a second `v1,` entry) for ROTATION_OVERLAP_MS. */
export async function rotateSecret(deps: WebhookDeps, workspaceId: string, webhookId: string) {
  const current = await findWebhook(deps.db, workspaceId, webhookId)
  const secret = newSecret()
  const previousSecretExpiresAt = new Date(Date.now() + ROTATION_OVERLAP_MS)
  const [row] = await deps.db.update(webhooks)
    .set({ secret: await deps.secrets.seal(secret, sealContext.webhookSecret(webhookId)), previousSecret: current.secret, previousSecretExpiresAt, updatedAt: sql`now()` })
    .where(eq(webhooks.id, webhookId)).returning()
  return { webhook: row!, secret, previousSecretExpiresAt }
}

export async function listLogs(db: Db, workspaceId: string, webhookId: string, page: Page, success?: boolean) {
  await findWebhook(db, workspaceId, webhookId)
  const filter = success === undefined ? undefined : eq(webhookDeliveryLogs.success, success)
  return db.select().from(webhookDeliveryLogs)
    .where(and(eq(webhookDeliveryLogs.webhookId, webhookId), filter))
    .orderBy(desc(webhookDeliveryLogs.createdAt), desc(webhookDeliveryLogs.id))
    .limit(page.perPage)
    .offset(page.offset)
}

/**
 * Queues the logged event for its endpoint again, now: the same event id (so the same `webhook-id`).
 * A delivery still waiting for an automatic retry is simply brought forward. A delivered one has no row
 * left (it went with its success); its new row counts on from the last logged attempt.
 */
export async function retryLog(db: Db, workspaceId: string, logId: string) {
  const [found] = await db.select({ log: webhookDeliveryLogs, webhook: webhooks }).from(webhookDeliveryLogs)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveryLogs.webhookId))
    .where(and(eq(webhookDeliveryLogs.id, logId), eq(webhooks.workspaceId, workspaceId)))
  if (!found) throw notFound('Delivery log')
  if (!found.webhook.enabled) throw conflict('The webhook is disabled; enable it before retrying')
  const [event] = await db.select({ id: events.id }).from(events).where(eq(events.id, found.log.eventId))
  if (!event) throw conflict('The event of this delivery no longer exists')
  await db.insert(webhookDeliveries)
    .values({
      webhookId: found.webhook.id, eventId: event.id, status: 'pending', manual: true,
      attempts: sql`(select coalesce(max(${webhookDeliveryLogs.attempt}), 0) from ${webhookDeliveryLogs}
        where ${webhookDeliveryLogs.webhookId} = ${found.webhook.id} and ${webhookDeliveryLogs.eventId} = ${event.id})`,
    })
    .onConflictDoUpdate({
      target: [webhookDeliveries.webhookId, webhookDeliveries.eventId],
      set: {
        manual: sql`case when ${webhookDeliveries.status} = 'pending' then ${webhookDeliveries.manual} else true end`,
        status: 'pending',
        nextAttemptAt: sql`now()`,
        updatedAt: sql`now()`,
      },
    })
  // A row still there (waiting for a retry, or failed) was updated, not inserted: its trigger stays silent.
  await announceWork(runnerOf(db), 'webhook_deliveries')
  return { status: 'queued' as const, log_id: found.log.id, webhook_id: found.webhook.id, event_id: event.id }
}

/** The kind of the event "Send test event" sends; it goes to the one endpoint asked for, never to other subscribers. */
export const TEST_EVENT_TYPE = 'webhook.test'

/**
 * Sends a `webhook.test` event to one endpoint now, through the real delivery path (signed, logged, retryable).
 * The event is taken off the dispatch queue in its own transaction, so no other endpoint, chat channel or
 * e-mail subscriber hears it; like a manual retry it is a single attempt.
 */
export async function sendTestEvent(db: Db, workspaceId: string, webhookId: string) {
  const webhook = await findWebhook(db, workspaceId, webhookId)
  if (!webhook.enabled) throw conflict('The webhook is disabled; enable it before sending a test event')
  const eventId = newId('event')
  await db.transaction(async (tx) => {
    await tx.insert(events).values({ id: eventId, workspaceId, type: TEST_EVENT_TYPE, data: { webhook_id: webhookId, message: 'A test event sent from Chorus. Answer 2xx to mark it delivered.' } })
    await tx.delete(eventDispatch).where(eq(eventDispatch.eventId, eventId))
    await tx.delete(webhookDispatch).where(eq(webhookDispatch.eventId, eventId))
    await tx.insert(webhookDeliveries).values({ webhookId, eventId, status: 'pending', manual: true })
  })
  return { status: 'queued' as const, webhook_id: webhookId, event_id: eventId }
}
