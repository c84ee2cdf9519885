// The published artefact, not the sources: `npm run sdk:pack`, `npm install ./chorus-sdk-x.y.z.tgz` in a
// fresh project as the README says, then import it with Node through the package's `exports` and
// typecheck against its .d.ts.
import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
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
  test('ships the built ESM, declarations and README, and nothing else (not the 500 KB openapi.json)', async () => {
    const files = packed.files.map((file) => file.path)
    expect(files).toContain('dist/index.js')
    expect(files).toContain('dist/index.d.ts')
    expect(files).toContain('README.md')
    expect(files).toContain('package.json')
    expect(files).not.toContain('openapi.json')
    expect(files.filter((file) => !/^(dist\/.+\.(js|d\.ts)|README\.md|package\.json)$/.test(file))).toEqual([])
    expect(packed.filename).toMatch(/^chorus-sdk-\d+\.\d+\.\d+\.tgz$/)
    expect((await stat(packed.tarball)).size).toBeLessThan(100_000)
  })

  test('installs from the tarball under its published name, with the engines it needs', async () => {
    const installed = JSON.parse(await readFile(join(consumer, 'node_modules/@chorus/sdk/package.json'), 'utf8'))
    expect(installed).toMatchObject({ name: '@chorus/sdk', engines: { node: '>=18' } })
    const project = JSON.parse(await readFile(join(consumer, 'package.json'), 'utf8'))
    expect(project.dependencies['@chorus/sdk']).toBe(`file:${packed.filename}`)
  })

  test('Node imports the package and it works end to end', async () => {
    const fake = startFakeApi(({ headers }) => json(200, { id: 'post_1', auth: headers.get('authorization'), agent: headers.get('user-agent') }))
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    const body = JSON.stringify({ id: 'evt_1', type: 'post.created', timestamp: '2026-11-22T09:30:00.000Z', workspace_id: 'ws_1', data: {} })
    const now = new Date()
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('evt_1', now, body) }
    await writeFile(join(consumer, 'check.mjs'), `
      import { Chorus, NotFoundError, verifyWebhook, ROUTES } from '@chorus/sdk'
      const chorus = new Chorus({ apiKey: 'chorus_sk_packed', baseUrl: process.env.BASE_URL })
      const post = await chorus.posts.get('post_1')
      const event = await verifyWebhook(process.env.BODY, JSON.parse(process.env.HEADERS), process.env.SECRET)
      console.log(JSON.stringify({ post, requestId: post.lastResponse.requestId, event: event.id, notFound: typeof NotFoundError, route: ROUTES.getPost }))
    `)
    const output = await run(['node', 'check.mjs'], consumer, { BASE_URL: fake.baseUrl, BODY: body, HEADERS: JSON.stringify(headers), SECRET: secret })
    fake.close()
    const nodeVersion = (await run(['node', '-p', 'process.versions.node'], consumer)).trim()
    expect(JSON.parse(output)).toEqual({
      post: { id: 'post_1', auth: 'Bearer chorus_sk_packed', agent: `chorus-sdk/0.1.0 (node/${nodeVersion})` },
      requestId: 'req_fake', event: 'evt_1', notFound: 'function', route: 'GET /posts/{post_id}',
    })
  }, 30_000)

  test('its declarations typecheck for a consumer on NodeNext resolution', async () => {
    await writeFile(join(consumer, 'use.ts'), `
      import { Chorus, verifyWebhook, type ChorusErrorBody, type Post, type WebhookEvent } from '@chorus/sdk'
      export async function use(chorus: Chorus): Promise<Post> {
        // @ts-expect-error title must be a string
        await chorus.posts.create({ board: 'ideas', title: 1 })
        const post = await chorus.posts.get('post_1')
        const requestId: string | null = post.lastResponse.requestId
        return post
      }
      export async function receive(body: string, headers: Headers): Promise<string> {
        const event: WebhookEvent = await verifyWebhook(body, headers, 'whsec_x')
        switch (event.type) {
          case 'post.created': return event.data.post.title
          case 'comment.created': return event.data.comment.body
          // @ts-expect-error not an event kind
          case 'post.exploded': return ''
          default: return event.type
        }
      }
      export const code = (body: ChorusErrorBody): string => body.code
    `)
    const options = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom', '--skipLibCheck']
    await run(['node', TSC, ...options, 'use.ts'], consumer)
  }, 30_000)

  test('every TypeScript example of README.md and sdk/README.md compiles against the packed package', async () => {
    // The names an example may use without declaring them, as the prose around it says.
    const ambient: Record<string, string> = { chorus: 'Chorus', id: 'string', rawBody: 'string', request: 'Request' }
    const blocks: { file: string, source: string }[] = []
    for (const readme of ['README.md', 'sdk/README.md']) {
      const text = await readFile(new URL(`../../${readme}`, import.meta.url), 'utf8')
      for (const [, source] of text.matchAll(/```ts\n([\s\S]*?)```/g)) blocks.push({ file: `readme-${blocks.length}.ts`, source: source! })
    }
    expect(blocks.length).toBeGreaterThanOrEqual(6)
    // What a consumer installs beside the SDK: Node's types (the examples read process.env) and, for
    // the MCP example, the MCP SDK.
    for (const scope of ['@modelcontextprotocol/sdk', '@types/node']) {
      await mkdir(join(consumer, 'node_modules', scope, '..'), { recursive: true })
      await symlink(new URL(`../../node_modules/${scope}`, import.meta.url).pathname, join(consumer, 'node_modules', scope)).catch(() => {})
    }
    for (const { file, source } of blocks) {
      const undeclared = Object.entries(ambient).filter(([name]) => new RegExp(`\\b${name}\\b`).test(source) && !new RegExp(`((const|let|var|function)\\s+${name}\\b)|([(,]\\s*${name}\\s*:)`).test(source))
      const prelude = undeclared.length ? `import type { Chorus as AmbientChorus } from '@chorus/sdk'\n${undeclared.map(([name, type]) => `declare const ${name}: ${type === 'Chorus' ? 'AmbientChorus' : type}`).join('\n')}\n` : ''
      await writeFile(join(consumer, file), `${prelude}${source}\nexport {}\n`)
    }
    const options = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom', '--skipLibCheck', '--types', 'node']
    await run(['node', TSC, ...options, ...blocks.map((block) => block.file)], consumer)
  }, 60_000)

  test('nullable fields read `string | null` in the declarations, not `((string | null) | null) | null`', async () => {
    const declarations = await readFile(join(consumer, 'node_modules/@chorus/sdk/dist/generated/openapi.d.ts'), 'utf8')
    expect(declarations).toContain('last_used_at: string | null;')
    expect(declarations).not.toContain('| null) | null')
  })
})
