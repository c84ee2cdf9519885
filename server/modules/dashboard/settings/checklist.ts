import { sql } from 'drizzle-orm'
import { apiKeys, boards, integrations, members, posts } from '../../../db/schema/index.ts'
import { html } from '../../../lib/html.ts'
import type { WorkspaceViewer } from '../context.ts'
import { settingsPath } from './common.ts'

// The onboarding checklist on the dashboard's home (issue 35): each step is read from the database, so
// it ticks itself once done, and links to the page that does it. Hidden once every step is done.

export interface StepsDone { boards: boolean; teammate: boolean; key: boolean; chat: boolean; post: boolean }

/**
 * The steps as `exists` probes in one JSON value (a count over a workspace of 100,000 posts cost the
 * inbox page ~15 ms); the inbox asks it in the statement that reads its select lists (workspaceChoices).
 */
export const stepsProbe = (workspaceId: string) => sql`json_build_object(
    'boards', exists (select 1 from ${boards} where ${boards.workspaceId} = ${workspaceId}),
    'teammate', exists (select 1 from ${members} where ${members.workspaceId} = ${workspaceId} offset 1),
    'key', exists (select 1 from ${apiKeys} where ${apiKeys.workspaceId} = ${workspaceId} and ${apiKeys.revokedAt} is null),
    'chat', exists (select 1 from ${integrations} where ${integrations.workspaceId} = ${workspaceId}),
    'post', exists (select 1 from ${posts} where ${posts.workspaceId} = ${workspaceId}))`

/** The checklist for the steps `stepsProbe` found done. */
export function onboardingChecklist(viewer: WorkspaceViewer, done: StepsDone) {
  const ws = viewer.workspace
  const branded = Boolean(ws.logoFileId || typeof ws.settings.brand_color === 'string')
  const base = `/dashboard/${ws.slug}/settings`
  const steps: [boolean, string, string][] = [
    [done.boards, 'Create a board for feedback', settingsPath(ws.slug, 'boards')],
    [branded, 'Add your logo and brand colour', settingsPath(ws.slug, 'branding')],
    [done.teammate, 'Invite a teammate', `${base}/members`],
    [done.key, 'Create an API key', `${base}/api-keys`],
    [done.post, 'Install the widget and collect the first post', `${base}/widget`],
    [done.chat, 'Connect chat', settingsPath(ws.slug, 'integrations')],
  ]
  const finished = steps.filter(([ok]) => ok).length
  if (finished === steps.length) return html``
  return html`<section aria-labelledby="onboarding-h" class="card onboarding"><h2 id="onboarding-h">Get started</h2>
<p>${finished} of ${steps.length} done.</p>
<ol>${steps.map(([ok, label, href]) => html`<li>${ok ? html`<span aria-hidden="true">✓</span> <s>${label}</s> <span class="sr">(done)</span>` : html`<a href="${href}">${label}</a>`}</li>`)}</ol></section>`
}
