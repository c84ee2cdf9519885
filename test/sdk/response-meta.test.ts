// What a successful call tells besides its body (request id, status, headers), and how the SDK names
// itself to the server (User-Agent, or X-Chorus-Client in browsers).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import sdkPackage from '../../sdk/package.json'
import { Chorus, ChorusError, VERSION } from '../../sdk/src/index.ts'
import { clientHeader } from '../../sdk/src/core/client-id.ts'
import { json, startFakeApi } from '../helpers/fake-api.ts'

let fake: ReturnType<typeof startFakeApi>
beforeAll(() => {
  fake = startFakeApi(({ method, path, query }, index) => {
    const id = { 'x-request-id': `req_${index}`, 'ratelimit-remaining': '599' }
    if (method === 'POST') return json(201, { id: 'post_1', title: 'Dark mode' }, id)
    if (path === '/boards') return json(200, [{ slug: 'ideas' }], id)
    if (path.endsWith('/posts')) {
      const page = Number(query.get('page') ?? 1)
      return json(200, { items: [{ id: `post_${page}` }], page, per_page: 1, total: 2, total_pages: 2 }, id)
    }
    if (path === '/posts/post_gone') return new Response(null, { status: 204, headers: id })
    if (path === '/posts/post_missing') return json(404, { code: 'NOT_FOUND', message: 'No such post', detail: null, request_id: `req_${index}` })
    return json(200, { id: 'post_1', title: 'Dark mode' }, id)
  })
})
afterAll(() => fake.close())

const client = () => new Chorus({ apiKey: 'chorus_sk_test', baseUrl: fake.baseUrl, workspace: 'acme', maxRetries: 0 })

describe('happy', () => {
  test('a returned object carries its own lastResponse, left out of JSON, spreads and keys', async () => {
    const chorus = client()
    const post = await chorus.posts.create({ board: 'ideas', title: 'Dark mode' })
    expect(post.lastResponse.status).toBe(201)
    expect(post.lastResponse.requestId).toMatch(/^req_\d+$/)
    expect(post.lastResponse.headers.get('ratelimit-remaining')).toBe('599')
    expect(Object.keys(post)).toEqual(['id', 'title'])
    expect(JSON.parse(JSON.stringify(post))).toEqual({ id: 'post_1', title: 'Dark mode' })
    expect({ ...post } as unknown).toEqual({ id: 'post_1', title: 'Dark mode' })
    expect(chorus.lastResponse).toBe(post.lastResponse)
  })

  test('arrays and every list page carry theirs; the client keeps the latest', async () => {
    const chorus = client()
    const boards = await chorus.boards.list()
    expect(boards.lastResponse.requestId).toMatch(/^req_\d+$/)
    const pages = []
    for await (const page of chorus.posts.list({ board: 'ideas' }).pages()) pages.push(page)
    expect(pages.map((page) => page.items[0]!.id)).toEqual(['post_1', 'post_2'])
    const [first, second] = pages.map((page) => page.lastResponse.requestId)
    expect(first).not.toBe(second)
    expect(chorus.lastResponse?.requestId).toBe(second!)
    expect((await chorus.posts.list({ board: 'ideas' })).lastResponse.status).toBe(200)
  })

  test('a 204 resolves with undefined, and the client still records its response', async () => {
    const chorus = client()
    expect(await chorus.posts.delete('post_gone')).toBeUndefined()
    expect(chorus.lastResponse).toMatchObject({ status: 204 })
    expect(chorus.lastResponse!.requestId).toMatch(/^req_\d+$/)
  })

  test('sends User-Agent chorus-sdk/<version> (<runtime>/<version>) on every request', async () => {
    fake.requests.length = 0
    await client().boards.list()
    expect(fake.requests[0]!.headers.get('user-agent')).toBe(`chorus-sdk/${VERSION} (bun/${Bun.version})`)
    expect(fake.requests[0]!.headers.get('x-chorus-client')).toBeNull()
  })

  test('VERSION is the package version', () => {
    expect(VERSION).toBe(sdkPackage.version)
  })

  test('names the runtime it finds, and in a browser uses X-Chorus-Client instead', () => {
    expect(clientHeader({ process: { versions: { node: '18.20.4' } } })).toEqual(['user-agent', `chorus-sdk/${VERSION} (node/18.20.4)`])
    expect(clientHeader({ Deno: { version: { deno: '2.1.0' } }, navigator: { userAgent: 'Deno/2.1.0' } })).toEqual(['user-agent', `chorus-sdk/${VERSION} (deno/2.1.0)`])
    expect(clientHeader({ navigator: { userAgent: 'Cloudflare-Workers' } })).toEqual(['user-agent', `chorus-sdk/${VERSION} (Cloudflare-Workers)`])
    expect(clientHeader({ document: {}, navigator: { userAgent: 'Mozilla/5.0' } })).toEqual(['x-chorus-client', `chorus-sdk/${VERSION} (browser)`])
  })
})

describe('errors', () => {
  test('a failed call leaves lastResponse alone and carries its request id on the error', async () => {
    const chorus = client()
    const post = await chorus.posts.create({ board: 'ideas', title: 'Dark mode' })
    const error = await chorus.posts.get('post_missing').catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(ChorusError)
    expect((error as ChorusError).requestId).toMatch(/^req_\d+$/)
    expect(chorus.lastResponse).toBe(post.lastResponse)
  })
})

describe('security', () => {
  test('a caller header cannot be hidden behind our User-Agent, and ours never carries the key', async () => {
    fake.requests.length = 0
    await new Chorus({ apiKey: 'chorus_sk_test', baseUrl: fake.baseUrl, headers: { 'User-Agent': 'my-app/1.0' } }).boards.list()
    expect(fake.requests[0]!.headers.get('user-agent')).toBe('my-app/1.0')
    await client().boards.list()
    expect(fake.requests[1]!.headers.get('user-agent')).not.toContain('chorus_sk_')
  })
})
