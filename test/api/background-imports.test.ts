// The background worker's entry loads only what background work needs: its module graph (what Bun's
// bundler finds from server/background/worker.ts) holds no HTTP framework, no route module, no TypeBox
// model, no MCP and none of the portal's pages. A worker thread is a second JavaScript VM: every module
// it imports is loaded, compiled and kept again (BENCHMARKS.md, "Notes: background work in a worker thread").
import { describe, expect, test } from 'bun:test'

const ROOT = new URL('../..', import.meta.url).pathname

async function importGraph(entry: string): Promise<string[]> {
  const built = await Bun.build({ entrypoints: [`${ROOT}${entry}`], target: 'bun', metafile: true, throw: false })
  expect(built.success).toBe(true)
  return Object.keys(built.metafile!.inputs)
}

/** What the worker must never load, with why. */
const FORBIDDEN: [RegExp, string][] = [
  [/node_modules\/(elysia|@elysiajs)\//, 'the HTTP framework'],
  [/node_modules\/(@sinclair\/typebox|typebox)\//, 'TypeBox (route schemas)'],
  [/node_modules\/@modelcontextprotocol\//, 'the MCP SDK'],
  [/^server\/modules\/[^/]+\/index\.ts$/, 'a route module'],
  [/^server\/modules\/[^/]+\/model\.ts$/, 'a TypeBox model'],
  [/^server\/modules\/mcp\//, 'MCP'],
  // links.ts is the portal's addresses (plain string functions) that chat and changelog mail link to; its pages are not.
  [/^server\/modules\/portal\/(?!links\.ts$)/, 'the portal'],
  [/^server\/(app|plugins\/)/, 'the app and its plugins'],
  [/^server\/lib\/(paging-schema|schema)\.ts$/, 'the route schema helpers'],
]

describe('the background worker’s import graph', () => {
  test('holds none of the HTTP side', async () => {
    const graph = await importGraph('server/background/worker.ts')
    const found = graph.flatMap((path) => FORBIDDEN.filter(([pattern]) => pattern.test(path)).map(([, what]) => `${path} (${what})`))
    expect(found).toEqual([])
    // It does load what the loops need: the sender, the signer, the outbound guard, the mailer, the loops.
    for (const needed of ['server/modules/webhooks/send.ts', 'server/modules/webhooks/signing.ts', 'server/lib/outbound.ts', 'server/lib/mail.ts', 'server/background/delivery-loop.ts', 'server/background/dispatcher.ts', 'server/background/mailer.ts']) {
      expect(graph).toContain(needed)
    }
  }, 30_000)

  test('loads rarely used parts on first use: what the worker thread holds after importing its entry', async () => {
    // The bundler's graph above follows dynamic imports too; this asks a real Worker what it loaded.
    const worker = new Worker(URL.createObjectURL(new Blob([`await import(${JSON.stringify(`${ROOT}server/background/worker.ts`)}); postMessage(Object.keys(require.cache))`], { type: 'application/typescript' })))
    const loaded = (await new Promise<string[]>((resolve) => (worker.onmessage = (event) => resolve(event.data)))).map((path) => path.replace(/^.*?\/(server|node_modules)\//, '$1/'))
    worker.terminate()
    expect(loaded).toContain('server/background/worker.ts')
    // What the idle worker runs its statements on: postgres.js and the SQL-text runner.
    expect(loaded).toContain('server/db/sql-text.ts')
    expect(loaded.some((path) => path.startsWith('node_modules/postgres/'))).toBe(true)
    // Loaded when a job, a check or a chat message needs them (bench/worker-modules.ts measures each).
    const lazy: [RegExp, string][] = [
      [/^server\/modules\/imports\/(?!claim\.ts$)/, 'the importer (on the first claimed import)'],
      [/^server\/modules\/duplicates\/(service|similarity)\.ts$/, "the suggester's text tools (on the first claimed check)"],
      [/^server\/modules\/posts\//, 'the post reader (on the first chat message about a comment or vote)'],
      [/^node_modules\/jose\//, 'jose (identity, behind the post reader)'],
      [/^node_modules\/(nodemailer|markdown-it|mailauth|postal-mime)\//, 'mail transport, Markdown, inbound mail'],
      [/^server\/context\.ts$/, "the app's context (rate limits, the whole AppContext)"],
      // Its loops run SQL text (server/db/sql-text.ts); drizzle is built when a rare loop's first job needs it.
      [/^node_modules\/drizzle-orm\//, 'drizzle-orm (the query builder: the worker runs SQL text)'],
      [/^server\/db\/schema\//, 'the schema (its table objects)'],
      [/^server\/background\/(mailer|suggester|import-loop)\.ts$/, 'a rare loop (started with its first job, lazy-loop.ts)'],
    ]
    expect(loaded.flatMap((path) => lazy.filter(([pattern]) => pattern.test(path)).map(([, what]) => `${path} (${what})`))).toEqual([])
  }, 30_000)

  test('the check sees a route module when one is imported (it can fail)', async () => {
    const graph = await importGraph('server/modules/health/index.ts')
    expect(graph.some((path) => FORBIDDEN.some(([pattern]) => pattern.test(path)))).toBe(true)
  }, 30_000)

  test('no import circle runs through the background code: events, webhooks and integrations import nothing back', async () => {
    for (const entry of ['server/events/dispatch.ts', 'server/modules/webhooks/queue.ts', 'server/modules/integrations/delivery.ts', 'server/background/leases.ts']) {
      const graph = await importGraph(entry)
      const upward = graph.filter((path) => /^server\/background\/(?!leases\.ts$)/.test(path))
      expect({ entry, upward }).toEqual({ entry, upward: [] })
    }
    // The old back edge: the webhook queue reached chat delivery (to free an owner's chat claims), which reached the webhook loop.
    expect(await importGraph('server/modules/webhooks/queue.ts')).not.toContain('server/modules/integrations/delivery.ts')
  }, 60_000)
})
