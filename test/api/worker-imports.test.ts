// Every server process runs a webhook worker thread, which loads its own copy of every module it imports.
// Elysia and TypeBox (route schemas) cost such a thread ~5 MiB of RSS and it never uses them: this keeps
// them out of its import graph (BENCHMARKS.md, "Notes: memory").
import { describe, expect, test } from 'bun:test'
import { dirname, relative, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '../..')
const transpiler = new Bun.Transpiler({ loader: 'ts' })

/** The packages a module reaches through static imports, each with the first of our files that imports it. */
async function packagesReachedFrom(entry: string) {
  const seen = new Set<string>()
  const packages = new Map<string, string>()
  const walk = async (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const found of transpiler.scanImports(await Bun.file(file).text())) {
      if (found.kind !== 'import-statement') continue
      if (found.path.startsWith('.')) await walk(resolve(dirname(file), found.path))
      else if (!packages.has(found.path)) packages.set(found.path, relative(ROOT, file))
    }
  }
  await walk(resolve(ROOT, entry))
  return { files: seen.size, packages }
}

describe('the webhook worker thread', () => {
  test('loads no route-schema library', async () => {
    const { files, packages } = await packagesReachedFrom('server/modules/webhooks/worker.ts')
    // The walk reached the delivery code (so an empty result cannot pass by accident).
    expect(files).toBeGreaterThan(30)
    expect([...packages.keys()]).toContain('postgres')
    const schemaLibraries = [...packages].filter(([name]) => /^(elysia|@sinclair\/typebox|@elysiajs\/)/.test(name))
    expect(schemaLibraries).toEqual([])
  })

  test('the check finds a schema library where one is imported', async () => {
    const { packages } = await packagesReachedFrom('server/lib/paging-schema.ts')
    expect(packages.get('elysia')).toBe('server/lib/paging-schema.ts')
  })
})
