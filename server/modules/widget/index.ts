import { Elysia } from 'elysia'
import { readdir, readFile, stat } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import type { AppContext } from '../../context.ts'
import { html } from '../../lib/html.ts'
import { htmlResponse } from '../../lib/http-headers.ts'
import { workspaceBySlug } from '../../identity/end-users.ts'

const DIST = new URL('../../../widget/dist/', import.meta.url)
const SOURCE = new URL('../../../widget/src/', import.meta.url)
const NAMES = ['widget.js', 'widget-panel.js'] as const
type Name = (typeof NAMES)[number]

interface Asset { code: string; gzip: Uint8Array<ArrayBuffer>; etag: string; hash: string }

const hashOf = (code: string) => new Bun.CryptoHasher('sha256').update(code).digest('hex').slice(0, 16)

/** The built files, unless widget/src changed after them (a checkout without a rebuild); the image ships no source. */
async function readDist(): Promise<string[] | null> {
  try {
    const built = Math.min(...(await Promise.all(NAMES.map((name) => stat(new URL(name, DIST))))).map((file) => file.mtimeMs))
    const sources = await readdir(SOURCE).catch(() => [])
    const edited = Math.max(0, ...(await Promise.all(sources.map((name) => stat(new URL(name, SOURCE))))).map((file) => file.mtimeMs))
    if (edited > built) return null
    return await Promise.all(NAMES.map((name) => readFile(new URL(name, DIST), 'utf8')))
  } catch {
    return null
  }
}

/** widget/dist when it is there and current (`npm run build:widget`, the Docker image); otherwise an in-memory build from widget/src. */
async function loadAssets(ctx: AppContext): Promise<Record<Name, Asset>> {
  let files = await readDist()
  if (!files) {
    ctx.log.info('widget/dist is missing or older than widget/src; building the widget from source')
    const { buildWidget } = await import('../../../widget/build.ts')
    const { loader, panel } = await buildWidget()
    files = [loader.code, panel.code]
  }
  const asset = (code: string): Asset => {
    const hash = hashOf(code)
    return { code, gzip: new Uint8Array(gzipSync(code, { level: 9 })), etag: `"${hash}"`, hash }
  }
  return { 'widget.js': asset(files[0]!), 'widget-panel.js': asset(files[1]!) }
}

/**
 * `/widget.js` (the embed loader; cached 5 minutes, revalidated by ETag, so a release reaches every
 * page soon) and `/widget-panel.js` (immutable for a year when asked for with its content hash as `v`).
 */
export function widgetModule(ctx: AppContext) {
  let assets: Promise<Record<Name, Asset>> | undefined
  const load = () => (assets ??= loadAssets(ctx).catch((error) => {
    assets = undefined
    throw error
  }))

  const serve = async (name: Name, request: Request) => {
    const asset = (await load())[name]
    const version = new URL(request.url).searchParams.get('v')
    const headers: Record<string, string> = {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': name === 'widget-panel.js' && version === asset.hash ? 'public, max-age=31536000, immutable' : 'public, max-age=300, stale-while-revalidate=86400',
      etag: asset.etag,
      vary: 'Accept-Encoding',
      'x-content-type-options': 'nosniff',
      // Host pages may isolate themselves (COEP); the scripts are public by design.
      'cross-origin-resource-policy': 'cross-origin',
      'access-control-allow-origin': '*',
    }
    if (request.headers.get('if-none-match') === asset.etag) return new Response(null, { status: 304, headers })
    if (/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')) {
      return new Response(asset.gzip, { headers: { ...headers, 'content-encoding': 'gzip' } })
    }
    return new Response(asset.code, { headers })
  }

  const hidden = { detail: { hide: true } }
  return new Elysia()
    .get('/widget.js', ({ request }) => serve('widget.js', request), hidden)
    .get('/widget-panel.js', ({ request }) => serve('widget-panel.js', request), hidden)
    .get('/widget/try/:workspace_slug', async ({ params }) => tryPage((await workspaceBySlug(ctx, params.workspace_slug)).slug), hidden)
}

/**
 * A sample customer page with the widget embedded for one workspace (`npm run seed` prints its address):
 * how the widget looks and behaves on a page, without writing one. Anonymous visitors post only where
 * the workspace allows them.
 */
function tryPage(slug: string) {
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Widget test page: ${slug}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1f2937}code{background:#f3f4f6;padding:0 .25rem;border-radius:4px}</style></head>
<body><main><h1>Widget test page</h1>
<p>This stands for one of your customer's pages. The feedback button in the corner is the Chorus widget of the <code>${slug}</code> workspace, embedded with one line:</p>
<p><code>&lt;script src="/widget.js" data-workspace="${slug}" async&gt;&lt;/script&gt;</code></p>
<p><a href="/portal/${slug}">The workspace's portal</a></p></main>
<script src="/widget.js" data-workspace="${slug}" async></script></body></html>`
  return htmlResponse(page.value, { scripts: ["'self'"], styles: ["'unsafe-inline'"] })
}
