import { html } from '../../../lib/html.ts'
import type { MemberRow } from '../../members/model.ts'
import { confirmBox, csrfInput, settingsPath } from './kit.ts'

// The Members page: who is in the workspace, pending invitations, and the forms the viewer's role allows.

export interface MembersView {
  slug: string
  workspaceName: string
  csrf: string
  viewerId: string
  viewerRole: 'owner' | 'admin' | 'member'
  members: MemberRow[]
  typed?: { email?: string; role?: string }
  invalid?: boolean
}

const date = (at: Date | null) => (at ? html`<time datetime="${at.toISOString()}">${at.toISOString().slice(0, 10)}</time>` : '')

export function membersView(view: MembersView) {
  const action = (userId: string, name: string) => `${settingsPath(view.slug, 'members')}/${userId}/${name}`
  const admin = view.viewerRole !== 'member'
  const active = view.members.filter((m) => m.status === 'active')
  const pending = view.members.filter((m) => m.status === 'pending')
  const who = (m: MemberRow) => (m.name ? `${m.name} (${m.email})` : m.email)

  const row = (m: MemberRow) => {
    const self = m.userId === view.viewerId
    const roleForm = admin && m.role !== 'owner'
      ? html`<form method="post" action="${action(m.userId, 'role')}" class="inline">${csrfInput(view.csrf)}
<label for="role-${m.userId}" class="sr">Role of ${who(m)}</label><select id="role-${m.userId}" name="role">${(['member', 'admin'] as const).map((r) => html`<option value="${r}"${m.role === r ? html` selected` : ''}>${r}</option>`)}</select>
<button class="btn plain" type="submit">Change role</button></form>`
      : ''
    const remove = m.role !== 'owner' && (admin || self)
      ? html`<form method="post" action="${action(m.userId, 'remove')}" class="inline">${csrfInput(view.csrf)}
<p>${confirmBox(self ? `Yes, I leave ${view.workspaceName}` : `Yes, remove ${who(m)} from ${view.workspaceName} (their connected apps stop too)`)}</p>
<button class="btn plain" type="submit">${self ? 'Leave' : 'Remove'}</button></form>`
      : ''
    const transfer = view.viewerRole === 'owner' && !self
      ? html`<form method="post" action="${action(m.userId, 'transfer')}" class="inline">${csrfInput(view.csrf)}
<p>${confirmBox(`Yes, make ${who(m)} the owner of ${view.workspaceName}; I become an admin`)}</p>
<button class="btn plain" type="submit">Transfer ownership</button></form>`
      : ''
    return html`<tr><th scope="row">${m.name ?? m.email}${self ? ' (you)' : ''}</th><td>${m.email}</td><td>${m.role}</td><td>${date(m.joinedAt)}</td><td>${roleForm}${transfer}${remove}</td></tr>`
  }

  const invitation = (m: MemberRow) => html`<tr><th scope="row">${m.email}</th><td>${m.role}</td><td>${date(m.invitedAt)}</td><td>${admin
    ? html`<form method="post" action="${action(m.userId, 'resend')}" class="inline">${csrfInput(view.csrf)}<button class="btn plain" type="submit" aria-label="Resend the invitation to ${m.email}">Resend</button></form>
<form method="post" action="${action(m.userId, 'remove')}" class="inline">${csrfInput(view.csrf)}<p>${confirmBox(`Yes, revoke the invitation of ${m.email}; its link stops working`)}</p><button class="btn plain" type="submit">Revoke</button></form>`
    : ''}</td></tr>`

  const typed = view.typed ?? {}
  return html`<h1>Members</h1>
${admin ? '' : html`<p>You can see who is here; admins invite, change roles and remove members.</p>`}
<table><caption>Members of ${view.workspaceName}</caption><thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col">Actions</th></tr></thead>
<tbody>${active.map(row)}</tbody></table>
<h2>Pending invitations</h2>
${pending.length ? html`<table><thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Invited</th><th scope="col">Actions</th></tr></thead><tbody>${pending.map(invitation)}</tbody></table>` : html`<p>No pending invitations.</p>`}
${admin ? html`<h2>Invite a colleague</h2>
<form method="post" action="${settingsPath(view.slug, 'members')}/invite">${csrfInput(view.csrf)}
<p><label for="invite-email">E-mail address</label><input id="invite-email" name="email" type="email" required maxlength="254" autocomplete="off" value="${typed.email ?? ''}"${view.invalid ? html` aria-invalid="true" aria-describedby="form-error"` : ''}></p>
<p><label for="invite-role">Role</label><select id="invite-role" name="role">${(['member', 'admin'] as const).map((r) => html`<option value="${r}"${(typed.role ?? 'member') === r ? html` selected` : ''}>${r === 'admin' ? 'Admin: also manages members, keys, webhooks and settings' : 'Member: triages feedback'}</option>`)}</select></p>
<p><button class="btn" type="submit">Invite</button></p>
<p>The invitation link is e-mailed and works once, for 7 days.</p></form>` : ''}`
}
