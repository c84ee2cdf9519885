// Compiled by `npm run typecheck`, never run: webhook events are a union over `type`, each with the
// `data` the document's `webhooks` section gives that kind. Every `@ts-expect-error` fails the
// typecheck if the line below it stops being an error.
import { verifyWebhook, type Comment, type Post, type WebhookEvent, type WebhookEventData, type WebhookEventType, type webhooks } from '../../sdk/src/index.ts'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const assertType = <T extends true>(): T | undefined => undefined

/** Every event kind of the generated document, and no other. */
assertType<Equal<WebhookEventType, keyof webhooks & string>>()
assertType<Equal<WebhookEventData<'post.created'>, { post: Post }>>()
assertType<Equal<WebhookEventData<'comment.created'>, { comment: Comment; post_id: string }>>()
assertType<Equal<WebhookEvent<'post.merged'>['type'], 'post.merged'>>()

export async function handle(body: string, headers: Headers, secret: string): Promise<string> {
  const event = await verifyWebhook(body, headers, secret)
  assertType<Equal<typeof event, WebhookEvent>>()
  // @ts-expect-error `data` differs by kind: not every event has a post
  event.data.post
  switch (event.type) {
    case 'post.created':
      return event.data.post.title
    case 'status.changed':
      return `${event.data.from_status} → ${event.data.to_status}`
    case 'comment.created':
      // @ts-expect-error a comment event has no post, only its id
      event.data.post
      return event.data.comment.body
    case 'vote.created':
      return String(event.data.votes)
    default:
      return event.type
  }
}

// @ts-expect-error not an event kind
export type Unknown = WebhookEvent<'post.exploded'>
