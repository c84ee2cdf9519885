// Compiled by `npm run typecheck`, never run: wrong request bodies must not compile. Every
// `@ts-expect-error` fails the typecheck if the line below it stops being an error.
import { Chorus, type Health, type paths, type Post } from '../../sdk/src/index.ts'

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

// Where the server documents a route, its type is the generated one, not the hand-written fallback.
type GeneratedHealth = paths['/health']['get']['responses'][200]['content']['application/json']
assertType<Equal<Health, GeneratedHealth>>()
assertType<Equal<Awaited<ReturnType<Chorus['health']>>, GeneratedHealth>>()
