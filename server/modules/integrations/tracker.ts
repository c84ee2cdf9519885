// The tracker side: live teams, an issue made from a post and linked back, and the provider's signed
// webhook that completes the linked post when its issue is done.
import { and, asc, eq, isNull, lt, sql } from 'drizzle-orm'
import { integrations, posts, statuses, trackerWebhookDeliveries, type TrackerIssue } from '../../db/schema/index.ts'
import { ApiError, conflict } from '../../errors.ts'
import { sha256Hex, timingSafeEqual } from '../../lib/secrets.ts'
import { portalPostUrl } from '../portal/links.ts'
import { getPost } from '../posts/queries.ts'
import { updatePost } from '../posts/service.ts'
import { withProvider, type IntegrationDeps } from './service.ts'
import { hmacHex } from './signing.ts'
import { ISSUE_CREATE_MUTATION, ISSUE_STATE_QUERY, TEAMS_QUERY, trackerGraphql } from './tracker-api.ts'

/** Inbound deliveries whose `webhookTimestamp` is further than this from now are refused (replays). */
export const WEBHOOK_TOLERANCE_MS = 60_000

export async function listTeams(deps: IntegrationDeps, workspaceId: string) {
  const data = await withProvider(deps, workspaceId, 'tracker', (token) =>
    trackerGraphql<{ teams: { nodes: { id: string; name: string; key: string }[] } }>(deps.tracker, token, TEAMS_QUERY))
  return (data.teams?.nodes ?? []).map((team) => ({ id: String(team.id), name: String(team.name), key: String(team.key ?? '') }))
}

/** Creates the issue (title, body, a link back to the public post) and stores it on the post. */
export async function createTrackerIssue(deps: IntegrationDeps, baseUrl: string, workspace: { id: string; slug: string }, postId: string, teamId: string) {
  const post = await getPost(deps.db, workspace.id, postId)
  if (post.tracker_issue) throw conflict(`The post is already linked to ${post.tracker_issue.identifier}`)
  const link = portalPostUrl(baseUrl, workspace.slug, post.id)
  const description = `${post.body}${post.body ? '\n\n---\n' : ''}From Chorus (${post.votes} vote${post.votes === 1 ? '' : 's'}, board ${post.board}): ${link}`
  const data = await withProvider(deps, workspace.id, 'tracker', (token) =>
    trackerGraphql<{ issueCreate: { success: boolean; issue: TrackerIssue | null } }>(deps.tracker, token, ISSUE_CREATE_MUTATION, { input: { teamId, title: post.title, description } }))
  const issue = data.issueCreate?.issue
  if (!data.issueCreate?.success || !issue?.id) throw new ApiError('UPSTREAM_ERROR', 'The issue-tracker provider refused or failed', { detail: 'issueCreate did not succeed' })
  const trackerIssue: TrackerIssue = { id: String(issue.id), identifier: String(issue.identifier), url: String(issue.url) }
  // Only the first of two concurrent calls links its issue.
  const linked = await deps.db.update(posts).set({ trackerIssue, updatedAt: sql`now()` })
    .where(and(eq(posts.id, post.id), eq(posts.workspaceId, workspace.id), isNull(posts.trackerIssue))).returning({ id: posts.id })
  if (!linked.length) throw conflict('The post was linked to another issue meanwhile')
  return getPost(deps.db, workspace.id, post.id)
}

const refused = (why: string) => new ApiError('UNAUTHENTICATED', `Tracker webhook refused: ${why}`)

interface TrackerWebhook {
  type?: string
  action?: string
  organizationId?: string
  webhookTimestamp?: number
  data?: { id?: string; state?: { type?: string; name?: string } }
}

export type InboundOutcome = 'applied' | 'ignored'

/**
 * Verifies and applies one inbound tracker delivery: `Linear-Signature` (hex HMAC-SHA256 of the raw
 * body with the app's webhook secret), `webhookTimestamp` within a minute, and a delivery id never
 * seen before (`Linear-Delivery`, else the body's hash). An issue that reached a `completed` state
 * moves its linked posts to their workspace's first `complete` status through the posts service, once
 * the tracker confirms the issue is still completed.
 */
export async function receiveTrackerWebhook(deps: IntegrationDeps, secret: string, raw: string, headers: Headers, now = Date.now()): Promise<InboundOutcome> {
  const { db } = deps
  const signature = headers.get('linear-signature')?.trim().toLowerCase() ?? ''
  if (!signature || !timingSafeEqual(signature, await hmacHex(secret, raw))) throw refused('bad signature')
  let payload: TrackerWebhook
  try {
    payload = JSON.parse(raw)
  } catch {
    throw new ApiError('BAD_REQUEST', 'The webhook body is not JSON')
  }
  const timestamp = payload.webhookTimestamp
  if (typeof timestamp !== 'number' || Math.abs(now - timestamp) > WEBHOOK_TOLERANCE_MS) throw refused('timestamp missing or more than a minute off')
  const deliveryId = headers.get('linear-delivery')?.trim() || `sha256:${await sha256Hex(raw)}`
  // Older ids cannot come back: their timestamps are refused above. Keep an hour for clock skew.
  await db.delete(trackerWebhookDeliveries).where(lt(trackerWebhookDeliveries.receivedAt, sql`now() - interval '1 hour'`))
  const fresh = await db.insert(trackerWebhookDeliveries).values({ deliveryId }).onConflictDoNothing().returning({ id: trackerWebhookDeliveries.deliveryId })
  if (!fresh.length) throw conflict('This delivery was already received')
  try {
    return await applyIssueUpdate(deps, payload)
  } catch (error) {
    // Not applied: let the provider's retry through.
    await db.delete(trackerWebhookDeliveries).where(eq(trackerWebhookDeliveries.deliveryId, deliveryId))
    throw error
  }
}

/**
 * Deliveries can arrive out of order (completed, then reopened, delivered the other way round), so the
 * issue's state is read again from the tracker with the workspace's token before the post moves.
 */
async function stillCompleted(deps: IntegrationDeps, workspaceId: string, issueId: string) {
  const data = await withProvider(deps, workspaceId, 'tracker', (token) =>
    trackerGraphql<{ issue: { state?: { type?: string } } | null }>(deps.tracker, token, ISSUE_STATE_QUERY, { id: issueId }))
  return data.issue?.state?.type === 'completed'
}

async function applyIssueUpdate(deps: IntegrationDeps, payload: TrackerWebhook): Promise<InboundOutcome> {
  const { db } = deps
  const issueId = payload.data?.id
  if (payload.type !== 'Issue' || !issueId || payload.data?.state?.type !== 'completed') return 'ignored'
  const linked = await db.select({ post: posts, integration: integrations }).from(posts)
    .innerJoin(integrations, and(eq(integrations.workspaceId, posts.workspaceId), eq(integrations.provider, 'tracker'), eq(integrations.status, 'active')))
    .where(sql`${posts.trackerIssue}->>'id' = ${issueId} and ${posts.trackerIssue} is not null`)
  let applied = false
  for (const { post, integration } of linked) {
    // The delivery must come from the organization the workspace connected.
    if (payload.organizationId && integration.externalId && payload.organizationId !== integration.externalId) continue
    const [complete] = await db.select().from(statuses).where(and(eq(statuses.workspaceId, post.workspaceId), eq(statuses.kind, 'complete'))).orderBy(asc(statuses.position)).limit(1)
    if (!complete || complete.id === post.statusId) continue
    if (!(await stillCompleted(deps, post.workspaceId, issueId))) continue
    await updatePost(db, post.workspaceId, { kind: 'service' }, post.id, { status: complete.id })
    applied = true
  }
  return applied ? 'applied' : 'ignored'
}
