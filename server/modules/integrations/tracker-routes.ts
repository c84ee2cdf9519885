import { Elysia, t } from 'elysia'
import type { AppContext } from '../../context.ts'
import { notFound } from '../../errors.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { PostIdParams, PostResponse } from '../posts/model.ts'
import { TrackerIssueCreate, TrackerWebhookResponse } from './model.ts'
import { integrationDeps } from './service.ts'
import { createTrackerIssue, receiveTrackerWebhook } from './tracker.ts'

const tags = ['Integrations']

/** The tracker routes outside the dashboard area: a feedback route keys may call, and the provider's webhook. */
export const trackerModule = (ctx: AppContext) => {
  const ready = integrationDeps(ctx)
  return new Elysia()
    .use(authPlugin(ctx))
    .post('/posts/:post_id/tracker-issue', async ({ workspace, params, body, set }) => {
      const post = await createTrackerIssue(await ready, ctx.config.baseUrl, workspace, params.post_id, body.team_id)
      set.status = 201
      return post
    }, {
      params: PostIdParams,
      body: TrackerIssueCreate,
      workspace: { scope: 'posts:write' },
      response: { 201: PostResponse },
      detail: {
        operationId: 'createTrackerIssue', tags, 'x-upstream-error': true, summary: 'Make a tracker issue from a post and link it',
        description: "Creates the issue in the team (`issueCreate`: the post's title, its body and a link back to the public post) and returns the post with `tracker_issue: {id, identifier, url}`. When the issue reaches a completed state, the tracker's webhook moves the post to the workspace's first `complete` status, which raises `status.changed` like any other change. 409 when the post is already linked or the tracker is not connected; 502 UPSTREAM_ERROR with the provider's error in `detail` when the tracker refuses (an unknown team, a revoked token).",
      },
    })
    .post('/integrations/tracker/webhook', async ({ body, request }) => {
      const secret = ctx.config.trackerWebhookSecret
      if (!secret) throw notFound('Tracker webhook')
      const outcome = await receiveTrackerWebhook(await ready, secret, body, request.headers)
      ctx.log.info('tracker webhook', { outcome })
      return { received: true, outcome }
    }, {
      // The signature covers the exact bytes, so the body is read as text and parsed after verification.
      parse: 'text',
      body: t.String({ maxLength: 512 * 1024 }),
      response: { 200: TrackerWebhookResponse },
      detail: {
        operationId: 'receiveTrackerWebhook', tags, security: [], summary: "The issue tracker's signed webhook (Linear-compatible)",
        description: 'Configure it in the tracker app with TRACKER_WEBHOOK_SECRET (404 while unset). Checked in order: `Linear-Signature` is the hex HMAC-SHA256 of the raw body with that secret (else 401); `webhookTimestamp` (Unix ms) in the body is within 60 s of now (else 401, a replay); the delivery id (`Linear-Delivery`, else the body\'s SHA-256) was never seen before (else 409; ids are kept in the database, so every server process agrees). An `Issue` whose `data.state.type` is `completed` moves every post linked to it, in a workspace whose tracker connection is active (and whose organization matches `organizationId` when given), to that workspace\'s first `complete` status, once the tracker confirms over GraphQL that the issue is still completed (deliveries can arrive out of order); other deliveries are acknowledged as `ignored`. A tracker that cannot be asked is 502, and the delivery may be retried.',
      },
    })
}
