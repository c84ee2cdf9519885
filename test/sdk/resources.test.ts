// Each resource method sends the method, path (as in sdk/openapi.json) and body it should, to a recording fake.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Chorus, ChorusError } from '../../sdk/src/index.ts'
import { json, startFakeApi } from '../helpers/fake-api.ts'

let fake: ReturnType<typeof startFakeApi>
let workspaces: unknown[] = [{ slug: 'acme' }]
beforeAll(() => {
  fake = startFakeApi(({ method, path }) => {
    if (path === '/workspaces') return json(200, workspaces)
    if (method === 'DELETE') return new Response(null, { status: 204 })
    return json(path.endsWith('/posts') || path.endsWith('/comments') || path.endsWith('/votes') ? 200 : 201, { items: [], page: 1, per_page: 20, total: 0, total_pages: 0 })
  })
})
afterAll(() => fake.close())

const client = (workspace?: string) => new Chorus({ apiKey: 'chorus_sk_test', baseUrl: fake.baseUrl, workspace })
const sent = () => fake.requests.splice(0).map(({ method, path, query, body }) => [`${method} ${path}${query.size ? `?${query}` : ''}`, body])

describe('resources', () => {
  test('posts, comments, votes, boards, statuses, labels, workspaces', async () => {
    const chorus = client()
    await chorus.posts.list({ board: 'ideas', status: 'planned', q: 'dark' })
    await chorus.posts.get('post_1')
    await chorus.posts.create({ board: 'ideas', title: 'Dark mode', email: 'ada@example.com' })
    await chorus.posts.update('post_1', { status: 'planned' })
    await chorus.posts.delete('post_1')
    await chorus.posts.merge('post_1', { into_post_id: 'post_2' })
    await chorus.posts.createTrackerIssue('post_1', { team_id: 'team_1' })
    await chorus.comments.list('post_1')
    await chorus.comments.get('cmt_1')
    await chorus.comments.create('post_1', { body: 'Yes please', internal: true })
    await chorus.comments.update('cmt_1', { body: 'Edited' })
    await chorus.comments.delete('cmt_1')
    await chorus.votes.list('post_1', { per_page: 50 })
    await chorus.votes.toggle('post_1', { email: 'ada@example.com' })
    await chorus.boards.list()
    await chorus.boards.get('ideas')
    await chorus.statuses.list()
    await chorus.labels.list()
    await chorus.labels.create({ name: 'Bug', color: '#ff0000' })
    await chorus.workspaces.list()
    await chorus.workspaces.get('acme')
    expect(sent()).toEqual([
      ['GET /boards/ideas/posts?status=planned&q=dark&page=1', undefined],
      ['GET /posts/post_1', undefined],
      ['POST /boards/ideas/posts', { title: 'Dark mode', email: 'ada@example.com' }],
      ['PATCH /posts/post_1', { status: 'planned' }],
      ['DELETE /posts/post_1', undefined],
      ['POST /posts/post_1/merge', { into_post_id: 'post_2' }],
      ['POST /posts/post_1/tracker-issue', { team_id: 'team_1' }],
      ['GET /posts/post_1/comments?page=1', undefined],
      ['GET /comments/cmt_1', undefined],
      ['POST /posts/post_1/comments', { body: 'Yes please', internal: true }],
      ['PATCH /comments/cmt_1', { body: 'Edited' }],
      ['DELETE /comments/cmt_1', undefined],
      ['GET /posts/post_1/votes?per_page=50&page=1', undefined],
      ['POST /posts/post_1/votes', { email: 'ada@example.com' }],
      ['GET /boards', undefined],
      ['GET /boards/ideas', undefined],
      ['GET /statuses', undefined],
      ['GET /labels', undefined],
      ['POST /labels', { name: 'Bug', color: '#ff0000' }],
      ['GET /workspaces', undefined],
      ['GET /workspaces/acme', undefined],
    ])
  })

  test('oauthGrants: a dashboard session (credentials include, no key) lists and deletes grants', async () => {
    const chorus = new Chorus({ credentials: 'include', baseUrl: fake.baseUrl })
    await chorus.oauthGrants.list('ws_1')
    expect(await chorus.oauthGrants.delete('ogf_1')).toBeUndefined()
    const requests = fake.requests.splice(0)
    expect(requests.map(({ method, path, query }) => `${method} ${path}${query.size ? `?${query}` : ''}`)).toEqual(['GET /oauth/grants?workspace_id=ws_1', 'DELETE /oauth/grants/ogf_1'])
    expect(requests.every((request) => !request.headers.has('authorization'))).toBe(true)
    expect(() => new Chorus({ baseUrl: fake.baseUrl } as never)).toThrow(/apiKey/)
  })

  test("webhooks live under the key's workspace, looked up once", async () => {
    const chorus = client()
    await chorus.webhooks.list()
    await chorus.webhooks.create({ url: 'https://example.com/hook', events: ['post.created'] })
    await chorus.webhooks.update('wh_1', { enabled: false })
    await chorus.webhooks.logs('wh_1', { success: false, limit: 10 })
    await chorus.webhooks.retry('dlv_1')
    expect(await chorus.webhooks.delete('wh_1')).toBeUndefined()
    expect(sent()).toEqual([
      ['GET /workspaces', undefined],
      ['GET /workspaces/acme/webhooks', undefined],
      ['POST /workspaces/acme/webhooks', { url: 'https://example.com/hook', events: ['post.created'] }],
      ['PATCH /workspaces/acme/webhooks/wh_1', { enabled: false }],
      ['GET /workspaces/acme/webhooks/wh_1/logs?success=false&limit=10', undefined],
      ['POST /workspaces/acme/webhooks/logs/dlv_1/retry', undefined],
      ['DELETE /workspaces/acme/webhooks/wh_1', undefined],
    ])
  })

  test('moderation: the held queue and blocks under the workspace', async () => {
    const chorus = client('acme')
    await chorus.moderation.list({ per_page: 50 })
    await chorus.moderation.approve('post_1')
    await chorus.moderation.reject('post_2')
    await chorus.moderation.listBlocks()
    await chorus.moderation.block({ kind: 'domain', value: 'spam.example', note: 'link spam' })
    expect(await chorus.moderation.unblock('blk_1')).toBeUndefined()
    expect(sent()).toEqual([
      ['GET /workspaces/acme/moderation?per_page=50&page=1', undefined],
      ['POST /workspaces/acme/moderation/post_1/approve', undefined],
      ['POST /workspaces/acme/moderation/post_2/reject', undefined],
      ['GET /workspaces/acme/moderation/blocks', undefined],
      ['POST /workspaces/acme/moderation/blocks', { kind: 'domain', value: 'spam.example', note: 'link spam' }],
      ['DELETE /workspaces/acme/moderation/blocks/blk_1', undefined],
    ])
  })

  test('a workspace given to the client skips the look-up; an unknown one is a clear error, asked again next time', async () => {
    await client('globex').webhooks.list()
    expect(sent()).toEqual([['GET /workspaces/globex/webhooks', undefined]])
    workspaces = []
    const chorus = client()
    expect(await chorus.webhooks.list().catch((e: ChorusError) => e.code)).toBe('WORKSPACE_UNKNOWN')
    workspaces = [{ slug: 'acme' }]
    await chorus.webhooks.list()
    expect(sent().map(([line]) => line)).toEqual(['GET /workspaces', 'GET /workspaces', 'GET /workspaces/acme/webhooks'])
  })

  test('path parameters are encoded, and an empty one is refused before any request', async () => {
    await client().posts.get('post 1/../x')
    expect(sent()).toEqual([['GET /posts/post%201%2F..%2Fx', undefined]])
    await expect(client().posts.get('')).rejects.toThrow(TypeError)
    expect(sent()).toEqual([])
  })
})
