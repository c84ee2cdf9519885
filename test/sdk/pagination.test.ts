import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Chorus } from '../../sdk/src/index.ts'
import { json, startFakeApi } from '../helpers/fake-api.ts'

const POSTS = Array.from({ length: 7 }, (_, i) => ({ id: `post_${i + 1}`, title: `Idea ${i + 1}` }))

let fake: ReturnType<typeof startFakeApi>
let chorus: Chorus
beforeAll(() => {
  // Pages the way the API does (docs/api.md#lists-and-paging): `page` from 1, `per_page` default 20, the envelope around them.
  fake = startFakeApi(({ query }) => {
    const page = Number(query.get('page') ?? 1)
    const perPage = Number(query.get('per_page') ?? 20)
    const items = POSTS.slice((page - 1) * perPage, page * perPage)
    return json(200, { items, page, per_page: perPage, total: POSTS.length, total_pages: Math.ceil(POSTS.length / perPage) })
  })
  chorus = new Chorus({ apiKey: 'chorus_sk_test', baseUrl: fake.baseUrl })
})
afterAll(() => fake.close())

const pagesAsked = () => fake.requests.splice(0).map((request) => `${request.path}?${request.query}`)

describe('list()', () => {
  test('for await walks every item across pages, keeping the filters', async () => {
    const seen: string[] = []
    for await (const post of chorus.posts.list({ board: 'ideas', per_page: 3, sort: 'top' })) seen.push(post.id)
    expect(seen).toEqual(POSTS.map((post) => post.id))
    expect(pagesAsked()).toEqual([
      '/boards/ideas/posts?per_page=3&sort=top&page=1',
      '/boards/ideas/posts?per_page=3&sort=top&page=2',
      '/boards/ideas/posts?per_page=3&sort=top&page=3',
    ])
  })

  test('await gives the first page and its envelope, with one request', async () => {
    const page = await chorus.posts.list({ board: 'ideas', per_page: 3 })
    expect(page).toMatchObject({ page: 1, per_page: 3, total: 7, total_pages: 3 })
    expect(page.items.map((post) => post.id)).toEqual(['post_1', 'post_2', 'post_3'])
    expect(pagesAsked()).toHaveLength(1)
  })

  test('nothing is requested until awaited or iterated; the first page is fetched once', async () => {
    const list = chorus.posts.list({ board: 'ideas', per_page: 5 })
    expect(pagesAsked()).toHaveLength(0)
    await list
    const ids: string[] = []
    for await (const post of list) ids.push(post.id)
    expect(ids).toHaveLength(7)
    expect(pagesAsked()).toEqual(['/boards/ideas/posts?per_page=5&page=1', '/boards/ideas/posts?per_page=5&page=2'])
  })

  test('breaking out of the loop stops fetching', async () => {
    for await (const post of chorus.posts.list({ board: 'ideas', per_page: 2 })) if (post.id === 'post_3') break
    expect(pagesAsked()).toHaveLength(2)
  })

  test('pages() yields whole pages, from the page asked for', async () => {
    const numbers: number[] = []
    for await (const page of chorus.comments.list('post_1', { page: 2, per_page: 2 }).pages()) numbers.push(page.page)
    expect(numbers).toEqual([2, 3, 4])
    expect(pagesAsked()[0]).toBe('/posts/post_1/comments?page=2&per_page=2')
  })

  test('an empty page ends the walk even if total_pages says otherwise', async () => {
    const liar = startFakeApi(({ query }) => json(200, { items: query.get('page') === '1' ? [{ id: 'vote_1' }] : [], page: Number(query.get('page')), per_page: 1, total: 50, total_pages: 50 }))
    const votes: string[] = []
    for await (const vote of new Chorus({ apiKey: 'k', baseUrl: liar.baseUrl }).votes.list('post_1')) votes.push(vote.id)
    expect(votes).toEqual(['vote_1'])
    expect(liar.requests).toHaveLength(2)
    liar.close()
  })
})
