import { build, type BuildOptions } from 'esbuild'
import { mkdir, writeFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'

export const WIDGET_DIR = new URL('.', import.meta.url).pathname
export const DIST_DIR = `${WIDGET_DIR}dist`

/** Gzipped-size budgets (loader ≤ 3 KiB, panel ≤ 30 KiB); test/unit/widget-size.test.ts fails the build past them. */
export const BUDGETS = { 'widget.js': 3 * 1024, 'widget-panel.js': 30 * 1024 } as const
export type AssetName = keyof typeof BUDGETS

export interface BuiltAsset { name: AssetName; code: string; gzipped: number; hash: string }

const hashOf = (code: string) => new Bun.CryptoHasher('sha256').update(code).digest('hex').slice(0, 16)

async function bundle(entry: string, define: Record<string, string> = {}) {
  const options: BuildOptions = {
    entryPoints: [`${WIDGET_DIR}src/${entry}`],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    platform: 'browser',
    legalComments: 'none',
    write: false,
    define,
  }
  const result = await build(options)
  return result.outputFiles![0]!.text
}

const asset = (name: AssetName, code: string): BuiltAsset => ({ name, code, gzipped: gzipSync(code, { level: 9 }).length, hash: hashOf(code) })

/**
 * Builds the panel, then the loader with the panel's content hash baked in, so the loader asks for
 * `widget-panel.js?v=<hash>` and that address can be cached for good. `write` puts both in widget/dist.
 */
export async function buildWidget({ write = false } = {}) {
  const panel = asset('widget-panel.js', await bundle('panel.ts'))
  const loader = asset('widget.js', await bundle('loader.ts', { __PANEL_VERSION__: JSON.stringify(panel.hash) }))
  if (write) {
    await mkdir(DIST_DIR, { recursive: true })
    await Promise.all([loader, panel].map((file) => writeFile(`${DIST_DIR}/${file.name}`, file.code)))
  }
  return { loader, panel }
}
