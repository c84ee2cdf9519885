import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { escapeHtml } from '../../lib/html.ts'
import { PUBLIC_CACHE_CONTROL } from '../public/cache.ts'
import { publicSitemap } from '../public/service.ts'
import { portalPath } from './links.ts'

// Per-portal sitemap and robots.txt. Addresses are absolute under BASE_URL; docs/portal.md says how a
// custom domain maps onto them.

const text = (body: string, type: string, status = 200) =>
  new Response(body, { status, headers: { 'content-type': `${type}; charset=utf-8`, 'cache-control': status === 200 ? PUBLIC_CACHE_CONTROL : 'no-store', 'x-content-type-options': 'nosniff' } })

export async function sitemapXml(ctx: AppContext, slug: string) {
  let map
  try {
    map = await publicSitemap(ctx.db, slug)
  } catch (error) {
    if (error instanceof ApiError && error.code === 'NOT_FOUND') return text('Not found\n', 'text/plain', 404)
    throw error
  }
  const base = `${ctx.config.baseUrl}${portalPath(slug)}`
  const url = (path: string, modified?: Date) => `<url><loc>${escapeHtml(`${base}${path}`)}</loc>${modified ? `<lastmod>${modified.toISOString()}</lastmod>` : ''}</url>`
  const urls = [
    url(''),
    url('/roadmap'),
    url('/changelog'),
    ...map.boards.map((board) => url(`/boards/${board.slug}`, board.updatedAt)),
    ...map.posts.map((post) => url(`/posts/${post.id}`, post.updatedAt)),
  ]
  return text(`<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}\n</urlset>\n`, 'application/xml')
}

export async function robotsTxt(ctx: AppContext, slug: string) {
  const base = `${ctx.config.baseUrl}${portalPath(slug)}`
  // Form targets and search results are not pages worth indexing.
  return text([
    'User-agent: *',
    `Allow: ${portalPath(slug)}/`,
    `Disallow: ${portalPath(slug)}/*?q=`,
    `Disallow: ${portalPath(slug)}/signout`,
    `Sitemap: ${base}/sitemap.xml`,
    '',
  ].join('\n'), 'text/plain')
}
