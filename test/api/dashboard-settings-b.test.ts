import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq, ne } from 'drizzle-orm'
import { boards, chatChannelMappings, emailOutbox, integrations, labels, notificationSubscriptions, postLabels, posts, statuses, users, workspaces } from '../../server/db/schema/index.ts'
import { CHAT_CLIENT, startFakeChat } from '../helpers/chat-provider.ts'
import { addMember, boardFixture, labelFixture, setSubscription, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { png, svg } from '../helpers/images.ts'
import { newId } from '../../server/lib/ids.ts'

// The settings pages of issue 35 this branch owns (boards, integrations, branding, workspace data,
// account) over real HTTP: status, page content, database side effects; happy, error and security cases.

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let member: TestClient
let admin: TestClient
let chat: ReturnType<typeof startFakeChat>
const XSS = '<script>alert(1)</script>'

beforeAll(async () => {
  chat = startFakeChat()
  h = await startHarness({
    CHAT_API_BASE: chat.base, CHAT_AUTHORIZE_URL: chat.authorizeUrl, CHAT_CLIENT_ID: CHAT_CLIENT.id, CHAT_CLIENT_SECRET: CHAT_CLIENT.secret,
    OPERATOR_URLS_ALLOW_PRIVATE: 'true',
  })
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  await boardFixture(h, other.id, 'ideas')
  member = (await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')).client
  admin = (await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')).client
}, 180_000)
afterAll(async () => {
  chat?.stop()
  await h?.close()
})

const settings = (section: string, slug = ws.slug) => `/dashboard/${slug}/settings/${section}`
const csrfOf = async (client: TestClient, page: string) => /name="csrf" value="([0-9a-f]+)"/.exec((await client.get(page)).body)?.[1] ?? ''
/** A form post as a browser sends it: urlencoded, with the page's CSRF token unless told otherwise. */
async function submit(client: TestClient, section: string, action: string, fields: Record<string, string | string[]>, csrf?: string) {
  const form = new URLSearchParams({ csrf: csrf ?? await csrfOf(client, settings(section)) })
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) form.append(name, one)
  return client.call('POST', `${settings(section)}${action}`, { raw: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
}
async function upload(client: TestClient, section: string, action: string, bytes: Uint8Array, name = 'image.png') {
  const form = new FormData()
  form.append('csrf', await csrfOf(client, settings(section)))
  form.append('file', new File([bytes as Uint8Array<ArrayBuffer>], name))
  return client.call('POST', `${settings(section)}${action}`, { raw: form })
}
const noticeOf = (location: string | null) => new URL(location!, 'http://x').searchParams.get('done')

describe('every settings page', () => {
  test('signed out → sign-in and back; another workspace → 404; no-store; nav links each page', async () => {
    for (const section of ['boards', 'integrations', 'branding', 'data', 'account']) {
      const anonymous = await h.client().get(settings(section))
      expect(anonymous.status).toBe(303)
      expect(anonymous.headers.get('location')).toBe(`/signin?${new URLSearchParams({ return_to: settings(section) })}`)
      expect((await other.owner.get(settings(section))).status).toBe(404)
      const res = await ws.owner.get(settings(section))
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(res.body).toContain(`<a href="${settings(section)}">`)
    }
  })

  test('a form without the session token, or with another session\'s, changes nothing', async () => {
    const forged = await submit(ws.owner, 'boards', '/boards', { name: 'Forged', slug: 'forged' }, 'f'.repeat(64))
    expect(forged.status).toBe(403)
    const otherToken = await submit(ws.owner, 'boards', '/boards', { name: 'Forged', slug: 'forged' }, await csrfOf(admin, settings('boards')))
    expect(otherToken.status).toBe(403)
    expect(await h.db.select().from(boards).where(and(eq(boards.workspaceId, ws.id), eq(boards.slug, 'forged')))).toEqual([])
  })
})

describe('boards, statuses and labels', () => {
  test('an admin creates, renames, makes private and default, and deletes a board (the confirmation names its posts)', async () => {
    const made = await submit(admin, 'boards', '/boards', { name: 'Bug reports', slug: 'bugs' })
    expect(made.status).toBe(303)
    expect(noticeOf(made.headers.get('location'))).toBe('Board “Bug reports” created')
    const [row] = await h.db.select().from(boards).where(and(eq(boards.workspaceId, ws.id), eq(boards.slug, 'bugs')))
    expect(row!.name).toBe('Bug reports')
    expect((await submit(admin, 'boards', '/boards/bugs', { name: 'Bugs', is_private: 'true' })).status).toBe(303)
    const [renamed] = await h.db.select().from(boards).where(eq(boards.id, row!.id))
    expect([renamed!.name, renamed!.isPrivate]).toEqual(['Bugs', true])
    expect((await submit(admin, 'boards', '/boards/ideas/default', {})).status).toBe(303)
    const [wsRow] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(wsRow!.settings.default_board).toBe('ideas')

    const key = await ws.key()
    await h.client({ authorization: `Bearer ${key}` }).post('/api/v1/boards/bugs/posts', { title: 'Crash', email: 'a@customer.example' })
    const page = (await admin.get(settings('boards'))).body as string
    expect(page).toContain('Delete board “Bugs” and its 1 post with their comments and votes, for good')
    const unconfirmed = await submit(admin, 'boards', '/boards/bugs/delete', {})
    expect(unconfirmed.status).toBe(422)
    expect(unconfirmed.body).toContain('Tick the box to confirm deleting the board.')
    expect((await submit(admin, 'boards', '/boards/bugs/delete', { confirm: 'bugs' })).status).toBe(303)
    expect(await h.db.select().from(boards).where(eq(boards.id, row!.id))).toEqual([])
    expect(await h.db.select().from(posts).where(eq(posts.boardId, row!.id))).toEqual([])
  })

  test('bad input re-renders with the API\'s rules and what was typed (escaped); a taken slug is refused', async () => {
    const bad = await submit(admin, 'boards', '/boards', { name: XSS, slug: 'Not A Slug' })
    expect(bad.status).toBe(422)
    expect(bad.body).toContain('The address is 2 to 48 lowercase letters')
    expect(bad.body).toContain('value="&lt;script&gt;alert(1)&lt;/script&gt;"')
    expect(bad.body).not.toContain(XSS)
    const taken = await submit(admin, 'boards', '/boards', { name: 'Again', slug: 'ideas' })
    expect(taken.status).toBe(409)
    expect(taken.body).toContain('already taken')
  })

  test('members see boards read-only and cannot change them (403 as in the API); they may add labels, as the API allows', async () => {
    const page = (await member.get(settings('boards'))).body as string
    expect(page).toContain('you see them read-only')
    expect(page).not.toContain('Create board')
    const refused = await submit(member, 'boards', '/boards', { name: 'Sneaky', slug: 'sneaky' })
    expect(refused.status).toBe(403)
    expect(await h.db.select().from(boards).where(and(eq(boards.workspaceId, ws.id), eq(boards.slug, 'sneaky')))).toEqual([])
    const label = await submit(member, 'boards', '/labels', { name: 'Needs design', color: '#112233' })
    expect(label.status).toBe(303)
    const [row] = await h.db.select().from(labels).where(and(eq(labels.workspaceId, ws.id), eq(labels.slug, 'needs-design')))
    expect(row!.color).toBe('#112233')
    expect((await submit(member, 'boards', '/labels', { name: 'x', color: 'red' })).status).toBe(422)
  })

  test('statuses: add, rename, recolour, reorder, make default; deleting one with posts moves them where the admin says', async () => {
    expect((await submit(ws.owner, 'boards', '/statuses', { name: 'Triaged', kind: 'open', color: '#123456' })).status).toBe(303)
    const all = async () => h.db.select().from(statuses).where(eq(statuses.workspaceId, ws.id)).orderBy(statuses.position)
    const triaged = (await all()).find((s) => s.name === 'Triaged')!
    expect(triaged.position).toBe((await all()).length - 1)
    expect((await submit(ws.owner, 'boards', `/statuses/${triaged.id}`, { name: 'Triage', color: '#abcdef' })).status).toBe(303)
    expect((await submit(ws.owner, 'boards', `/statuses/${triaged.id}/move`, { position: '0' })).status).toBe(303)
    expect((await all())[0]).toMatchObject({ id: triaged.id, name: 'Triage', color: '#abcdef' })
    const previousDefault = (await all()).find((s) => s.isDefault)!
    expect((await submit(ws.owner, 'boards', `/statuses/${triaged.id}/move`, { default: 'true' })).status).toBe(303)
    expect((await all()).filter((s) => s.isDefault).map((s) => s.id)).toEqual([triaged.id])
    const key = await ws.key()
    const post = (await h.client({ authorization: `Bearer ${key}` }).post('/api/v1/boards/ideas/posts', { title: 'On triage', email: 'b@customer.example' })).body
    expect((await submit(ws.owner, 'boards', `/statuses/${triaged.id}/move`, { position: 'first' })).status).toBe(422)
    // The default cannot be deleted: make the old one default again first.
    expect((await submit(ws.owner, 'boards', `/statuses/${previousDefault.id}/move`, { default: 'true' })).status).toBe(303)
    expect((await admin.get(settings('boards'))).body).toContain('Its 1 post move to')
    expect((await submit(ws.owner, 'boards', `/statuses/${triaged.id}/delete`, { confirm: 'yes' })).status).toBe(409)
    expect((await submit(ws.owner, 'boards', `/statuses/${triaged.id}/delete`, { confirm: 'yes', move_to: previousDefault.id })).status).toBe(303)
    const [moved] = await h.db.select().from(posts).where(eq(posts.id, post.id))
    expect(moved!.statusId).toBe(previousDefault.id)
    // Another workspace's status is not found.
    const foreign = (await h.db.select().from(statuses).where(eq(statuses.workspaceId, other.id)))[0]!
    expect((await submit(ws.owner, 'boards', `/statuses/${foreign.id}`, { name: 'Mine now' })).status).toBe(404)
  })

  test('deleting a label says how many posts lose it; the posts stay', async () => {
    const label = await labelFixture(h, ws.id, 'ux')
    const key = await ws.key()
    const post = (await h.client({ authorization: `Bearer ${key}` }).post('/api/v1/boards/ideas/posts', { title: 'Labelled', email: 'c@customer.example' })).body
    await h.db.insert(postLabels).values({ postId: post.id, labelId: label.id })
    expect((await admin.get(settings('boards'))).body).toContain('1 post lose it and stay')
    expect((await submit(admin, 'boards', `/labels/${label.id}/delete`, { confirm: 'yes' })).status).toBe(303)
    expect(await h.db.select().from(labels).where(eq(labels.id, label.id))).toEqual([])
    expect((await h.db.select().from(posts).where(eq(posts.id, post.id))).length).toBe(1)
  })
})

describe('branding', () => {
  test('brand colour with its contrast, anonymous posting, links; the portal shows the colour', async () => {
    const page = (await admin.get(settings('branding'))).body as string
    expect(page).toContain('<h1>Branding</h1>')
    expect(page).toContain('data-copy="portal-link"')
    expect(page).toContain('>Copy</button>')
    const saved = await submit(admin, 'branding', '/colour', { brand_color: '#FFEE00' })
    expect(noticeOf(saved.headers.get('location'))).toBe('Brand colour set to #ffee00')
    const after = (await admin.get(settings('branding'))).body as string
    expect(after).toContain('Black text on the colour (buttons): 17.5:1, passes AAA')
    expect(after).toContain('The colour on the light page background: 1.1:1, fails: hard to read')
    expect((await h.client().get(`/portal/${ws.slug}`)).body).toContain('--accent:#ffee00')
    expect((await submit(admin, 'branding', '/colour', { brand_color: 'javascript:1' })).status).toBe(422)
    expect((await submit(admin, 'branding', '/anonymous', {})).status).toBe(303)
    const [row] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(row!.settings).toMatchObject({ brand_color: '#ffee00', allow_anonymous: false })
    expect((await h.client().get(`/api/v1/public/${ws.slug}`)).body.workspace.settings.allow_anonymous).toBe(false)
  })

  test('logo upload with the upload service\'s limits and words; the preview shows the stored file', async () => {
    const refused = await upload(admin, 'branding', '/logo', svg(), 'logo.svg')
    expect(refused.status).toBe(415)
    expect(refused.body).toContain('The logo must be PNG, JPEG, WebP or GIF')
    expect((await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id)))[0]!.logoFileId).toBeNull()
    expect((await upload(admin, 'branding', '/logo', png())).status).toBe(303)
    const [row] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(row!.logoFileId).toStartWith('file_')
    expect((await admin.get(settings('branding'))).body).toContain(`<img src="http://localhost:3000/files/${row!.logoFileId}" alt="Current logo"`)
    expect((await upload(member, 'branding', '/logo', png())).status).toBe(403)
  })

  test('the inbound address: admins see it and rotate it with a confirmation; members never see it', async () => {
    const [before] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect((await admin.get(settings('branding'))).body).toContain(before!.emailIntakeToken)
    expect((await member.get(settings('branding'))).body).not.toContain(before!.emailIntakeToken)
    expect((await submit(admin, 'branding', '/intake/rotate', {})).status).toBe(422)
    expect((await submit(admin, 'branding', '/intake/rotate', { confirm: 'yes' })).status).toBe(303)
    const [after] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(after!.emailIntakeToken).not.toBe(before!.emailIntakeToken)
    expect((await submit(member, 'branding', '/intake/rotate', { confirm: 'yes' })).status).toBe(403)
  })
})

describe('integrations', () => {
  test('connect chat through the provider\'s authorize page with a state bound to the session, then map a channel', async () => {
    const install = await submit(admin, 'integrations', '/chat/install', {})
    expect(install.status).toBe(303)
    const authorize = new URL(install.headers.get('location')!)
    expect(authorize.origin + authorize.pathname).toBe(chat.authorizeUrl)
    expect(authorize.searchParams.get('redirect_uri')).toBe('http://localhost:3000/dashboard/_/integrations/chat/callback')
    // The provider redirects back; the callback runs on this browser's session (the install cookie says which workspace).
    const back = await fetch(authorize, { redirect: 'manual' })
    const callback = new URL(back.headers.get('location')!)
    // Another admin's browser cannot finish this install: the state is bound to the session that started it.
    const stolen = await ws.owner.get(`${callback.pathname}${callback.search}`, { headers: { cookie: `${[...ws.owner.jar].map(([k, v]) => `${k}=${v}`).join('; ')}; chorus_install=${ws.slug}` } })
    expect(stolen.status).toBe(403)
    const done = await admin.get(`${callback.pathname}${callback.search}`)
    expect(done.status).toBe(303)
    expect(noticeOf(done.headers.get('location'))).toBe('Chat connected')
    const [row] = await h.db.select().from(integrations).where(eq(integrations.workspaceId, ws.id))
    expect([row!.status, row!.externalName]).toEqual(['active', 'Acme & Co'])
    const page = (await admin.get(settings('integrations'))).body as string
    expect(page).toContain('Connected to Acme &amp; Co')
    expect(page).toContain('<option value="C0000FEED">#feedback</option>')
    expect(page).not.toContain('xoxb-')

    const none = await submit(admin, 'integrations', '/chat/mappings', { channel_id: 'C0000FEED' })
    expect(none.status).toBe(422)
    expect(none.body).toContain('Tick at least one event to post.')
    expect((await submit(admin, 'integrations', '/chat/mappings', { channel_id: 'C0000FEED', board_slug: 'ideas', events: ['post.created', 'status.changed'] })).status).toBe(303)
    const [mapping] = await h.db.select().from(chatChannelMappings).where(eq(chatChannelMappings.workspaceId, ws.id))
    expect([mapping!.channelId, mapping!.events]).toEqual(['C0000FEED', ['post.created', 'status.changed']])
  })

  test('a revoked token shows the reason and a Reconnect button', async () => {
    await h.db.update(integrations).set({ status: 'error', statusReason: 'the provider refused the token: token_revoked' }).where(eq(integrations.workspaceId, ws.id))
    const page = (await admin.get(settings('integrations'))).body as string
    expect(page).toContain('Needs reconnecting: the provider refused the token: token_revoked')
    expect(page).toContain('Reconnect chat</button>')
  })

  test('members get notifications only; they cannot start an install', async () => {
    const page = (await member.get(settings('integrations'))).body as string
    expect(page).toContain('Only admins connect chat and the issue tracker.')
    expect((await submit(member, 'integrations', '/chat/install', {})).status).toBe(403)
    const sub = await submit(member, 'integrations', '/subscriptions', { channel: 'email', events: ['post.created'] })
    expect(sub.status).toBe(303)
    // The member's own subscription (the owner's default daily digest is the owner's).
    const rows = await h.db.select().from(notificationSubscriptions).where(and(eq(notificationSubscriptions.workspaceId, ws.id), ne(notificationSubscriptions.userId, ws.ownerId)))
    expect(rows.map((r) => [r.channel, r.delivery, r.events])).toEqual([['email', 'instant', ['post.created']]])
    expect(page).toContain('Subscribe by daily e-mail digest')
    expect((await submit(member, 'integrations', '/subscriptions', { channel: 'email', events: ['post.created'] })).status).toBe(409)
  })

  test('the custom sending domain needs the owner and the Business plan; the DNS records are listed', async () => {
    expect((await ws.owner.get(settings('integrations'))).body).toContain('needs the Business plan')
    await setSubscription(h, ws.id, { plan: 'business' })
    expect((await submit(admin, 'integrations', '/domain', { domain: 'mail.acme.example' })).status).toBe(403)
    expect((await submit(ws.owner, 'integrations', '/domain', { domain: 'not a domain' })).status).toBe(422)
    expect((await submit(ws.owner, 'integrations', '/domain', { domain: 'mail.acme.example' })).status).toBe(303)
    const page = (await ws.owner.get(settings('integrations'))).body as string
    expect(page).toContain('mail.acme.example: <strong>Pending verification</strong>')
    expect(page).toContain('<caption>DNS records to add</caption>')
    expect(page).toContain('Not yet')
  })
})

describe('workspace data and account', () => {
  test('the owner downloads the export; admins are refused; deletion needs the typed address', async () => {
    expect((await admin.get(settings('data'))).body).toContain('Only the workspace owner can export or delete the workspace.')
    expect((await admin.get(`${settings('data')}/export`)).status).toBe(403)
    const exported = await ws.owner.get(`${settings('data')}/export`)
    expect(exported.status).toBe(200)
    expect(exported.headers.get('content-disposition')).toStartWith(`attachment; filename="chorus-${ws.slug}-`)
    expect(exported.body.workspace.slug).toBe(ws.slug)
    const doomed = await workspaceFixture(h)
    const form = async (confirm: string) => doomed.owner.call('POST', `${settings('data', doomed.slug)}/delete`, {
      raw: new URLSearchParams({ csrf: await csrfOf(doomed.owner, settings('data', doomed.slug)), confirm }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    const mistyped = await form('nope')
    expect(mistyped.status).toBe(422)
    expect(mistyped.body).toContain(`Type ${doomed.slug} exactly`)
    expect((await h.db.select().from(workspaces).where(eq(workspaces.id, doomed.id))).length).toBe(1)
    const gone = await form(doomed.slug)
    expect(gone.status).toBe(303)
    expect(await h.db.select().from(workspaces).where(eq(workspaces.id, doomed.id))).toEqual([])
  })

  test('account: profile name, avatar, personal export, and deletion with the typed address', async () => {
    const person = await workspaceFixture(h)
    const page = (slug = person.slug) => settings('account', slug)
    const post = async (action: string, fields: Record<string, string>) => person.owner.call('POST', `${page()}${action}`, {
      raw: new URLSearchParams({ csrf: await csrfOf(person.owner, page()), ...fields }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect((await post('/profile', { name: '' })).status).toBe(422)
    expect((await post('/profile', { name: 'Ada Lovelace' })).status).toBe(303)
    const [user] = await h.db.select().from(users).where(eq(users.id, person.ownerId))
    expect(user!.name).toBe('Ada Lovelace')
    const form = new FormData()
    form.append('csrf', await csrfOf(person.owner, page()))
    form.append('file', new File([png()], 'me.png'))
    expect((await person.owner.call('POST', `${page()}/avatar`, { raw: form })).status).toBe(303)
    expect((await h.db.select().from(users).where(eq(users.id, person.ownerId)))[0]!.avatarFileId).toStartWith('file_')
    const mine = await person.owner.get(`${page()}/export`)
    expect(mine.status).toBe(200)
    expect(JSON.stringify(mine.body)).toContain(user!.email)
    expect((await post('/delete', { confirm: 'someone@else.example' })).status).toBe(422)
    const deleted = await post('/delete', { confirm: user!.email })
    expect(deleted.status).toBe(303)
    expect(await h.db.select().from(users).where(eq(users.id, person.ownerId))).toEqual([])
    expect((await person.owner.get(page())).status).toBe(303)
  })

  test('an unverified address gets the verification e-mail again from the page', async () => {
    await h.db.update(users).set({ emailVerified: false }).where(eq(users.id, ws.ownerId))
    const before = (await h.db.select().from(emailOutbox).where(eq(emailOutbox.to, `owner-${ws.slug}@example.com`))).length
    expect((await ws.owner.get(settings('account'))).body).toContain('(not verified yet)')
    const sent = await submit(ws.owner, 'account', '/verify', {})
    expect(sent.status).toBe(303)
    expect(noticeOf(sent.headers.get('location'))).toBe(`Verification e-mail sent to owner-${ws.slug}@example.com`)
    expect((await h.db.select().from(emailOutbox).where(eq(emailOutbox.to, `owner-${ws.slug}@example.com`))).length).toBe(before + 1)
  })
})

describe('the onboarding checklist on the inbox', () => {
  test('it lists the steps with links, ticks what is done, and is gone once everything is', async () => {
    const fresh = await workspaceFixture(h)
    const first = (await fresh.owner.get(`/dashboard/${fresh.slug}`)).body as string
    expect(first).toContain('<h2 id="onboarding-h">Get started</h2>')
    expect(first).toContain('0 of 6 done.')
    expect(first).toContain(`<a href="/dashboard/${fresh.slug}/settings/boards">Create a board for feedback</a>`)
    const csrf = await csrfOf(fresh.owner, settings('boards', fresh.slug))
    await fresh.owner.call('POST', `${settings('boards', fresh.slug)}/boards`, { raw: new URLSearchParams({ csrf, name: 'Ideas', slug: 'ideas' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const after = (await fresh.owner.get(`/dashboard/${fresh.slug}`)).body as string
    expect(after).toContain('1 of 6 done.')
    expect(after).toContain('<s>Create a board for feedback</s>')
    // Everything done: no checklist (steps straight in the database; their pages have their own tests).
    await h.db.update(workspaces).set({ settings: { brand_color: '#112233' } }).where(eq(workspaces.id, fresh.id))
    await addMember(h, fresh, `mate-${fresh.slug}@example.com`, 'member')
    const key = await fresh.key()
    await h.client({ authorization: `Bearer ${key}` }).post('/api/v1/boards/ideas/posts', { title: 'First', email: 'd@customer.example' })
    await h.db.insert(integrations).values({ id: newId('integration'), workspaceId: fresh.id, provider: 'chat', status: 'active', accessToken: 'sealed' })
    expect((await fresh.owner.get(`/dashboard/${fresh.slug}`)).body).not.toContain('Get started')
  })
})
