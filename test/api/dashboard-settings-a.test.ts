import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { startEventDispatcher, type EventDispatcher } from '../../server/background/dispatcher.ts'
import { startWebhookRunner, type WebhookRunner } from '../../server/background/delivery-runner.ts'
import { apiKeys, eventDispatch, events, jwtConfigs, members, webhookDeliveryLogs, webhooks } from '../../server/db/schema/index.ts'
import { addMember, boardFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { eventually, startReceiver } from '../helpers/receiver.ts'
import { lastOutboxMail } from '../helpers/session.ts'
import { tokenFromMail } from '../helpers/smtp.ts'

// The settings pages of issue 35 (members, API keys, webhooks, widget) over real HTTP: forms as a browser
// sends them, the database after each, secrets shown once, role rules as the API's, CSRF on every form.

let h: Harness
let ws: WorkspaceFixture
let other: WorkspaceFixture
let member: TestClient
let memberId: string
let receiver: Awaited<ReturnType<typeof startReceiver>>
let dispatcher: EventDispatcher
let runner: WebhookRunner

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true' })
  ws = await workspaceFixture(h)
  other = await workspaceFixture(h)
  await boardFixture(h, ws.id, 'ideas')
  const added = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
  member = added.client
  memberId = added.userId
  receiver = await startReceiver()
  dispatcher = startEventDispatcher({ db: h.database.sql, log: h.ctx.log, listenForWork: h.database.listenForWork })
  runner = await startWebhookRunner(h.ctx, { databaseUrl: h.databaseUrl })
  await runner.ready()
}, 120_000)
afterAll(async () => {
  await runner?.stop()
  await dispatcher?.stop()
  receiver?.stop()
  await h.close()
})

const settings = (section: string, slug = ws.slug) => `/dashboard/${slug}/settings/${section}`
const csrfOf = async (client: TestClient, path: string) => /name="csrf" value="([0-9a-f]+)"/.exec((await client.get(path)).body)?.[1] ?? ''
/** A form post as a browser sends it: urlencoded, with the page's CSRF token unless told otherwise. */
async function submit(client: TestClient, formPage: string, action: string, fields: Record<string, string | string[]> = {}, csrf?: string) {
  const form = new URLSearchParams({ csrf: csrf ?? await csrfOf(client, formPage) })
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) form.append(name, one)
  return client.call('POST', action, { raw: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
}
const occurrences = (text: string, part: string) => text.split(part).length - 1

describe('every settings page', () => {
  test('signed out: sign in and come back; a stranger gets 404; pages are never stored', async () => {
    for (const section of ['members', 'api-keys', 'webhooks', 'widget']) {
      const res = await h.client().get(settings(section))
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/signin?${new URLSearchParams({ return_to: settings(section) })}`)
      expect((await other.owner.get(settings(section))).status).toBe(404)
      const own = await ws.owner.get(settings(section))
      expect(own.status).toBe(200)
      expect(own.headers.get('cache-control')).toBe('no-store')
      expect(own.body).toContain(`href="${settings(section)}"`)
    }
  })
})

describe('Members', () => {
  test('the owner invites; the invitee accepts from the e-mail link with the Accept button and lands in the dashboard', async () => {
    const page = await ws.owner.get(settings('members'))
    expect(page.body).toContain('<h1>Members</h1>')
    expect(page.body).toContain('>Invite</button>')
    const email = `ada-${ws.slug}@example.com`
    const sent = await submit(ws.owner, settings('members'), `${settings('members')}/invite`, { email, role: 'admin' })
    expect(sent.status).toBe(303)
    const listed = await ws.owner.get(settings('members'))
    expect(listed.body).toContain('Pending invitations')
    expect(listed.body).toContain(email)
    const first = await lastOutboxMail(h, email)
    expect(first.text).toContain(`/accept-invite?token=`)

    // Resend: a fresh link (the old one is still one of the user's tokens, but the newest mail carries a new one).
    const invitee = (await h.db.select().from(members).where(and(eq(members.workspaceId, ws.id), eq(members.status, 'pending'))))[0]!
    expect((await submit(ws.owner, settings('members'), `${settings('members')}/${invitee.userId}/resend`)).status).toBe(303)
    const mail = await lastOutboxMail(h, email)
    expect(tokenFromMail(mail)).not.toBe(tokenFromMail(first))

    const browser = h.client()
    const link = new URL(/https?:\/\/\S+accept-invite\S+/.exec(mail.text)![0])
    const landing = await browser.get(`${link.pathname}${link.search}`)
    expect(landing.status).toBe(200)
    expect(landing.body).toContain('<button type="submit">Accept</button>')
    // A form without its cookie (another site's) is refused, and nothing is accepted.
    const token = link.searchParams.get('token')!
    const forged = await h.client().call('POST', '/accept-invite', { raw: new URLSearchParams({ csrf: 'x'.repeat(43), token, workspace: ws.slug, name: 'Eve' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(forged.status).toBe(403)
    const csrf = /name="csrf" value="([^"]+)"/.exec(landing.body)![1]!
    const accepted = await browser.call('POST', '/accept-invite', { raw: new URLSearchParams({ csrf, token, workspace: ws.slug, name: 'Ada Lovelace' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(accepted.status).toBe(303)
    expect(accepted.headers.get('location')).toBe(`/dashboard/${ws.slug}`)
    const [row] = await h.db.select().from(members).where(and(eq(members.workspaceId, ws.id), eq(members.userId, invitee.userId)))
    expect(row).toMatchObject({ status: 'active', role: 'admin' })
    expect((await browser.get(`/dashboard/${ws.slug}`)).status).toBe(200)
    // Used once.
    const again = await browser.call('POST', '/accept-invite', { raw: new URLSearchParams({ csrf, token, workspace: ws.slug, name: 'Ada' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(again.status).toBe(401)
    expect(again.body).toContain('invalid, expired or already used')
  })

  test('bad input keeps what was typed; a member sees the list read-only and cannot act; no CSRF, no change', async () => {
    const bad = await submit(ws.owner, settings('members'), `${settings('members')}/invite`, { email: 'not-an-<address>', role: 'member' })
    expect(bad.status).toBe(422)
    expect(bad.body).toContain('value="not-an-&lt;address&gt;"')
    expect(bad.body).toContain('aria-invalid="true"')
    const seen = await member.get(settings('members'))
    expect(seen.status).toBe(200)
    expect(seen.body).toContain(`owner-${ws.slug}@example.com`)
    expect(seen.body).not.toContain('>Invite</button>')
    const refused = await submit(member, settings('members'), `${settings('members')}/invite`, { email: `x-${ws.slug}@example.com`, role: 'member' })
    expect(refused.status).toBe(403)
    expect((await submit(member, settings('members'), `${settings('members')}/${ws.ownerId}/role`, { role: 'member' })).status).toBe(403)
    const noCsrf = await submit(ws.owner, settings('members'), `${settings('members')}/invite`, { email: `y-${ws.slug}@example.com`, role: 'member' }, '')
    expect(noCsrf.status).toBe(403)
    const rows = await h.db.select().from(members).where(eq(members.workspaceId, ws.id))
    expect(rows).toHaveLength(3)
  })

  test('roles change, removal needs the confirmation naming who goes, and ownership moves only by the owner', async () => {
    const extra = await addMember(h, ws, `temp-${ws.slug}@example.com`, 'member')
    expect((await submit(ws.owner, settings('members'), `${settings('members')}/${extra.userId}/role`, { role: 'admin' })).status).toBe(303)
    const roleOf = async (userId: string) => (await h.db.select().from(members).where(and(eq(members.workspaceId, ws.id), eq(members.userId, userId))))[0]?.role
    expect(await roleOf(extra.userId)).toBe('admin')
    // An admin is not the owner: no transfer.
    expect((await submit(extra.client, settings('members'), `${settings('members')}/${memberId}/transfer`, { confirm: 'yes' })).status).toBe(403)
    const page = await ws.owner.get(settings('members'))
    expect(page.body).toContain(`Yes, remove temp-${ws.slug}@example.com from Workspace ${ws.slug}`)
    const unconfirmed = await submit(ws.owner, settings('members'), `${settings('members')}/${extra.userId}/remove`)
    expect(unconfirmed.status).toBe(422)
    expect(await roleOf(extra.userId)).toBe('admin')
    expect((await submit(ws.owner, settings('members'), `${settings('members')}/${extra.userId}/remove`, { confirm: 'yes' })).status).toBe(303)
    expect(await roleOf(extra.userId)).toBeUndefined()
    // The owner cannot be removed; a foreign user id is 404.
    expect((await submit(ws.owner, settings('members'), `${settings('members')}/${ws.ownerId}/remove`, { confirm: 'yes' })).status).toBe(409)
    expect((await submit(ws.owner, settings('members'), `${settings('members')}/${other.ownerId}/remove`, { confirm: 'yes' })).status).toBe(404)
  })
})

describe('API keys', () => {
  test('created with grouped scopes, the value shown once with Copy and a warning, works, then revoked at once', async () => {
    const page = await ws.owner.get(settings('api-keys'))
    expect(page.body).toContain('<h1>API keys</h1>')
    expect(page.body).toContain('<legend>Posts</legend>')
    expect(page.body).toContain('Create, change, merge and delete posts')
    const created = await submit(ws.owner, settings('api-keys'), settings('api-keys'), { name: 'CRM <sync>', scopes: ['boards:read', 'posts:read'] })
    expect(created.status).toBe(201)
    expect(created.headers.get('cache-control')).toBe('no-store')
    const key = /id="new-key" class="secret-value" readonly value="(chorus_sk_[0-9A-Za-z]{32})"/.exec(created.body)![1]!
    expect(occurrences(created.body, key)).toBe(1)
    expect(created.body).toContain('>Copy</button>')
    expect(created.body).toContain('only time it is shown')
    expect(created.body).toContain('CRM &lt;sync&gt;')
    const later = await ws.owner.get(settings('api-keys'))
    expect(later.body).not.toContain(key)
    expect(later.body).toContain(key.slice(0, 14))

    const api = h.client({ authorization: `Bearer ${key}` })
    expect((await api.get('/api/v1/boards')).status).toBe(200)
    const [row] = await h.db.select().from(apiKeys).where(eq(apiKeys.start, key.slice(0, 14)))
    expect(row!.scopes).toEqual(['boards:read', 'posts:read'])
    expect((await ws.owner.get(settings('api-keys'))).body).not.toContain('<td>Never</td><td><form')

    expect((await submit(ws.owner, settings('api-keys'), `${settings('api-keys')}/${row!.id}/revoke`)).status).toBe(422)
    expect((await api.get('/api/v1/boards')).status).toBe(200)
    expect((await submit(ws.owner, settings('api-keys'), `${settings('api-keys')}/${row!.id}/revoke`, { confirm: 'yes' })).status).toBe(303)
    expect((await api.get('/api/v1/boards')).status).toBe(401)
  })

  test('errors: no scope, unknown scope, a member (403, no key section), no CSRF, a foreign key', async () => {
    const none = await submit(ws.owner, settings('api-keys'), settings('api-keys'), { name: 'Empty' })
    expect(none.status).toBe(422)
    expect(none.body).toContain('Tick at least one scope')
    expect((await submit(ws.owner, settings('api-keys'), settings('api-keys'), { name: 'X', scopes: ['root:all'] })).status).toBe(422)
    const seen = await member.get(settings('api-keys'))
    expect(seen.status).toBe(200)
    expect(seen.body).not.toContain('Create key')
    expect(seen.body).toContain('Connected apps')
    expect((await submit(member, settings('api-keys'), settings('api-keys'), { name: 'Mine', scopes: ['posts:read'] })).status).toBe(403)
    expect((await submit(ws.owner, settings('api-keys'), settings('api-keys'), { name: 'NoCsrf', scopes: ['posts:read'] }, 'bad')).status).toBe(403)
    const foreign = (await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, other.id)))[0]
    if (foreign) expect((await submit(ws.owner, settings('api-keys'), `${settings('api-keys')}/${foreign.id}/revoke`, { confirm: 'yes' })).status).toBe(404)
    const names = (await h.db.select().from(apiKeys).where(eq(apiKeys.workspaceId, ws.id))).map((k) => k.name)
    expect(names).not.toContain('Mine')
    expect(names).not.toContain('NoCsrf')
  })
})

describe('Webhooks', () => {
  test('add, secret once, send test event, failure in the log with status and body, retry, filter', async () => {
    const hookPath = `/settings-${ws.slug}`
    const created = await submit(ws.owner, settings('webhooks'), settings('webhooks'), { url: receiver.url(hookPath), events: ['post.created'], description: 'Local' })
    expect(created.status).toBe(201)
    const secret = /id="new-secret" class="secret-value" readonly value="(whsec_[^"]+)"/.exec(created.body)![1]!
    expect(occurrences(created.body, secret)).toBe(1)
    expect((await ws.owner.get(settings('webhooks'))).body).not.toContain(secret)
    const [hook] = await h.db.select().from(webhooks).where(eq(webhooks.workspaceId, ws.id))

    expect((await submit(ws.owner, settings('webhooks'), `${settings('webhooks')}/${hook!.id}/test`)).status).toBe(303)
    const [hit] = await receiver.waitFor(hookPath, 1, 5000)
    const event = new Webhook(secret).verify(hit!.body, Object.fromEntries(hit!.headers)) as { type: string; data: { webhook_id: string } }
    expect(event).toMatchObject({ type: 'webhook.test', data: { webhook_id: hook!.id } })
    // Only this endpoint hears it: not queued for the other subscribers.
    expect(await h.db.select().from(eventDispatch)).toHaveLength(0)
    const log = `${settings('webhooks')}/${hook!.id}`
    await eventually(async () => (await ws.owner.get(log)).body.includes('Delivered'))

    receiver.respondWith(() => new Response('receiver <down>', { status: 500 }))
    await submit(ws.owner, log, `${log}/test`)
    await eventually(async () => (await h.db.select().from(webhookDeliveryLogs).where(and(eq(webhookDeliveryLogs.webhookId, hook!.id), eq(webhookDeliveryLogs.success, false)))).length === 1)
    const failed = await ws.owner.get(`${log}?success=false`)
    expect(failed.body).toContain('<strong>Failed</strong>')
    expect(failed.body).toContain('<td>500</td>')
    expect(failed.body).toContain('receiver &lt;down&gt;')
    expect(failed.body).toMatch(/<td>\d+ ms<\/td>/)
    expect(failed.body).not.toContain('Delivered</td>')
    const logId = /action="[^"]+\/logs\/([^/"]+)\/retry"/.exec(failed.body)![1]!

    receiver.respondWith(() => new Response('ok'))
    expect((await submit(ws.owner, log, `${settings('webhooks')}/logs/${logId}/retry`)).status).toBe(303)
    await eventually(async () => (await h.db.select().from(webhookDeliveryLogs).where(and(eq(webhookDeliveryLogs.webhookId, hook!.id), eq(webhookDeliveryLogs.success, true)))).length === 2)
    const delivered = await ws.owner.get(`${log}?success=true`)
    expect(occurrences(delivered.body, '<td>Delivered</td>')).toBe(2)
  })

  test('a refused URL says why on the form; disable; rotate and delete need their confirmation; members and forged forms get nothing', async () => {
    const refused = await submit(ws.owner, settings('webhooks'), settings('webhooks'), { url: 'ftp://example.com/hook', events: ['post.created'] })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatch(/role="alert" id="form-error">The URL [^<]+/)
    expect(refused.body).toContain('value="ftp://example.com/hook"')
    const [hook] = await h.db.select().from(webhooks).where(eq(webhooks.workspaceId, ws.id))
    expect((await submit(ws.owner, settings('webhooks'), `${settings('webhooks')}/${hook!.id}/rotate`)).status).toBe(422)
    const rotated = await submit(ws.owner, settings('webhooks'), `${settings('webhooks')}/${hook!.id}/rotate`, { confirm: 'yes' })
    expect(rotated.status).toBe(200)
    expect(rotated.body).toMatch(/value="whsec_[^"]+"/)
    expect(rotated.body).toContain('The previous secret keeps signing')
    expect((await submit(ws.owner, settings('webhooks'), `${settings('webhooks')}/${hook!.id}/enabled`, { enabled: 'false' })).status).toBe(303)
    expect((await h.db.select().from(webhooks).where(eq(webhooks.id, hook!.id)))[0]!.enabled).toBe(false)
    const disabledTest = await submit(ws.owner, settings('webhooks'), `${settings('webhooks')}/${hook!.id}/test`)
    expect(disabledTest.status).toBe(409)
    expect((await member.get(settings('webhooks'))).status).toBe(403)
    expect((await member.get(`${settings('webhooks')}/${hook!.id}`)).status).toBe(403)
    expect((await submit(member, settings('members'), `${settings('webhooks')}/${hook!.id}/delete`, { confirm: 'yes' })).status).toBe(403)
    expect((await submit(ws.owner, settings('webhooks'), `${settings('webhooks')}/${hook!.id}/delete`, { confirm: 'yes' }, 'forged')).status).toBe(403)
    expect((await ws.owner.get(`${settings('webhooks', other.slug)}/${hook!.id}`)).status).toBe(404)
    expect(await h.db.select().from(webhooks).where(eq(webhooks.id, hook!.id))).toHaveLength(1)
    expect((await submit(ws.owner, settings('webhooks'), `${settings('webhooks')}/${hook!.id}/delete`, { confirm: 'yes' })).status).toBe(303)
    expect(await h.db.select().from(webhooks).where(eq(webhooks.id, hook!.id))).toHaveLength(0)
  })

  test('the API: POST …/webhooks/{id}/test with a key (202), disabled (409), foreign (404), without webhooks:write (403)', async () => {
    const api = h.client({ authorization: `Bearer ${await ws.key()}` })
    const made = await api.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: receiver.url(`/api-${ws.slug}`), events: ['vote.created'] })
    const sent = await api.post(`/api/v1/workspaces/${ws.slug}/webhooks/${made.body.id}/test`)
    expect(sent.status).toBe(202)
    const eventId = sent.body.event_id as string
    expect(eventId).toMatch(/^evt_/)
    expect(sent.body).toEqual({ status: 'queued', webhook_id: made.body.id, event_id: eventId })
    const [stored] = await h.db.select().from(events).where(eq(events.id, eventId))
    expect(stored!.type).toBe('webhook.test')
    await receiver.waitFor(`/api-${ws.slug}`, 1, 5000)
    const readOnly = h.client({ authorization: `Bearer ${await ws.key(['webhooks:read'])}` })
    expect((await readOnly.post(`/api/v1/workspaces/${ws.slug}/webhooks/${made.body.id}/test`)).status).toBe(403)
    const foreign = h.client({ authorization: `Bearer ${await other.key()}` })
    expect((await foreign.post(`/api/v1/workspaces/${other.slug}/webhooks/${made.body.id}/test`)).status).toBe(404)
    await api.patch(`/api/v1/workspaces/${ws.slug}/webhooks/${made.body.id}`, { enabled: false })
    const off = await api.post(`/api/v1/workspaces/${ws.slug}/webhooks/${made.body.id}/test`)
    expect(off.status).toBe(409)
    expect(off.body.code).toBe('CONFLICT')
  })
})

describe('Widget and identity', () => {
  test('the snippet in a code element follows the options; the real widget previews it; members see no key setup', async () => {
    const page = await ws.owner.get(`${settings('widget')}?theme=dark&position=top-left&locale=fr&board=ideas`)
    expect(page.body).toContain('<h1>Widget</h1>')
    expect(page.body).toContain(`<code id="snippet">&lt;script src=&quot;http://localhost:3000/widget.js&quot; data-workspace=&quot;${ws.slug}&quot; data-board=&quot;ideas&quot; data-theme=&quot;dark&quot; data-position=&quot;top-left&quot; data-locale=&quot;fr&quot; async&gt;&lt;/script&gt;</code>`)
    expect(page.body).toContain(`<script src="/widget.js" data-workspace="${ws.slug}" data-board="ideas" data-theme="dark" data-position="top-left" data-locale="fr" async></script>`)
    const csp = page.headers.get('content-security-policy')!
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/)
    for (const [id, language] of [['node', 'Node.js'], ['python', 'Python'], ['ruby', 'Ruby'], ['go', 'Go'], ['php', 'PHP']]) {
      expect(page.body).toContain(`<h4 id="sample-${id}-h">${language}</h4>`)
      expect(page.body).toContain(`<code id="sample-${id}">`)
    }
    const hostile = await ws.owner.get(`${settings('widget')}?theme="><script>alert(1)</script>&board=nope`)
    expect(hostile.body).not.toContain('<script>alert(1)')
    expect(hostile.body).toContain('data-theme="auto"')
    const seen = await member.get(settings('widget'))
    expect(seen.status).toBe(200)
    expect(seen.body).toContain('<code id="snippet">')
    expect(seen.body).not.toContain('Set up identify')
    expect((await submit(member, settings('widget'), `${settings('widget')}/jwt`, { algorithm: 'HS256' })).status).toBe(403)
  })

  test('HS256 set up with the secret shown once; the Node.js sample signs a token the check box accepts; refusals say why', async () => {
    const noConfig = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/jwt-config/check`, { token: 'x.y.z' })
    expect(noConfig.status).toBe(404)
    const made = await submit(ws.owner, settings('widget'), `${settings('widget')}/jwt`, { algorithm: 'HS256', issuer: 'https://app.example' })
    expect(made.status).toBe(201)
    const secret = /id="jwt-secret" class="secret-value" readonly value="([^"]+)"/.exec(made.body)![1]!
    expect(occurrences(made.body, secret)).toBe(1)
    const page = await ws.owner.get(settings('widget'))
    expect(page.body).not.toContain(secret)
    expect((await h.db.select().from(jwtConfigs).where(eq(jwtConfigs.workspaceId, ws.id)))[0]!.secretSealed).not.toContain(secret)

    // The page's own Node.js code, as a customer would paste it into their server.
    const code = /<code id="sample-node">([\s\S]*?)<\/code>/.exec(page.body)![1]!.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')
    const file = join(await mkdtemp(join(tmpdir(), 'chorus-sample-')), 'sign.mjs')
    await writeFile(file, code)
    const { chorusToken } = await import(file) as { chorusToken: (user: object, key?: string) => string }
    const token = chorusToken({ id: 'u-42', email: 'grace@customer.example', name: 'Grace' }, secret)
    const ok = await submit(ws.owner, settings('widget'), `${settings('widget')}/check`, { token })
    expect(ok.status).toBe(200)
    expect(ok.body).toContain('<strong>Accepted.</strong> Identify would sign in <code>u-42</code>')
    const wrong = await submit(ws.owner, settings('widget'), `${settings('widget')}/check`, { token: chorusToken({ id: 'u-42' }, 'not-the-secret') })
    expect(wrong.body).toContain("<strong>Refused:</strong> the signature does not match this workspace&#39;s key")
    expect((await submit(ws.owner, settings('widget'), `${settings('widget')}/check`, { token: 'garbage' })).body).toContain('not a well-formed signed JWT')
    // And identify itself accepts the sample's token.
    const identified = await h.client().post(`/api/v1/workspaces/${ws.slug}/identify`, { token })
    expect(identified.status).toBe(200)

    const api = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/jwt-config/check`, { token: chorusToken({ id: 'u-1' }, 'nope') })
    expect(api.status).toBe(200)
    expect(api.body).toEqual({ accepted: false, reason: "the signature does not match this workspace's key", claims: null })
    expect((await member.post(`/api/v1/workspaces/${ws.slug}/jwt-config/check`, { token })).status).toBe(403)
    expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/jwt-config/check`, { token: 5 })).status).toBe(422)

    const rotated = await submit(ws.owner, settings('widget'), `${settings('widget')}/jwt/rotate`, { confirm: 'yes', overlap: '86400' })
    const next = /id="jwt-secret" class="secret-value" readonly value="([^"]+)"/.exec(rotated.body)![1]!
    expect(next).not.toBe(secret)
    expect(rotated.body).toContain('The previous secret keeps verifying until')
    // During the overlap both verify.
    expect((await submit(ws.owner, settings('widget'), `${settings('widget')}/check`, { token })).body).toContain('Accepted.')
    expect((await submit(ws.owner, settings('widget'), `${settings('widget')}/jwt/rotate`, { overlap: '0' })).status).toBe(422)
  })
})
