// The published artefact, not the sources: `npm pack` in sdk/, unpack as a consumer's node_modules
// would hold it, then import it with Node through the package's `exports` and typecheck against its .d.ts.
import { beforeAll, describe, expect, test } from 'bun:test'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { json, startFakeApi } from '../helpers/fake-api.ts'
import { packedSdk, run, type PackedSdk } from '../helpers/packed-sdk.ts'

const TSC = new URL('../../node_modules/typescript/bin/tsc', import.meta.url).pathname
let consumer: string
let packed: PackedSdk

beforeAll(async () => {
  packed = await packedSdk()
  consumer = packed.consumer
}, 60_000)

describe('npm pack', () => {
  test('ships the built ESM, declarations, README and document, and nothing else', () => {
    const files = packed.files.map((file) => file.path)
    expect(files).toContain('dist/index.js')
    expect(files).toContain('dist/index.d.ts')
    expect(files).toContain('README.md')
    expect(files).toContain('package.json')
    expect(files.filter((file) => !/^(dist\/.+\.(js|d\.ts)|README\.md|package\.json|openapi\.json)$/.test(file))).toEqual([])
  })

  test('Node imports the package and it works end to end', async () => {
    const fake = startFakeApi(({ headers }) => json(200, { id: 'post_1', auth: headers.get('authorization') }))
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    const body = JSON.stringify({ id: 'evt_1', type: 'post.created', timestamp: '2026-11-22T09:30:00.000Z', workspace_id: 'ws_1', data: {} })
    const now = new Date()
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('evt_1', now, body) }
    await writeFile(join(consumer, 'check.mjs'), `
      import { Chorus, NotFoundError, verifyWebhook, ROUTES } from '@chorus/sdk'
      const chorus = new Chorus({ apiKey: 'chorus_sk_packed', baseUrl: process.env.BASE_URL })
      const post = await chorus.posts.get('post_1')
      const event = await verifyWebhook(process.env.BODY, JSON.parse(process.env.HEADERS), process.env.SECRET)
      console.log(JSON.stringify({ post, event: event.id, notFound: typeof NotFoundError, route: ROUTES.getPost }))
    `)
    const output = await run(['node', 'check.mjs'], consumer, { BASE_URL: fake.baseUrl, BODY: body, HEADERS: JSON.stringify(headers), SECRET: secret })
    fake.close()
    expect(JSON.parse(output)).toEqual({ post: { id: 'post_1', auth: 'Bearer chorus_sk_packed' }, event: 'evt_1', notFound: 'function', route: 'GET /posts/{post_id}' })
  }, 30_000)

  test('its declarations typecheck for a consumer on NodeNext resolution', async () => {
    await writeFile(join(consumer, 'use.ts'), `
      import { Chorus, type Post } from '@chorus/sdk'
      export async function use(chorus: Chorus): Promise<Post> {
        // @ts-expect-error title must be a string
        await chorus.posts.create({ board: 'ideas', title: 1 })
        return chorus.posts.get('post_1')
      }
    `)
    const options = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom', '--skipLibCheck']
    await run(['node', TSC, ...options, 'use.ts'], consumer)
  }, 30_000)
})
