// Compiled by `npm run typecheck`, never run: wrong request bodies must not compile. Every
// `@ts-expect-error` fails the typecheck if the line below it stops being an error.
import { Chorus, ChorusError, type components, type DocumentedRoute, type ErrorCode, type Health, type paths, type Post, type ResponseMeta, type Webhook, type WithResponse } from '../../sdk/src/index.ts'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const assertType = <T extends true>(): T | undefined => undefined

export async function wrongBodiesDoNotCompile(chorus: Chorus) {
  await chorus.posts.create({ board: 'ideas', title: 'Dark mode', labels: ['ui'], email: 'ada@example.com' })
  // @ts-expect-error title must be a string
  await chorus.posts.create({ board: 'ideas', title: 42 })
  // @ts-expect-error unknown field (the API answers 422 for it)
  await chorus.posts.create({ board: 'ideas', title: 'Dark mode', titel: 'typo' })
  // @ts-expect-error the board is required
  await chorus.posts.create({ title: 'Dark mode' })
  // @ts-expect-error a vote is cast for an end user by `email` or `end_user_id`
  await chorus.votes.toggle('post_1', { mail: 'ada@example.com' })
  // @ts-expect-error not an event kind
  await chorus.webhooks.create({ url: 'https://example.com/hook', events: ['post.exploded'] })
  // @ts-expect-error sort is top, new or trending
  chorus.posts.list({ board: 'ideas', sort: 'oldest' })
  // @ts-expect-error a label needs a name
  await chorus.labels.create({ color: '#fff' })
}

export async function responsesAreTyped(chorus: Chorus) {
  const post: Post = await chorus.posts.get('post_1')
  const votes: number = post.votes
  for await (const item of chorus.posts.list({ board: 'ideas' })) item.title.toUpperCase()
  const { voted }: { voted: boolean } = await chorus.votes.toggle('post_1', { email: 'ada@example.com' })
  return [votes, voted]
}

// Every operation's types are the generated ones; a route the document lacks is a type error in routes.ts.
type GeneratedHealth = paths['/health']['get']['responses'][200]['content']['application/json']
assertType<Equal<Health, GeneratedHealth>>()
assertType<Equal<Awaited<ReturnType<Chorus['health']>>, WithResponse<GeneratedHealth>>>()
// What a call resolves with is the body plus its response's status, headers and request id.
assertType<Equal<Awaited<ReturnType<Chorus['posts']['get']>>, Post & { readonly lastResponse: ResponseMeta }>>()

// The error codes come from the server's enum through the document.
export function errorCodesAreAUnion(error: unknown) {
  if (!(error instanceof ChorusError)) return
  const known: boolean = error.code === 'INSUFFICIENT_SCOPE' || error.code === 'TIMEOUT' || error.code === 'HTTP_502'
  // @ts-expect-error not an error code of the API or the SDK
  const unknown: boolean = error.code === 'NO_SUCH_CODE'
  return [known, unknown]
}
assertType<Equal<Extract<ErrorCode, 'NOT_FOUND' | 'VALIDATION_ERROR' | 'RATE_LIMITED'>, 'NOT_FOUND' | 'VALIDATION_ERROR' | 'RATE_LIMITED'>>()

export const documented: DocumentedRoute = 'GET /labels'
// @ts-expect-error the server documents no trailing slash, so ROUTES could not name this route
export const undocumented: DocumentedRoute = 'GET /labels/'
// @ts-expect-error a documented path under another method is not a route either
export const wrongMethod: DocumentedRoute = 'PUT /labels'

// The exported names are the document's component schemas, and the operations answer with them.
assertType<Equal<Post, components['schemas']['Post']>>()
assertType<Equal<Webhook, components['schemas']['Webhook']>>()
assertType<Equal<paths['/posts/{post_id}']['get']['responses'][200]['content']['application/json'], Post>>()
