import { textOn } from '../../lib/color.ts'
import { html, type HtmlValue, type SafeHtml } from '../../lib/html.ts'
import type { publicWorkspace } from '../public/service.ts'
import { ASSETS } from './assets.ts'
import { portalPath } from './links.ts'
import type { Visitor } from './session.ts'

export type PortalWorkspace = Awaited<ReturnType<typeof publicWorkspace>>

/** What every page knows: the workspace, who is looking, where (for canonical URLs) and any message. */
export interface PageContext {
  baseUrl: string
  /** The workspace's id: what drops its pages from the public cache. */
  workspaceId: string
  portal: PortalWorkspace
  visitor: Visitor | null
  /** Messages shown above the content: a success notice after a redirect, or the error of a refused form. */
  notice?: string
  error?: string
  /** Extra `<head>` links (the changelog's feed). */
  alternate?: { href: string; title: string }
}

export interface PageMeta {
  title: string
  description: string
  /** The canonical path (no query string unless it names a different page). */
  path: string
  section: 'home' | 'roadmap' | 'changelog' | 'board' | 'post' | 'none'
  type?: 'website' | 'article'
  /** Error pages ask search engines to leave them out. */
  noindex?: boolean
}

const DEFAULT_ACCENT = '#4338ca'

/** The workspace's brand colour and whichever of black or white reads better on it (WCAG contrast). */
export function accentStyle(brand: string | null) {
  const accent = brand && /^#[0-9a-fA-F]{6}$/.test(brand) ? brand.toLowerCase() : DEFAULT_ACCENT
  return `:root{--accent:${accent};--on-accent:${textOn(accent).color}}`
}

export const truncate = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`
}

function nav(slug: string, section: PageMeta['section']) {
  const item = (href: string, label: string, current: boolean) => html`<li><a href="${href}"${current ? html` aria-current="page"` : ''}>${label}</a></li>`
  const base = portalPath(slug)
  return html`<nav aria-label="Portal"><ul>${[
    item(base, 'Feedback', section === 'home' || section === 'board' || section === 'post'),
    item(`${base}/roadmap`, 'Roadmap', section === 'roadmap'),
    item(`${base}/changelog`, 'Changelog', section === 'changelog'),
  ]}</ul></nav>`
}

function footer(ctx: PageContext) {
  const slug = ctx.portal.workspace.slug
  const who = ctx.visitor
    ? html`<div>Signed in as ${ctx.visitor.name ?? 'an identified user'}. <form method="post" action="${portalPath(slug)}/signout"><input type="hidden" name="csrf" value="${ctx.visitor.csrf}"><button class="btn plain" type="submit">Sign out</button></form></div>`
    : ''
  return html`<footer class="wrap">${who}<p>Feedback portal of ${ctx.portal.workspace.name}, powered by Chorus.</p></footer>`
}

/** The whole document: head with SEO and sharing tags, branded header, landmarks, and the page's content. */
export function layout(ctx: PageContext, meta: PageMeta, content: HtmlValue): { body: SafeHtml; style: string } {
  const { workspace } = ctx.portal
  const style = accentStyle(workspace.settings.brand_color)
  const title = meta.section === 'home' ? `${workspace.name} feedback` : `${meta.title} · ${workspace.name}`
  const canonical = `${ctx.baseUrl}${meta.path}`
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<meta name="description" content="${meta.description}">${meta.noindex && html`<meta name="robots" content="noindex">`}
<link rel="canonical" href="${canonical}">
<meta property="og:type" content="${meta.type ?? 'website'}"><meta property="og:site_name" content="${workspace.name}">
<meta property="og:title" content="${title}"><meta property="og:description" content="${meta.description}"><meta property="og:url" content="${canonical}">
${workspace.logo_url && html`<meta property="og:image" content="${workspace.logo_url}">`}
<meta name="twitter:card" content="summary"><meta name="twitter:title" content="${title}"><meta name="twitter:description" content="${meta.description}">
${workspace.favicon_url && html`<link rel="icon" href="${workspace.favicon_url}">`}
${ctx.alternate && html`<link rel="alternate" type="application/atom+xml" title="${ctx.alternate.title}" href="${ctx.alternate.href}">`}
<link rel="stylesheet" href="${ASSETS['portal.css'].path}"><style>${style}</style>
<script src="${ASSETS['portal.js'].path}" defer></script>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="wrap">
<a class="brand" href="${portalPath(workspace.slug)}">${workspace.logo_url && html`<img src="${workspace.logo_url}" alt="">`}<span>${workspace.name}</span></a>
${nav(workspace.slug, meta.section)}
</div></header>
<main id="main" class="wrap">
${ctx.notice && html`<p class="notice" role="status">${ctx.notice}</p>`}
${ctx.error && html`<div class="alert" role="alert" id="form-error">${ctx.error}</div>`}
${content}
<p id="live" class="sr" aria-live="polite"></p>
</main>
${footer(ctx)}
</body></html>`
  return { body, style }
}

/** The 404 of a portal that does not exist (no branding to use): plain, but still a page. */
export function bareNotFound(message: string) {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>Not found</title><link rel="stylesheet" href="${ASSETS['portal.css'].path}"></head>
<body><main id="main" class="wrap"><h1>Not found</h1><p>${message}</p></main></body></html>`
}
