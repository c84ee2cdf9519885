import { html } from '../../../lib/html.ts'
import { SCOPES } from '../../../plugins/auth.ts'
import type { listGrants } from '../../oauth/grants.ts'
import { SCOPE_WORDS } from '../../oauth/model.ts'
import type { apiKeys } from '../../../db/schema/index.ts'
import { confirmBox, csrfInput, secretBox, settingsPath } from './kit.ts'

// The API keys page: keys (admins), the value shown once, and the apps connected through OAuth.

type Key = typeof apiKeys.$inferSelect
type Grant = Awaited<ReturnType<typeof listGrants>>[number]

/** Scopes grouped by what they open, in the order of SCOPES: "posts" → posts:read, posts:write. */
const GROUPS = [...new Set(SCOPES.map((scope) => scope.split(':')[0]!))].map((group) => ({ group, scopes: SCOPES.filter((scope) => scope.startsWith(`${group}:`)) }))
const GROUP_NAMES: Record<string, string> = { workspace: 'Workspace', boards: 'Boards', statuses: 'Statuses', labels: 'Labels', posts: 'Posts', comments: 'Comments', votes: 'Votes', webhooks: 'Webhooks', notifications: 'Notifications', changelog: 'Changelog', companies: 'Companies' }

export interface KeysView {
  slug: string
  csrf: string
  admin: boolean
  keys: Key[]
  grants: Grant[]
  created?: { name: string; secret: string }
  typed?: { name: string; scopes: string[] }
}

const when = (at: Date | string | null, never = 'Never') => {
  if (!at) return never
  const iso = typeof at === 'string' ? at : at.toISOString()
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`
}

export function keysView(view: KeysView) {
  const base = settingsPath(view.slug, 'api-keys')
  const typed = view.typed ?? { name: '', scopes: ['posts:read'] }
  const keyRow = (key: Key) => html`<tr><th scope="row">${key.name}</th><td><code>${key.start}…</code></td><td>${key.scopes.join(', ')}</td><td>${when(key.createdAt)}</td><td>${when(key.lastUsedAt)}</td>
<td><form method="post" action="${base}/${key.id}/revoke">${csrfInput(view.csrf)}<p>${confirmBox(`Yes, revoke "${key.name}" (${key.start}…); requests with it are refused at once`)}</p><button class="btn plain" type="submit">Revoke</button></form></td></tr>`
  const grantRow = (grant: Grant) => html`<tr><th scope="row">${grant.client_name}</th><td>${grant.scopes.join(', ')}</td><td>${when(grant.created_at)}</td><td>${when(grant.last_used_at)}</td>
<td><form method="post" action="${base}/grants/${grant.family_id}/revoke">${csrfInput(view.csrf)}<p>${confirmBox(`Yes, disconnect ${grant.client_name}; its tokens stop working at once`)}</p><button class="btn plain" type="submit">Revoke</button></form></td></tr>`

  const keys = view.admin
    ? html`${view.created ? secretBox('new-key', `The key "${view.created.name}"`, view.created.secret, 'This is the only time it is shown; Chorus keeps only a hash of it. Store it in your server\'s secrets, never in a browser.') : ''}
<table><caption>Active keys</caption><thead><tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Revoke</th></tr></thead>
<tbody>${view.keys.map(keyRow)}</tbody></table>${view.keys.length ? '' : html`<p>No keys yet.</p>`}
<h2>Create a key</h2>
<form method="post" action="${base}">${csrfInput(view.csrf)}
<p><label for="key-name">Name (what uses it, e.g. "CRM sync")</label><input id="key-name" name="name" required maxlength="100" value="${typed.name}"></p>
<fieldset><legend>Scopes: what the key may do</legend>
${GROUPS.map(({ group, scopes }) => html`<fieldset class="scope-group"><legend>${GROUP_NAMES[group] ?? group}</legend>
${scopes.map((scope) => html`<p><label><input type="checkbox" name="scopes" value="${scope}"${typed.scopes.includes(scope) ? html` checked` : ''}> <code>${scope}</code>: ${SCOPE_WORDS[scope]}</label></p>`)}</fieldset>`)}
</fieldset>
<p><button class="btn" type="submit">Create key</button></p></form>`
    : html`<p>Only admins create and revoke API keys. Below are the apps you connected.</p>`

  return html`<h1>API keys</h1>
<p>Servers call the API with a key in <code>Authorization: Bearer chorus_sk_…</code>. A key acts for the whole workspace, within its scopes.</p>
${keys}
<h2>Connected apps (OAuth)</h2>
<p>Apps a member allowed to act for them in this workspace${view.admin ? '' : ' (yours)'}.</p>
${view.grants.length ? html`<table><thead><tr><th scope="col">App</th><th scope="col">Scopes</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col">Revoke</th></tr></thead><tbody>${view.grants.map(grantRow)}</tbody></table>` : html`<p>No connected apps.</p>`}`
}
