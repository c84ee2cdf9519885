import { and, count, eq, isNull } from 'drizzle-orm'
import type { AppContext } from '../../../context.ts'
import { apiKeys, boards, integrations, members, posts } from '../../../db/schema/index.ts'
import { html } from '../../../lib/html.ts'
import type { WorkspaceViewer } from '../context.ts'
import { settingsPath } from './common.ts'

// The onboarding checklist on the dashboard's home (issue 35): each step is read from the database, so
// it ticks itself once done, and links to the page that does it. Hidden once every step is done.

const counted = async (query: Promise<{ n: number }[]>) => (await query)[0]?.n ?? 0

export async function onboardingChecklist(ctx: AppContext, viewer: WorkspaceViewer) {
  const ws = viewer.workspace
  const [boardCount, memberCount, keyCount, chatCount, postCount] = await Promise.all([
    counted(ctx.db.select({ n: count() }).from(boards).where(eq(boards.workspaceId, ws.id))),
    counted(ctx.db.select({ n: count() }).from(members).where(eq(members.workspaceId, ws.id))),
    counted(ctx.db.select({ n: count() }).from(apiKeys).where(and(eq(apiKeys.workspaceId, ws.id), isNull(apiKeys.revokedAt)))),
    counted(ctx.db.select({ n: count() }).from(integrations).where(eq(integrations.workspaceId, ws.id))),
    counted(ctx.db.select({ n: count() }).from(posts).where(eq(posts.workspaceId, ws.id))),
  ])
  const branded = Boolean(ws.logoFileId || typeof ws.settings.brand_color === 'string')
  const base = `/dashboard/${ws.slug}/settings`
  const steps: [boolean, string, string][] = [
    [boardCount > 0, 'Create a board for feedback', settingsPath(ws.slug, 'boards')],
    [branded, 'Add your logo and brand colour', settingsPath(ws.slug, 'branding')],
    [memberCount > 1, 'Invite a teammate', `${base}/members`],
    [keyCount > 0, 'Create an API key', `${base}/api-keys`],
    [postCount > 0, 'Install the widget and collect the first post', `${base}/widget`],
    [chatCount > 0, 'Connect chat', settingsPath(ws.slug, 'integrations')],
  ]
  const done = steps.filter(([ok]) => ok).length
  if (done === steps.length) return html``
  return html`<section aria-labelledby="onboarding-h" class="card onboarding"><h2 id="onboarding-h">Get started</h2>
<p>${done} of ${steps.length} done.</p>
<ol>${steps.map(([ok, label, href]) => html`<li>${ok ? html`<span aria-hidden="true">✓</span> <s>${label}</s> <span class="sr">(done)</span>` : html`<a href="${href}">${label}</a>`}</li>`)}</ol></section>`
}
