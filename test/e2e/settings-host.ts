// The e2e server's part for the settings specs (test/e2e/settings-a.spec.ts): a team to sign in as, a
// webhook receiver on the host origin whose answer a spec can turn to failure, and customer pages made
// from the dashboard's own snippet.
import type { AppContext } from '../../server/context.ts'
import { boards } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { findOrCreateUser, issueSession } from '../../server/modules/auth/service.ts'
import { createWorkspace } from '../../server/modules/workspaces/service.ts'

const received: { path: string; body: string; headers: Record<string, string> }[] = []
let failing = false
const hosted = new Map<string, string>()
let made = 0

/** Answers the settings specs' paths, or null for any other. */
export async function settingsHost(ctx: AppContext, url: URL, request: Request): Promise<Response | null> {
  if (url.pathname === '/__e2e/team' && request.method === 'POST') {
    const slug = `team-${Date.now().toString(36)}-${++made}`
    const email = `owner-${slug}@example.com`
    const owner = await findOrCreateUser(ctx.db, email)
    const workspace = await createWorkspace(ctx.db, owner.id, { name: `Team ${made}`, slug })
    await ctx.db.insert(boards).values({ id: newId('board'), workspaceId: workspace.id, slug: 'ideas', name: 'Feature ideas' })
    const session = await issueSession(ctx, owner.id)
    return Response.json({ slug, email, accessToken: session.accessToken })
  }
  if (url.pathname.startsWith('/__e2e/hook/')) {
    if (request.method === 'POST') {
      received.push({ path: url.pathname, body: await request.text(), headers: Object.fromEntries(request.headers) })
      return failing ? new Response('receiver is down', { status: 503 }) : new Response('ok')
    }
    if (url.searchParams.has('fail')) failing = url.searchParams.get('fail') === '1'
    return Response.json(received.filter((hit) => hit.path === url.pathname))
  }
  if (url.pathname === '/__e2e/host' && request.method === 'POST') {
    const id = String(hosted.size + 1)
    hosted.set(id, await request.text())
    return Response.json({ path: `/__e2e/host/${id}` })
  }
  if (url.pathname.startsWith('/__e2e/host/')) {
    const page = hosted.get(url.pathname.slice('/__e2e/host/'.length))
    return page ? new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }) : new Response('not found', { status: 404 })
  }
  return null
}
