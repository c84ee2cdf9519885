// Run by Playwright's webServer (`bun test/e2e/server.ts`): the real app on E2E_APP_PORT (throwaway
// PGlite) and, on another origin (E2E_HOST_PORT), a customer's page that embeds the widget with a
// hostile stylesheet, plus /__e2e/* endpoints through which the specs seed data and read the database.
// Mail goes through a real SMTP server (smtp-server) whose inbox /__e2e/mail reads.
import { and, eq } from 'drizzle-orm'
import PostalMime from 'postal-mime'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../server/app.ts'
import { getConfig } from '../../server/config.ts'
import { openDatabase } from '../../server/db/client.ts'
import { boards, endUsers, events, posts, workspaces } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { createApiKey } from '../../server/modules/api-keys/service.ts'
import { findOrCreateUser, issueSession } from '../../server/modules/auth/service.ts'
import { setWorkspaceImage } from '../../server/modules/files/service.ts'
import { createJwtConfig } from '../../server/modules/jwt-config/service.ts'
import { registerClient } from '../../server/modules/oauth/clients.ts'
import { createEntry } from '../../server/modules/changelog/service.ts'
import { createComment } from '../../server/modules/comments/service.ts'
import { createPost } from '../../server/modules/posts/service.ts'
import { toggleVote } from '../../server/modules/votes/service.ts'
import { createWorkspace } from '../../server/modules/workspaces/service.ts'
import { buildWidget } from '../../widget/build.ts'
import { png } from '../helpers/images.ts'
import { startSmtp } from '../helpers/smtp.ts'
import { CHAT_CLIENT, startFakeChat } from '../helpers/chat-provider.ts'
import { E2E_APP_ORIGIN, E2E_APP_PORT, E2E_HOST_ORIGIN, E2E_HOST_PORT } from './ports.ts'
import type { SeedOptions, SeedPost } from './widget-helpers.ts'
import { settingsHost } from './settings-host.ts'
import { startBackground } from '../../server/background/supervisor.ts'

await buildWidget({ write: true })
// Addresses starting with `refused-` are refused at RCPT TO (550), as a mailbox that does not exist (signin.spec.ts, settings-a.spec.ts).
const smtp = await startSmtp({ reject: (address) => address.startsWith('refused-') })
// The chat provider the Integrations page connects to (settings-b.spec.ts): a Slack-like server on loopback.
const chat = startFakeChat()
const config = getConfig({
  CHAT_API_BASE: chat.base,
  CHAT_AUTHORIZE_URL: chat.authorizeUrl,
  CHAT_CLIENT_ID: CHAT_CLIENT.id,
  CHAT_CLIENT_SECRET: CHAT_CLIENT.secret,
  OPERATOR_URLS_ALLOW_PRIVATE: 'true',
  SMTP_URL: smtp.url,
  PORT: String(E2E_APP_PORT),
  BASE_URL: E2E_APP_ORIGIN,
  DATABASE_URL: 'memory://',
  // Uploaded logos go to a throwaway directory.
  DATA_DIR: await mkdtemp(join(tmpdir(), 'chorus-e2e-')),
  SECRET_KEY: 'e2e-secret-key-that-is-long-enough-0123456789',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_IP: '100000',
  // Subscribers' e-mails leave after a second of quiet instead of a minute, so a spec can wait for them.
  NOTIFY_BATCH_SECONDS: '1',
  // The settings spec's webhook receiver is on this machine (the host origin).
  WEBHOOK_ALLOW_PRIVATE: 'true',
})
const database = openDatabase(config.databaseUrl, config.dataDir)
await database.migrate()
const { app, ctx } = await createApp({ config, database })
app.listen({ port: E2E_APP_PORT, hostname: '127.0.0.1' })
// Background work as in a server process: the worker thread dispatches events, delivers webhooks and sends
// the e-mails to subscribers (the voter's e-mail in dashboard.spec.ts).
await startBackground(ctx).ready()

/** None of it may reach the widget. */
const HOSTILE_CSS = `
  body { letter-spacing: 2px; font-size: 20px }
  * { text-transform: uppercase }
  button { color: red !important; background: yellow !important; font-size: 32px !important; border: 4px dashed red !important }
  div { padding: 40px !important; border: 3px solid green !important; display: block !important }
  input, textarea, label { display: none !important }`

let seeded = 0

/**
 * A workspace with public boards `ideas` and `bugs` (and a private `roadmap-internal`), posts with
 * votes, statuses and comments, and an HS256 JWT configuration.
 */
async function seed({ posts: titles = [], bugs = [], many = 0, allowAnonymous = true, logo = false, brandColor, defaultBoard, news, moderation, proofOfWork }: SeedOptions) {
  const slug = `acme-${Date.now().toString(36)}-${++seeded}`
  const owner = await findOrCreateUser(ctx.db, `owner-${slug}@example.com`)
  const workspace = await createWorkspace(ctx.db, owner.id, { name: 'Acme', slug })
  if (logo) await setWorkspaceImage(ctx, workspace.id, 'logo', new File([png([79, 70, 229, 255])], 'logo.png'))
  const settings = { allow_anonymous: allowAnonymous, ...(brandColor && { brand_color: brandColor }), ...(defaultBoard && { default_board: defaultBoard }), ...(moderation && { moderation }), ...(proofOfWork && { proof_of_work: true }) }
  await ctx.db.update(workspaces).set({ settings }).where(eq(workspaces.id, workspace.id))
  // Distinct creation times: "Feature ideas" is the oldest public board (the widget's fallback), "Bugs" sorts first by name.
  const created = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000)
  await ctx.db.insert(boards).values([
    { id: newId('board'), workspaceId: workspace.id, slug: 'ideas', name: 'Feature ideas', createdAt: created(3) },
    { id: newId('board'), workspaceId: workspace.id, slug: 'bugs', name: 'Bugs', createdAt: created(2) },
    { id: newId('board'), workspaceId: workspace.id, slug: 'roadmap-internal', name: 'Internal', isPrivate: true, createdAt: created(1) },
  ])
  const { key } = await createApiKey(ctx.db, workspace.id, owner.id, { name: 'seed', scopes: ['posts:write', 'votes:write', 'comments:write', 'comments:internal'] })
  const caller = { kind: 'api_key' as const, keyId: key.id, name: key.name, scopes: key.scopes, workspaceId: workspace.id }
  const many_ = Array.from({ length: many }, (_, i) => ({ title: `Idea ${i + 1}` }))
  for (const [board, list] of [['ideas', [...titles, ...many_]], ['bugs', bugs]] as const) {
    for (const { title, votes = 0, status, body, comments = [], internalComments = [] } of list as SeedPost[]) {
      const post = await createPost(ctx.db, workspace.id, caller, board, { title, status, body })
      for (let i = 0; i < votes; i++) await toggleVote(ctx.db, workspace.id, caller, post.id, { email: `voter${i}@example.com` })
      for (const [i, text] of comments.entries()) await createComment(ctx.db, workspace.id, caller, post.id, { body: text, email: `commenter${i}@example.com` })
      for (const text of internalComments) await createComment(ctx.db, workspace.id, caller, post.id, { body: text, internal: true })
    }
  }
  if (news) await createEntry(ctx.db, workspace.id, caller, { title: 'Shipped this week', body: news, published_at: new Date().toISOString() })
  const { secret } = await createJwtConfig(ctx, workspace.id, { algorithm: 'HS256' })
  return { slug, workspaceId: workspace.id, secret }
}

/**
 * A portal to browse: the seed above plus posts in planned, in-progress and complete statuses, a public and
 * an internal comment, a post on the private board, and every author known by e-mail (none may show).
 */
async function portalSeed() {
  const seeded = await seed({ posts: [{ title: 'Dark mode', votes: 3 }, { title: 'CSV export', votes: 1 }] })
  const { key } = await createApiKey(ctx.db, seeded.workspaceId, (await findOrCreateUser(ctx.db, `owner-${seeded.slug}@example.com`)).id, { name: 'portal', scopes: ['posts:write', 'comments:write', 'comments:internal'] })
  const caller = { kind: 'api_key' as const, keyId: key.id, name: key.name, scopes: key.scopes, workspaceId: seeded.workspaceId }
  const made = async (board: string, title: string, status: string, email: string) => (await createPost(ctx.db, seeded.workspaceId, caller, board, { title, status, body: `${title}, please.`, email })).id
  const planned = await made('ideas', 'Slack alerts', 'Planned', 'ada@customer.example')
  await made('ideas', 'Bulk edit', 'In progress', 'grace@customer.example')
  const shipped = await made('ideas', 'Faster search', 'Complete', 'linus@customer.example')
  await made('roadmap-internal', 'Secret acquisition', 'Planned', 'ceo@customer.example')
  await createComment(ctx.db, seeded.workspaceId, caller, planned, { body: 'We need this for on-call.', email: 'carol@customer.example' })
  await createComment(ctx.db, seeded.workspaceId, caller, planned, { body: 'INTERNAL: biggest customer asks', internal: true })
  await createEntry(ctx.db, seeded.workspaceId, caller, { title: 'Faster search is here', body: 'Search is **twice** as fast.', published_at: new Date().toISOString(), post_ids: [shipped] })
  await createEntry(ctx.db, seeded.workspaceId, caller, { title: 'Draft: secret launch' })
  return { ...seeded, postId: planned }
}

/** A signed-in workspace owner (their access_token cookie value) and an OAuth client whose redirect URI is the host page's /callback. */
async function oauthSetup() {
  const slug = `oauth-${Date.now().toString(36)}-${++seeded}`
  const owner = await findOrCreateUser(ctx.db, `owner-${slug}@example.com`)
  const workspace = await createWorkspace(ctx.db, owner.id, { name: 'Acme OAuth', slug })
  const session = await issueSession(ctx, owner.id)
  const client = await registerClient(ctx, { client_name: 'Pocket Assistant', redirect_uris: [`${E2E_HOST_ORIGIN}/callback`], token_endpoint_auth_method: 'none' }, '127.0.0.1')
  return { accessToken: session.accessToken, clientId: client.client_id, workspaceId: workspace.id, slug }
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
  const attributes = ['workspace', 'board', 'theme', 'position', 'locale']
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
  new PerformanceObserver((list) => { for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__layoutShift += entry.value }).observe({ type: 'layout-shift', buffered: true })
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
    const settings = await settingsHost(ctx, url, request)
    if (settings) return settings
    if (url.pathname === '/__e2e/seed' && request.method === 'POST') return Response.json(await seed(await request.json()))
    if (url.pathname === '/__e2e/portal' && request.method === 'POST') return Response.json(await portalSeed())
    if (url.pathname === '/__e2e/oauth' && request.method === 'POST') return Response.json(await oauthSetup())
    if (url.pathname === '/callback') return new Response('<!doctype html><title>Callback</title><p>Back in the app</p>', { headers: { 'content-type': 'text/html; charset=utf-8' } })
    if (url.pathname === '/__e2e/mail') {
      // The newest message the SMTP server received for this address, as its plain text.
      const mail = smtp.inbox.findLast((message) => message.to.includes(url.searchParams.get('to')!))
      return Response.json({ text: mail ? (await PostalMime.parse(mail.raw)).text ?? null : null })
    }
    if (url.pathname === '/__e2e/post') return Response.json(await inspect(url.searchParams.get('workspace')!, url.searchParams.get('title')!))
    if (url.pathname === '/') return new Response(page(url.searchParams), { headers: { 'content-type': 'text/html; charset=utf-8' } })
    return new Response('not found', { status: 404 })
  },
})
console.log(`e2e: app on ${E2E_APP_ORIGIN}, host page on http://127.0.0.1:${E2E_HOST_PORT}`)
