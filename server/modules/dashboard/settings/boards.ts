import { Elysia } from 'elysia'
import type { AppContext } from '../../../context.ts'
import { STATUS_KINDS } from '../../../db/schema/index.ts'
import { invalid } from '../../../errors.ts'
import { html } from '../../../lib/html.ts'
import { roleAllows } from '../../../plugins/auth.ts'
import { BoardCreate, BoardUpdate } from '../../boards/model.ts'
import { createBoard, deleteBoard, listBoards, updateBoard } from '../../boards/service.ts'
import { LabelCreate, LabelUpdate } from '../../labels/model.ts'
import { createLabel, deleteLabel, labelPostCounts, listLabels, updateLabel } from '../../labels/service.ts'
import { StatusCreate, StatusUpdate } from '../../statuses/model.ts'
import { createStatus, deleteStatus, listStatuses, updateStatus } from '../../statuses/service.ts'
import { updateWorkspace } from '../../workspaces/service.ts'
import { DASHBOARD } from '../pages.ts'
import { checkedBody, csrfField, formText, hidden, invalidIf, settingsPage, settingsPath, settingsRoutes, type Form, type Refusal } from './common.ts'
import type { WorkspaceViewer } from '../context.ts'

// Settings: boards, statuses, labels (issue 35, page 2). The same services and body schemas as
// /workspaces/{slug}/boards, /statuses and /labels; the same roles: boards and statuses need an admin,
// labels any member (the API's `labels:write` routes take a member's session).

const BOARD_MESSAGES = { name: 'Give the board a name (1 to 100 characters).', slug: 'The address is 2 to 48 lowercase letters, digits and single hyphens.' }
const STATUS_MESSAGES = { name: 'Give the status a name (1 to 50 characters).', kind: 'Choose where the status sits on the roadmap.', color: 'Choose a colour like #3b82f6.' }
const LABEL_MESSAGES = { name: 'Give the label a name (1 to 50 characters).', color: 'Choose a colour like #8b5cf6.' }
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`

async function render(ctx: AppContext, viewer: WorkspaceViewer, refusal: Refusal) {
  const workspaceId = viewer.workspace.id
  const [boardRows, statusRows, labelRows, labelCounts] = await Promise.all([listBoards(ctx.db, workspaceId), listStatuses(ctx.db, workspaceId), listLabels(ctx.db, workspaceId), labelPostCounts(ctx.db, workspaceId)])
  const slug = viewer.workspace.slug
  const base = `${settingsPath(slug, 'boards')}`
  const admin = roleAllows(viewer.member.role, 'admin')
  const csrf = csrfField(viewer.csrf)
  const typed = refusal.typed ?? {}
  const defaultBoard = typeof viewer.workspace.settings.default_board === 'string' ? viewer.workspace.settings.default_board : null
  const readOnly = html`<p class="muted">Only admins change boards and statuses; you see them read-only.</p>`

  const boards = boardRows.map((b) => html`<li class="card" id="board-${b.slug}"><h3>${b.name}</h3>
<p>/${b.slug} · ${plural(b.postCount, 'post')} · ${b.isPrivate ? 'Private (team only)' : 'Public'}${b.slug === defaultBoard ? ' · Default board' : ''}</p>
${admin && html`<form method="post" action="${base}/boards/${b.slug}">${csrf}
<p><label for="bn-${b.slug}">Name of board ${b.slug}</label><input id="bn-${b.slug}" name="name" required maxlength="100" value="${b.name}"></p>
<p><label><input type="checkbox" name="is_private" value="true"${b.isPrivate ? html` checked` : ''}> Private: hidden from the portal and widget</label></p>
<p><button class="btn" type="submit">Save board ${b.slug}</button></p></form>
${b.slug !== defaultBoard && !b.isPrivate && html`<form method="post" action="${base}/boards/${b.slug}/default">${csrf}<p><button class="btn plain" type="submit">Make ${b.slug} the default board</button></p></form>`}
<form method="post" action="${base}/boards/${b.slug}/delete">${csrf}
<p><label><input type="checkbox" name="confirm" value="${b.slug}" required> Delete board “${b.name}” and its ${plural(b.postCount, 'post')} with their comments and votes, for good</label></p>
<p><button class="btn" type="submit">Delete board ${b.slug}</button></p></form>`}</li>`)

  const statuses = statusRows.map((s, i) => html`<li class="card" id="status-${s.id}"><h3>${s.name}</h3>
<p>${s.kind.replace('_', ' ')} · colour ${s.color} · ${plural(s.postCount, 'post')}${s.isDefault ? ' · Default for new posts' : ''}</p>
${admin && html`<form method="post" action="${base}/statuses/${s.id}">${csrf}
<p><label for="sn-${s.id}">Name of status ${s.name}</label><input id="sn-${s.id}" name="name" required maxlength="50" value="${s.name}"></p>
<p><label for="sc-${s.id}">Colour of status ${s.name}</label><input id="sc-${s.id}" name="color" type="color" value="${s.color}"></p>
<p><button class="btn" type="submit">Save status ${s.name}</button></p></form>
<form method="post" action="${base}/statuses/${s.id}/move">${csrf}<p>
${i > 0 && html`<button class="btn plain" type="submit" name="position" value="${i - 1}">Move ${s.name} up</button> `}
${i < statusRows.length - 1 && html`<button class="btn plain" type="submit" name="position" value="${i + 1}">Move ${s.name} down</button>`}
${!s.isDefault && html` <button class="btn plain" type="submit" name="default" value="true">Make ${s.name} the default</button>`}</p></form>
${!s.isDefault && html`<form method="post" action="${base}/statuses/${s.id}/delete">${csrf}
${s.postCount > 0 && html`<p><label for="sm-${s.id}">Its ${plural(s.postCount, 'post')} move to</label><select id="sm-${s.id}" name="move_to">${statusRows.filter((o) => o.id !== s.id).map((o) => html`<option value="${o.id}">${o.name}</option>`)}</select></p>`}
<p><label><input type="checkbox" name="confirm" value="yes" required> Delete status “${s.name}”${s.postCount > 0 ? ` (its ${plural(s.postCount, 'post')} move to the status chosen above)` : ''}</label></p>
<p><button class="btn" type="submit">Delete status ${s.name}</button></p></form>`}`}</li>`)

  const labels = labelRows.map((l) => html`<li class="card" id="label-${l.slug}"><h3>${l.name}</h3>
<p>${l.slug}${l.color ? ` · colour ${l.color}` : ''} · on ${plural(labelCounts.get(l.id) ?? 0, 'post')}</p>
<form method="post" action="${base}/labels/${l.id}">${csrf}
<p><label for="ln-${l.id}">Name of label ${l.slug}</label><input id="ln-${l.id}" name="name" required maxlength="50" value="${l.name}"></p>
<p><label for="lc-${l.id}">Colour of label ${l.slug}</label><input id="lc-${l.id}" name="color" type="color" value="${l.color ?? '#6b7280'}"></p>
<p><button class="btn" type="submit">Save label ${l.slug}</button></p></form>
<form method="post" action="${base}/labels/${l.id}/delete">${csrf}
<p><label><input type="checkbox" name="confirm" value="yes" required> Delete label “${l.name}”: ${plural(labelCounts.get(l.id) ?? 0, 'post')} lose it and stay</label></p>
<p><button class="btn" type="submit">Delete label ${l.slug}</button></p></form></li>`)

  return settingsPage(viewer, 'Boards, statuses and labels', refusal, html`<h1>Boards, statuses and labels</h1>
<section aria-labelledby="boards-h"><h2 id="boards-h">Boards</h2>
${!admin && readOnly}
<ul class="list">${boards}</ul>
${boardRows.length === 0 && html`<p>No boards yet: create one so the portal and widget have somewhere to post.</p>`}
${admin && html`<form method="post" action="${base}/boards" class="card">${csrf}<h3>Create a board</h3>
<p><label for="new-board-name">Board name</label><input id="new-board-name" name="name" required maxlength="100" value="${typed.board_name ?? ''}"${invalidIf(refusal, 'name')}></p>
<p><label for="new-board-slug">Board address (slug)</label><input id="new-board-slug" name="slug" required maxlength="48" pattern="[a-z0-9]+(-[a-z0-9]+)*" value="${typed.board_slug ?? ''}"${invalidIf(refusal, 'slug')}></p>
<p><label><input type="checkbox" name="is_private" value="true"> Private board</label></p>
<p><button class="btn" type="submit">Create board</button></p></form>`}</section>
<section aria-labelledby="statuses-h"><h2 id="statuses-h">Statuses</h2>
<ol class="list">${statuses}</ol>
${admin && html`<form method="post" action="${base}/statuses" class="card">${csrf}<h3>Add a status</h3>
<p><label for="new-status-name">Status name</label><input id="new-status-name" name="name" required maxlength="50" value="${typed.status_name ?? ''}"></p>
<p><label for="new-status-kind">Roadmap column</label><select id="new-status-kind" name="kind">${STATUS_KINDS.map((k) => html`<option value="${k}">${k.replace('_', ' ')}</option>`)}</select></p>
<p><label for="new-status-color">Status colour</label><input id="new-status-color" name="color" type="color" value="#6b7280"></p>
<p><button class="btn" type="submit">Add status</button></p></form>`}</section>
<section aria-labelledby="labels-h"><h2 id="labels-h">Labels</h2>
<ul class="list">${labels}</ul>
<form method="post" action="${base}/labels" class="card">${csrf}<h3>Add a label</h3>
<p><label for="new-label-name">Label name</label><input id="new-label-name" name="name" required maxlength="50" value="${typed.label_name ?? ''}"></p>
<p><label for="new-label-color">Label colour</label><input id="new-label-color" name="color" type="color" value="#8b5cf6"></p>
<p><button class="btn" type="submit">Add label</button></p></form></section>
<p><a href="${DASHBOARD}/${slug}">Back to the inbox</a></p>`)
}

const colorOf = (body: Form) => formText(body.color) || undefined
const confirmed = (body: Form, expected: string, what: string) => {
  if (formText(body.confirm) !== expected) throw invalid(['body', 'confirm'], `Tick the box to confirm deleting ${what}.`)
}

export const boardsSettingsModule = (ctx: AppContext) => {
  const routes = settingsRoutes(ctx)
  const view = (viewer: WorkspaceViewer, refusal: Refusal) => render(ctx, viewer, refusal)
  const path = `${DASHBOARD}/:workspace_slug/settings/boards`
  const admin = (typed?: (body: Form) => Record<string, string>) => ({ role: 'admin' as const, section: 'boards' as const, render: view, typed })
  const member = { role: 'member' as const, section: 'boards' as const, render: view, typed: (body: Form) => ({ label_name: formText(body.name) }) }
  const parse = { parse: 'urlencoded' as const, ...hidden }

  return new Elysia({ name: 'dashboard-settings-boards' })
    .get(path, routes.view('member', view), hidden)
    .post(`${path}/boards`, routes.action(admin((body) => ({ board_name: formText(body.name), board_slug: formText(body.slug) })), async (viewer, { body }) => {
      const input = checkedBody<{ name: string; slug: string; is_private: boolean }>(BoardCreate, { name: formText(body.name), slug: formText(body.slug).trim(), is_private: formText(body.is_private) === 'true' }, BOARD_MESSAGES)
      await createBoard(ctx.db, viewer.workspace.id, input)
      return `Board “${input.name.trim()}” created`
    }), parse)
    .post(`${path}/boards/:board_slug`, routes.action(admin(), async (viewer, { body, params }) => {
      const input = checkedBody<{ name: string; is_private: boolean }>(BoardUpdate, { name: formText(body.name), is_private: formText(body.is_private) === 'true' }, BOARD_MESSAGES)
      await updateBoard(ctx.db, viewer.workspace.id, params.board_slug!, input)
      return 'Board saved'
    }), parse)
    .post(`${path}/boards/:board_slug/default`, routes.action(admin(), async (viewer, { params }) => {
      const board = (await listBoards(ctx.db, viewer.workspace.id)).find((b) => b.slug === params.board_slug)
      if (!board) return view(viewer, { error: 'Board not found', status: 404 })
      await updateWorkspace(ctx.db, viewer.workspace, { settings: { default_board: board.slug } })
      return `“${board.name}” is the default board`
    }), parse)
    .post(`${path}/boards/:board_slug/delete`, routes.action(admin(), async (viewer, { body, params }) => {
      confirmed(body, params.board_slug!, 'the board')
      await deleteBoard(ctx.db, viewer.workspace.id, params.board_slug!)
      return 'Board deleted with its posts'
    }), parse)
    .post(`${path}/statuses`, routes.action(admin((body) => ({ status_name: formText(body.name) })), async (viewer, { body }) => {
      const input = checkedBody<{ name: string; kind: (typeof STATUS_KINDS)[number]; color?: string }>(StatusCreate, { name: formText(body.name), kind: formText(body.kind), color: colorOf(body) }, STATUS_MESSAGES)
      await createStatus(ctx.db, viewer.workspace.id, input)
      return 'Status added'
    }), parse)
    .post(`${path}/statuses/:status_id`, routes.action(admin(), async (viewer, { body, params }) => {
      const input = checkedBody<{ name: string; color?: string }>(StatusUpdate, { name: formText(body.name), color: colorOf(body) }, STATUS_MESSAGES)
      await updateStatus(ctx.db, viewer.workspace.id, params.status_id!, input)
      return 'Status saved'
    }), parse)
    .post(`${path}/statuses/:status_id/move`, routes.action(admin(), async (viewer, { body, params }) => {
      const position = Number.parseInt(formText(body.position), 10)
      const input = formText(body.default) === 'true' ? { is_default: true } : checkedBody<{ position: number }>(StatusUpdate, { position: Number.isInteger(position) ? position : -1 }, { position: 'Choose where to move the status.' })
      await updateStatus(ctx.db, viewer.workspace.id, params.status_id!, input)
      return 'is_default' in input ? 'Default status changed' : 'Status moved'
    }), parse)
    .post(`${path}/statuses/:status_id/delete`, routes.action(admin(), async (viewer, { body, params }) => {
      confirmed(body, 'yes', 'the status')
      await deleteStatus(ctx.db, viewer.workspace.id, params.status_id!, formText(body.move_to) || undefined, viewer.member.userId)
      return 'Status deleted'
    }), parse)
    .post(`${path}/labels`, routes.action(member, async (viewer, { body }) => {
      const input = checkedBody<{ name: string; color?: string }>(LabelCreate, { name: formText(body.name), color: colorOf(body) }, LABEL_MESSAGES)
      await createLabel(ctx.db, viewer.workspace.id, input)
      return `Label “${input.name.trim()}” added`
    }), parse)
    .post(`${path}/labels/:label_id`, routes.action(member, async (viewer, { body, params }) => {
      const input = checkedBody<{ name: string; color?: string }>(LabelUpdate, { name: formText(body.name), color: colorOf(body) }, LABEL_MESSAGES)
      await updateLabel(ctx.db, viewer.workspace.id, params.label_id!, input)
      return 'Label saved'
    }), parse)
    .post(`${path}/labels/:label_id/delete`, routes.action(member, async (viewer, { body, params }) => {
      confirmed(body, 'yes', 'the label')
      await deleteLabel(ctx.db, viewer.workspace.id, params.label_id!)
      return 'Label deleted; its posts stay'
    }), parse)
}
