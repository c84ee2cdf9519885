// Layers point one way: config → db → lib → identity → plugins → modules → app (docs/architecture.md).
// Bun's bundler reads every file of the lower layers; the test follows each file's imports to the end
// and fails if a lower layer reaches a feature module, the app or the background worker by any path.
import { describe, expect, test } from 'bun:test'
import { readdirSync, statSync } from 'node:fs'

const ROOT = new URL('../..', import.meta.url).pathname

const filesUnder = (dir: string): string[] => readdirSync(`${ROOT}${dir}`).flatMap((name) => {
  const path = `${dir}/${name}`
  if (statSync(`${ROOT}${path}`).isDirectory()) return filesUnder(path)
  return path.endsWith('.ts') ? [path] : []
})

/** Each file's direct imports inside server/, as repository paths. */
async function importEdges(entries: string[]): Promise<Map<string, string[]>> {
  const built = await Bun.build({ entrypoints: entries.map((entry) => `${ROOT}${entry}`), target: 'bun', metafile: true, throw: false })
  expect(built.success).toBe(true)
  const edges = new Map<string, string[]>()
  for (const [path, input] of Object.entries(built.metafile!.inputs)) {
    edges.set(path, input.imports.map((edge) => edge.path).filter((target) => target.startsWith('server/')))
  }
  return edges
}

/** The chains from `entry` to every file matching `forbidden`, as "a → b → c". */
function forbiddenChains(edges: Map<string, string[]>, entry: string, forbidden: RegExp): string[] {
  const via = new Map<string, string | null>([[entry, null]])
  const queue = [entry]
  const chains: string[] = []
  while (queue.length) {
    const current = queue.shift()!
    for (const next of edges.get(current) ?? []) {
      if (via.has(next)) continue
      via.set(next, current)
      if (forbidden.test(next)) {
        const chain = [next]
        for (let step = via.get(next); step; step = via.get(step)) chain.unshift(step)
        chains.push(chain.join(' → '))
      } else queue.push(next)
    }
  }
  return chains
}

/** What each lower layer must never reach. */
const RULES: [string, RegExp][] = [
  ['server/lib', /^server\/(modules|plugins|identity|background)\/|^server\/app\.ts$/],
  ['server/identity', /^server\/(modules|plugins|background)\/|^server\/app\.ts$/],
  ['server/plugins', /^server\/(modules|background)\/|^server\/app\.ts$/],
]

describe('layers import one way', () => {
  test('no file in server/lib, server/identity or server/plugins reaches a feature module, the app or the worker', async () => {
    const entries = RULES.flatMap(([dir]) => filesUnder(dir))
    expect(entries.length).toBeGreaterThan(30)
    const edges = await importEdges(entries)
    const found = RULES.flatMap(([dir, forbidden]) => filesUnder(dir).flatMap((entry) => forbiddenChains(edges, entry, forbidden)))
    expect(found).toEqual([])
  }, 30_000)

  test('the check follows imports through other files (it can fail)', async () => {
    // server/events/dispatch.ts imports subscribers.ts, which wires the modules' subscribers.
    const edges = await importEdges(['server/events/dispatch.ts'])
    const chains = forbiddenChains(edges, 'server/events/dispatch.ts', /^server\/modules\//)
    expect(chains).toContain('server/events/dispatch.ts → server/events/subscribers.ts → server/modules/notifications/fanout.ts')
  }, 30_000)
})
