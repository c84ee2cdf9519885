import { gzipSync } from 'node:zlib'

// The dashboard's one script, bundled by esbuild from client/keys.ts on first use and kept in memory
// under a content-hashed URL (like the widget's in-memory build when widget/dist is absent).

/** The budget: at most 40 KiB gzipped of script on any dashboard page. */
export const SCRIPT_BUDGET_BYTES = 40 * 1024

export interface DashboardScript { body: string; gzip: Uint8Array<ArrayBuffer>; hash: string; path: string }

let built: Promise<DashboardScript> | undefined

export function dashboardScript(): Promise<DashboardScript> {
  built ??= (async () => {
    const { build } = await import('esbuild')
    const result = await build({ entryPoints: [new URL('./client/keys.ts', import.meta.url).pathname], bundle: true, minify: true, write: false, format: 'iife', target: 'es2020', platform: 'browser' })
    const body = result.outputFiles[0]!.text
    const hash = new Bun.CryptoHasher('sha256').update(body).digest('hex').slice(0, 16)
    return { body, gzip: new Uint8Array(gzipSync(body, { level: 9 })), hash, path: `/dashboard/_/dashboard.js?v=${hash}` }
  })()
  return built
}

export async function serveScript(request: Request) {
  const script = await dashboardScript()
  const headers: Record<string, string> = {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': new URL(request.url).searchParams.get('v') === script.hash ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
    'x-content-type-options': 'nosniff',
    vary: 'Accept-Encoding',
  }
  if (/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')) return new Response(script.gzip, { headers: { ...headers, 'content-encoding': 'gzip' } })
  return new Response(script.body, { headers })
}
