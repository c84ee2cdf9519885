// Run by Playwright's webServer (`bun test/e2e/server.ts`): the real app on E2E_APP_PORT (throwaway
// PGlite) and, on another origin (E2E_HOST_PORT), a customer's page that embeds the widget with a
// hostile stylesheet, plus /__e2e/* endpoints through which the specs seed data and read the database.
import { and, eq } from 'drizzle-orm'
import { createApp } from '../../server/app.ts'
import { getConfig } from '../../server/config.ts'
import { openDatabase } from '../../server/db/client.ts'
import { boards, endUsers, events, posts, workspaces } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { createApiKey } from '../../server/modules/api-keys/service.ts'
import { findOrCreateUser } from '../../server/modules/auth/service.ts'
import { createJwtConfig } from '../../server/modules/jwt-config/service.ts'
import { createPost } from '../../server/modules/posts/service.ts'
import { toggleVote } from '../../server/modules/votes/service.ts'
import { createWorkspace } from '../../server/modules/workspaces/service.ts'
import { buildWidget } from '../../widget/build.ts'
import { E2E_APP_ORIGIN, E2E_APP_PORT, E2E_HOST_PORT } from './ports.ts'

await buildWidget({ write: true })
const config = getConfig({
  PORT: String(E2E_APP_PORT),
  BASE_URL: E2E_APP_ORIGIN,
  DATABASE_URL: 'memory://',
  SECRET_KEY: 'e2e-secret-key-that-is-long-enough-0123456789',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_IP: '100000',
})
const database = openDatabase(config.databaseUrl, config.dataDir)
await database.migrate()
const { app, ctx } = await createApp({ config, database })
app.listen({ port: E2E_APP_PORT, hostname: '127.0.0.1' })

/** None of it may reach the widget. */
const HOSTILE_CSS = `
  body { letter-spacing: 2px; font-size: 20px }
  * { text-transform: uppercase }
  button { color: red !important; background: yellow !important; font-size: 32px !important; border: 4px dashed red !important }
  div { padding: 40px !important; border: 3px solid green !important; display: block !important }
  input, textarea, label { display: none !important }`

let seeded = 0

interface Seed { posts?: { title: string; votes?: number }[]; allowAnonymous?: boolean }

/** A workspace with a public board `ideas` (and a private `roadmap-internal`), posts with votes, and an HS256 JWT configuration. */
async function seed({ posts: titles = [], allowAnonymous = true }: Seed) {
  const slug = `acme-${Date.now().toString(36)}-${++seeded}`
  const owner = await findOrCreateUser(ctx.db, `owner-${slug}@example.com`)
  const workspace = await createWorkspace(ctx.db, owner.id, { name: 'Acme', slug })
  if (!allowAnonymous) await ctx.db.update(workspaces).set({ settings: { allow_anonymous: false } }).where(eq(workspaces.id, workspace.id))
  await ctx.db.insert(boards).values([
    { id: newId('board'), workspaceId: workspace.id, slug: 'ideas', name: 'Feature ideas' },
    { id: newId('board'), workspaceId: workspace.id, slug: 'roadmap-internal', name: 'Internal', isPrivate: true },
  ])
  const { key } = await createApiKey(ctx.db, workspace.id, owner.id, { name: 'seed', scopes: ['posts:write', 'votes:write'] })
  const caller = { kind: 'api_key' as const, keyId: key.id, name: key.name, scopes: key.scopes, workspaceId: workspace.id }
  for (const { title, votes = 0 } of titles) {
    const post = await createPost(ctx.db, workspace.id, caller, 'ideas', { title })
    for (let i = 0; i < votes; i++) await toggleVote(ctx.db, workspace.id, caller, post.id, { email: `voter${i}@example.com` })
  }
  const { secret } = await createJwtConfig(ctx, workspace.id, { algorithm: 'HS256' })
  return { slug, workspaceId: workspace.id, secret }
}

/** The stored post with this title, its author and its outbox events: what the specs assert on. */
async function inspect(slug: string, title: string) {
  const [workspace] = await ctx.db.select().from(workspaces).where(eq(workspaces.slug, slug))
  if (!workspace) return null
  const [post] = await ctx.db.select().from(posts).where(and(eq(posts.workspaceId, workspace.id), eq(posts.title, title)))
  if (!post) return { post: null }
  const [author] = post.authorEndUserId ? await ctx.db.select().from(endUsers).where(eq(endUsers.id, post.authorEndUserId)) : []
  const outbox = (await ctx.db.select().from(events).where(eq(events.workspaceId, workspace.id))).filter((event) => (event.data as { post?: { id?: string } }).post?.id === post.id)
  return { post, author: author ?? null, events: outbox.map((event) => ({ type: event.type, data: event.data })) }
}

const page = (params: URLSearchParams) => {
  const attributes = ['workspace', 'board', 'theme', 'position']
    .filter((name) => params.get(name))
    .map((name) => ` data-${name}="${params.get(name)!.replace(/[^a-z0-9-]/gi, '')}"`)
    .join('')
  // `clean` drops the hostile rules (the README screenshot shows an ordinary page).
  const hostile = params.get('clean') ? '' : HOSTILE_CSS
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme Analytics</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { margin: 0; font: 18px/1.7 Georgia, serif; color: #333; background: #f4f1ea }
  header { padding: 20px 48px; background: #1f2937; color: #fff }
  #host-button { font: 16px system-ui, sans-serif; padding: 8px 16px }${hostile}
  main { padding: 24px 48px; max-width: 760px }
</style>
<script>
  window.__events = []
  window.Chorus = window.Chorus || { q: [] }
  for (const name of ['ready', 'open', 'close', 'post.created']) Chorus.q.push(['on', name, (data) => __events.push({ event: name, data })])
  window.__layoutShift = 0
  new PerformanceObserver((list) => { for (const entry of list.getEntries()) window.__layoutShift += entry.value }).observe({ type: 'layout-shift', buffered: true })
</script>
</head><body>
<header><strong>Acme Analytics</strong></header>
<main>
  <h1>Dashboard</h1>
  <p id="copy">Revenue is up 12% this week. <a href="#reports">Open the reports</a>.</p>
  <button id="host-button" type="button">Export</button>
  <p>Tell us what to build next with the Feedback button.</p>
</main>
<script src="${E2E_APP_ORIGIN}/widget.js"${attributes} async></script>
</body></html>`
}

Bun.serve({
  port: E2E_HOST_PORT,
  hostname: '127.0.0.1',
  async fetch(request) {
    const url = new URL(request.url)
    if (url.pathname === '/__e2e/ready') return Response.json({ ok: true })
    if (url.pathname === '/__e2e/seed' && request.method === 'POST') return Response.json(await seed(await request.json()))
    if (url.pathname === '/__e2e/post') return Response.json(await inspect(url.searchParams.get('workspace')!, url.searchParams.get('title')!))
    if (url.pathname === '/') return new Response(page(url.searchParams), { headers: { 'content-type': 'text/html; charset=utf-8' } })
    return new Response('not found', { status: 404 })
  },
})
console.log(`e2e: app on ${E2E_APP_ORIGIN}, host page on http://127.0.0.1:${E2E_HOST_PORT}`)
