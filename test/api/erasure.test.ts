import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { rowsOf } from '../../server/db/client.ts'
import { events, notificationEvents, posts, webhookDeliveries, webhookDeliveryLogs, webhooks, workspaces } from '../../server/db/schema/index.ts'
import { newId } from '../../server/lib/ids.ts'
import { notifySubscribers } from '../../server/modules/notifications/fanout.ts'
import { addMember, boardFixture, labelFixture, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { signIn } from '../helpers/session.ts'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_PRIVATE: 'true' })
}, 60_000)
afterAll(() => h.close())

type Reference = { table_name: string; column_name: string; referenced: string; on_delete: string }

/** Every foreign-key column that references users or workspaces, read from the catalog (so a table added later is included). */
async function referencesTo(): Promise<Reference[]> {
  return rowsOf<Reference>(await h.db.execute(sql`
    select cl.relname::text as table_name, a.attname::text as column_name, ref.relname::text as referenced, c.confdeltype::text as on_delete
    from pg_constraint c
    join pg_class cl on cl.oid = c.conrelid
    join pg_namespace n on n.oid = cl.relnamespace
    join pg_class ref on ref.oid = c.confrelid
    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
    where c.contype = 'f' and n.nspname = 'public' and ref.relname in ('users', 'workspaces')
    order by 1, 2`))
}

/** Tables whose foreign keys still point at the deleted id: [] when the cascade covered everything. */
async function rowsReferencing(referenced: 'users' | 'workspaces', id: string) {
  const left: string[] = []
  for (const ref of (await referencesTo()).filter((row) => row.referenced === referenced)) {
    const [row] = rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from ${sql.identifier(ref.table_name)} where ${sql.identifier(ref.column_name)} = ${id}`))
    if (row!.n) left.push(`${ref.table_name}.${ref.column_name}`)
  }
  return left
}

/** Every text or JSON column of every table, read from the catalog, that still contains `needle` anywhere. */
async function columnsNaming(needle: string) {
  const columns = rowsOf<{ table_name: string; column_name: string }>(await h.db.execute(sql`
    select c.table_name::text as table_name, c.column_name::text as column_name
    from information_schema.columns c join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.data_type in ('text', 'character varying', 'jsonb', 'json')`))
  expect(columns.length).toBeGreaterThan(50)
  const hits: string[] = []
  for (const column of columns) {
    const [row] = rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from ${sql.identifier(column.table_name)} where strpos(lower(${sql.identifier(column.column_name)}::text), ${needle.toLowerCase()}) > 0`))
    if (row!.n) hits.push(`${column.table_name}.${column.column_name}`)
  }
  return hits
}

const count = async (table: string, where: ReturnType<typeof sql>) =>
  rowsOf<{ n: number }>(await h.db.execute(sql`select count(*)::int as n from ${sql.identifier(table)} where ${where}`))[0]!.n

/** A workspace with something in every table: members, an invitation, boards, labels, posts by a key, a member and an end user, comments, votes, a webhook with a pending delivery and a log, notifications, idempotency records, intake mail. */
async function populatedWorkspace(name: string) {
  const ws = await workspaceFixture(h)
  await ws.owner.patch(`/api/v1/workspaces/${ws.slug}`, { name })
  await boardFixture(h, ws.id, 'ideas')
  await labelFixture(h, ws.id, 'ux')
  const key = await ws.key()
  const api = h.client({ authorization: `Bearer ${key}` })
  const member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
  const admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
  expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: `invitee-${ws.slug}@example.com`, role: 'member' })).status).toBe(201)
  expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/notifications/subscriptions`, { events: ['post.created', 'comment.created'], channel: 'email' })).status).toBe(201)
  const webhook = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['post.created'] })
  expect(webhook.status).toBe(201)

  const byKey = await api.post('/api/v1/boards/ideas/posts', { title: `Post in ${name}`, labels: ['ux'] }, { headers: { 'idempotency-key': `k-${ws.slug}` } })
  expect(byKey.status).toBe(201)
  const byMember = await member.client.post('/api/v1/boards/ideas/posts', { title: 'By a member' }, { headers: { 'x-workspace': ws.slug } })
  expect(byMember.status).toBe(201)
  const byEndUser = await h.client().post(`/api/v1/public/${ws.slug}/boards/ideas/posts`, { title: 'By an end user', email: `customer-${ws.slug}@example.com` })
  expect(byEndUser.status).toBe(201)
  expect((await api.post(`/api/v1/posts/${byKey.body.id}/comments`, { body: 'A comment', email: `customer-${ws.slug}@example.com` })).status).toBe(201)
  expect((await member.client.post(`/api/v1/posts/${byKey.body.id}/votes`, {}, { headers: { 'x-workspace': ws.slug } })).status).toBe(200)
  expect((await api.post(`/api/v1/posts/${byKey.body.id}/votes`, { email: `customer-${ws.slug}@example.com` })).status).toBe(200)
  // Fan-out and a delivery attempt, as the runner would make them.
  const outbox = (await h.db.select().from(events).where(eq(events.workspaceId, ws.id))).map((event) => ({ ...event, createdAt: event.createdAt.toISOString() }))
  await notifySubscribers(h.database.sql, outbox)
  await h.db.insert(webhookDeliveries).values({ webhookId: webhook.body.id, eventId: outbox[0]!.id })
  await h.db.insert(webhookDeliveryLogs).values({ id: newId('deliveryLog'), webhookId: webhook.body.id, eventId: outbox[0]!.id, eventType: outbox[0]!.type, attempt: 1, success: false, durationMs: 3, responseBody: name })
  const token = (await ws.owner.get(`/api/v1/workspaces/${ws.slug}`)).body.email_intake_token
  const mail = `From: Mailer <mailer-${ws.slug}@example.com>\r\nSubject: By e-mail\r\nMessage-ID: <m-${ws.slug}@example.com>\r\n\r\nHello\r\n`
  expect((await h.app.handle(new Request(`http://localhost:3000/api/v1/inbound/email/${token}`, { method: 'POST', headers: { 'content-type': 'message/rfc822' }, body: mail }))).status).toBe(200)
  return { ws, key, api, member, admin, postId: byKey.body.id as string }
}

describe('the catalog', () => {
  test('every foreign key to users or workspaces cascades or sets null, so deletion can never be blocked', async () => {
    const refs = await referencesTo()
    const tables = new Set(refs.map((ref) => ref.table_name))
    for (const table of ['members', 'sessions', 'posts', 'comments', 'votes', 'webhooks', 'events', 'inbound_emails', 'email_outbox', 'notification_events']) expect(tables).toContain(table)
    expect(refs.filter((ref) => ref.on_delete !== 'c' && ref.on_delete !== 'n')).toEqual([])
  })

  test('every workspace_id and user_id column has such a foreign key', async () => {
    const columns = rowsOf<{ table_name: string; column_name: string }>(await h.db.execute(sql`
      select table_name::text as table_name, column_name::text as column_name from information_schema.columns
      where table_schema = 'public' and column_name in ('workspace_id', 'user_id')`))
    const covered = new Set((await referencesTo()).map((ref) => `${ref.table_name}.${ref.column_name}`))
    expect(columns.map((c) => `${c.table_name}.${c.column_name}`).filter((name) => !covered.has(name))).toEqual([])
  })
})

describe('workspace deletion', () => {
  let doomed: Awaited<ReturnType<typeof populatedWorkspace>>
  let bystander: Awaited<ReturnType<typeof populatedWorkspace>>
  const doomedName = `Doomed ${Date.now().toString(36)}`

  beforeAll(async () => {
    doomed = await populatedWorkspace(doomedName)
    bystander = await populatedWorkspace(`Bystander ${Date.now().toString(36)}`)
  }, 60_000)

  test('admins get 403 OWNER_ONLY and keys 403 DASHBOARD_ONLY; nothing is deleted', async () => {
    const byAdmin = await doomed.admin.client.delete(`/api/v1/workspaces/${doomed.ws.slug}`)
    expect(byAdmin.status).toBe(403)
    expect(byAdmin.body.code).toBe('OWNER_ONLY')
    const byKey = await doomed.api.delete(`/api/v1/workspaces/${doomed.ws.slug}`)
    expect(byKey.status).toBe(403)
    expect(byKey.body.code).toBe('DASHBOARD_ONLY')
    expect(await h.db.select().from(workspaces).where(eq(workspaces.id, doomed.ws.id))).toHaveLength(1)
  })

  test('the owner deletes it: no row references it or names it, in any table; others are untouched', async () => {
    const before = await count('posts', sql`workspace_id = ${bystander.ws.id}`)
    const res = await doomed.ws.owner.delete(`/api/v1/workspaces/${doomed.ws.slug}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'deleted', id: doomed.ws.id })
    expect(await rowsReferencing('workspaces', doomed.ws.id)).toEqual([])
    expect(await columnsNaming(doomed.ws.id)).toEqual([])
    expect(await columnsNaming(doomedName)).toEqual([])
    expect(await columnsNaming(`invitee-${doomed.ws.slug}@`)).toEqual([])
    expect(await columnsNaming(`customer-${doomed.ws.slug}@`)).toEqual([])
    // The members' accounts are theirs, not the workspace's.
    expect((await doomed.member.client.get('/api/v1/user/profile')).status).toBe(200)
    expect(await count('posts', sql`workspace_id = ${bystander.ws.id}`)).toBe(before)
    expect(await count('webhook_deliveries', sql`webhook_id in (select id from webhooks where workspace_id = ${bystander.ws.id})`)).toBe(1)
    expect((await bystander.api.get(`/api/v1/posts/${bystander.postId}`)).status).toBe(200)
  })

  test('its key is refused at once and the slug is free again', async () => {
    const res = await doomed.api.get('/api/v1/boards')
    expect(res.status).toBe(401)
    expect(res.body.code).toBe('INVALID_API_KEY')
    expect((await doomed.ws.owner.post('/api/v1/workspaces', { name: 'Again', slug: doomed.ws.slug })).status).toBe(201)
  })
})

describe('account deletion', () => {
  let shared: Awaited<ReturnType<typeof populatedWorkspace>>
  let user: TestClient
  let userId: string
  let soloSlug: string
  let soloId: string
  let ownedSlug: string
  const email = `leaver-${Date.now().toString(36)}@example.com`
  const name = `Leaver ${Date.now().toString(36)}`
  let cookieBeforeDeletion = ''

  beforeAll(async () => {
    shared = await populatedWorkspace(`Shared ${Date.now().toString(36)}`)
    const joined = await addMember(h, shared.ws, email, 'member')
    user = joined.client
    userId = joined.userId
    expect((await user.patch('/api/v1/user/profile', { name })).status).toBe(200)
    // Their trail in the shared workspace: a post, a comment, a vote, a notification subscription.
    const post = await user.post('/api/v1/boards/ideas/posts', { title: 'Leaver idea' }, { headers: { 'x-workspace': shared.ws.slug } })
    expect(post.status).toBe(201)
    expect((await user.post(`/api/v1/posts/${shared.postId}/comments`, { body: 'Leaver comment' }, { headers: { 'x-workspace': shared.ws.slug } })).status).toBe(201)
    expect((await user.post(`/api/v1/posts/${shared.postId}/votes`, {}, { headers: { 'x-workspace': shared.ws.slug } })).status).toBe(200)
    expect((await user.post(`/api/v1/workspaces/${shared.ws.slug}/notifications/subscriptions`, { events: ['post.created'], channel: 'in_app' })).status).toBe(201)
    await notifySubscribers(h.database.sql, (await h.db.select().from(events).where(eq(events.workspaceId, shared.ws.id))).map((event) => ({ ...event, createdAt: event.createdAt.toISOString() })))
    // A workspace they alone belong to, and one they own with another member.
    soloSlug = `solo-${Date.now().toString(36)}`
    const solo = await user.post('/api/v1/workspaces', { name: 'Solo', slug: soloSlug })
    soloId = solo.body.id
    await boardFixture(h, soloId, 'ideas')
    expect((await user.post('/api/v1/boards/ideas/posts', { title: 'Solo idea' }, { headers: { 'x-workspace': soloSlug } })).status).toBe(201)
    ownedSlug = `owned-${Date.now().toString(36)}`
    expect((await user.post('/api/v1/workspaces', { name: 'Owned', slug: ownedSlug })).status).toBe(201)
  }, 60_000)

  test('an owner of a workspace with other members gets 409 CONFLICT until ownership is handed over', async () => {
    const partner = h.client()
    const partnerUser = await signIn(h, partner, `partner-${ownedSlug}@example.com`)
    expect((await user.post(`/api/v1/workspaces/${ownedSlug}/members`, { email: `partner-${ownedSlug}@example.com`, role: 'admin' })).status).toBe(201)
    expect((await partner.post(`/api/v1/workspaces/${ownedSlug}/members/accept`)).status).toBe(200)
    const refused = await user.delete('/api/v1/user/account')
    expect(refused.status).toBe(409)
    expect(refused.body.code).toBe('CONFLICT')
    expect(refused.body.message).toContain(ownedSlug)
    expect((await user.get('/api/v1/user/profile')).status).toBe(200)
    expect(await count('workspaces', sql`id = ${soloId}`)).toBe(1)
    const handed = await user.patch(`/api/v1/workspaces/${ownedSlug}/members/${partnerUser.id}`, { role: 'owner' })
    expect(handed.status).toBe(200)
  })

  test('a key cannot reach it', async () => {
    const res = await shared.api.delete('/api/v1/user/account')
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('DASHBOARD_ONLY')
  })

  test('deletion removes the account, its sole workspace and every mention; content elsewhere stays, by a deleted user', async () => {
    const votesBefore = (await shared.api.get(`/api/v1/posts/${shared.postId}`)).body.votes
    cookieBeforeDeletion = [...user.jar].map(([k, v]) => `${k}=${v}`).join('; ')
    const res = await user.delete('/api/v1/user/account')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'deleted', id: userId, deleted_workspaces: [soloId] })
    expect(res.headers.getSetCookie().some((line) => /^access_token=;/.test(line))).toBe(true)

    expect(await rowsReferencing('users', userId)).toEqual([])
    expect(await rowsReferencing('workspaces', soloId)).toEqual([])
    expect(await columnsNaming(email)).toEqual([])
    expect(await columnsNaming(userId)).toEqual([])
    expect(await columnsNaming(name)).toEqual([])

    const [kept] = await h.db.select().from(posts).where(eq(posts.title, 'Leaver idea'))
    const post = await shared.api.get(`/api/v1/posts/${kept!.id}`)
    expect(post.body.author).toEqual({ type: 'deleted', id: null, name: 'Deleted user', email: null })
    const comments = await shared.api.get(`/api/v1/posts/${shared.postId}/comments`)
    expect(comments.body.items.find((c: any) => c.body === 'Leaver comment').author.type).toBe('deleted')
    expect((await shared.api.get(`/api/v1/posts/${shared.postId}`)).body.votes).toBe(votesBefore - 1)
    // The event still says what happened, without who.
    const [event] = await h.db.select().from(events).where(sql`${events.data}->'post'->>'id' = ${kept!.id}`)
    expect((event!.data as any).post.author).toEqual({ type: 'deleted', id: null, name: 'Deleted user', email: null })
    expect(await h.db.select().from(notificationEvents).where(eq(notificationEvents.userId, userId))).toEqual([])
    expect((await shared.api.get(`/api/v1/workspaces/${ownedSlug}`)).status).toBe(404)
    expect(await count('workspaces', sql`slug = ${ownedSlug}`)).toBe(1)
  })

  test('the deleted session is refused at once', async () => {
    expect(cookieBeforeDeletion).toContain('access_token=')
    const res = await user.get('/api/v1/user/profile', { anonymous: true, headers: { cookie: cookieBeforeDeletion } })
    expect(res.status).toBe(401)
    expect((await user.delete('/api/v1/user/account', { anonymous: true, headers: { cookie: cookieBeforeDeletion, 'sec-fetch-site': 'same-origin' } })).status).toBe(401)
  })
})

describe('errors', () => {
  test('without a session, account deletion is 401 and workspace deletion is 401', async () => {
    const anonymous = h.client()
    expect((await anonymous.delete('/api/v1/user/account')).status).toBe(401)
    const ws = await workspaceFixture(h)
    const res = await anonymous.delete(`/api/v1/workspaces/${ws.slug}`)
    expect(res.status).toBe(401)
    expect(await h.db.select().from(webhooks).where(eq(webhooks.workspaceId, ws.id))).toEqual([])
    expect(await count('workspaces', sql`id = ${ws.id}`)).toBe(1)
  })
})
