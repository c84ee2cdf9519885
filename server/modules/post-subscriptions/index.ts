import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { escapeHtml as escape } from '../../lib/mail.ts'
import { readPage } from '../../lib/paging.ts'
import { PublicChangelogParams } from '../changelog/model.ts'
import { unsubscribeHtml } from '../changelog/unsubscribe.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { PostIdParams } from '../posts/model.ts'
import { NotificationUnsubscribeQuery, SubscriberListQuery, SubscriberListResponse } from './model.ts'
import { isUnsubscribed, listSubscribers, unsubscribe } from './service.ts'

const invalid = () => unsubscribeHtml('Link not valid', '<p>This unsubscribe link is not valid. It may belong to another workspace or be mistyped.</p>', 404)

/** GET (`confirm` false) shows a button (mail scanners follow links); POST unsubscribes, from the button or as RFC 8058 one-click. */
async function unsubscribePage(ctx: AppContext, slug: string, query: { token: string; post?: string }, confirm: boolean) {
  try {
    if (confirm) {
      const { workspaceName, post } = await unsubscribe(ctx.db, slug, query.token, query.post)
      return unsubscribeHtml('You are unsubscribed', post
        ? `<p>You will get no more e-mail about “${escape(post.title)}” from ${escape(workspaceName)}.</p>`
        : `<p>You will get no more e-mail from ${escape(workspaceName)}.</p>`)
    }
    const { done, workspaceName, post } = await isUnsubscribed(ctx.db, slug, query.token, query.post)
    if (done) return unsubscribeHtml('You are unsubscribed', `<p>You already get no ${post ? `e-mail about “${escape(post.title)}”` : 'e-mail'} from ${escape(workspaceName)}.</p>`)
    return unsubscribeHtml('Unsubscribe', `<p>${post ? `Stop e-mail about “${escape(post.title)}” from ${escape(workspaceName)}?` : `Stop all e-mail from ${escape(workspaceName)}?`}</p><form method="post"><button type="submit">Unsubscribe</button></form>`)
  } catch (error) {
    if (error instanceof ApiError && error.code === 'NOT_FOUND') return invalid()
    throw error
  }
}

export const postSubscriptionsModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .get('/posts/:post_id/subscribers', ({ workspace, params, query }) => listSubscribers(ctx.db, workspace.id, params.post_id, readPage(query)), {
      params: PostIdParams,
      query: SubscriberListQuery,
      workspace: { scope: 'posts:read' },
      response: { 200: SubscriberListResponse },
      detail: { operationId: 'listPostSubscribers', tags: ['Posts'], summary: "A post's subscribers: who hears of its changes, and why", description: 'With an API key (`posts:read`) or a dashboard session. End users follow a post they wrote, voted for or commented on publicly, and the posts merged into it. They are told of status changes, public team replies and merges (docs/notifications.md); `mail_blocked` says why e-mail would not reach one. A post of another workspace is 404.' },
    })
    .get('/public/:workspace_slug/notifications/unsubscribe', ({ params, query }) => unsubscribePage(ctx, params.workspace_slug, query, false), {
      params: PublicChangelogParams,
      query: NotificationUnsubscribeQuery,
      detail: { hide: true },
    })
    .post('/public/:workspace_slug/notifications/unsubscribe', ({ params, query }) => unsubscribePage(ctx, params.workspace_slug, query, true), {
      params: PublicChangelogParams,
      query: NotificationUnsubscribeQuery,
      parse: 'text',
      detail: { hide: true },
    })
