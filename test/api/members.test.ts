import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { members, users } from '../../server/db/schema/index.ts'
import { addMember, workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { lastOutboxMail, signIn } from '../helpers/session.ts'
import { tokenFromMail } from '../helpers/smtp.ts'

let h: Harness
beforeAll(async () => (h = await startHarness()), 60_000)
afterAll(() => h.close())

const memberRow = async (workspaceId: string, userId: string) =>
  (await h.db.select().from(members).where(and(eq(members.workspaceId, workspaceId), eq(members.userId, userId))))[0]

describe('members: happy paths', () => {
  test('invite e-mails a link; accept-invite sets the name, verifies and signs in', async () => {
    const ws = await workspaceFixture(h)
    const invited = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: 'New.Person@Example.com', role: 'admin' })
    expect(invited.status).toBe(201)
    expect(invited.body).toMatchObject({ email: 'new.person@example.com', role: 'admin', status: 'pending', name: null, joined_at: null })
    expect(invited.body.invited_at).toMatch(/Z$/)

    const mail = await lastOutboxMail(h, 'new.person@example.com')
    expect(mail.subject).toContain(`Workspace ${ws.slug}`)
    const invitee = h.client()
    const accepted = await invitee.post('/api/v1/auth/accept-invite', { token: tokenFromMail(mail), name: 'New Person' })
    expect(accepted.status).toBe(200)
    expect(accepted.body).toMatchObject({ email: 'new.person@example.com', name: 'New Person', email_verified: true })
    expect((await invitee.get('/api/v1/auth/me')).status).toBe(200)
    expect(await memberRow(ws.id, invited.body.user_id)).toMatchObject({ status: 'active', role: 'admin' })

    const list = await ws.owner.get(`/api/v1/workspaces/${ws.slug}/members`)
    expect(list.status).toBe(200)
    expect(list.body.total).toBe(2)
    expect(list.body.items.map((m: any) => m.role).sort()).toEqual(['admin', 'owner'])
    expect((await h.client().post('/api/v1/auth/accept-invite', { token: tokenFromMail(mail), name: 'Again' })).status).toBe(401)
  })

  test('pending invitations are listed for the user and accepted by slug', async () => {
    const ws = await workspaceFixture(h)
    await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: 'pending@example.com', role: 'member' })
    const user = h.client()
    await signIn(h, user, 'pending@example.com')
    const invitations = await user.get('/api/v1/user/invitations')
    expect(invitations.status).toBe(200)
    expect(invitations.body.map((w: any) => w.slug)).toContain(ws.slug)
    // Invited is not yet a member.
    expect((await user.get(`/api/v1/workspaces/${ws.slug}`)).status).toBe(404)
    const accepted = await user.post(`/api/v1/workspaces/${ws.slug}/members/accept`)
    expect(accepted.status).toBe(200)
    expect(accepted.body).toMatchObject({ status: 'active', role: 'member' })
    expect((await user.get(`/api/v1/workspaces/${ws.slug}`)).body.role).toBe('member')
    expect((await user.get('/api/v1/user/invitations')).body).toEqual([])
  })

  test('role change, ownership transfer, and removal', async () => {
    const ws = await workspaceFixture(h)
    const m = await addMember(h, ws, `promote-${ws.slug}@example.com`, 'member')
    const promoted = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/members/${m.userId}`, { role: 'admin' })
    expect(promoted.status).toBe(200)
    expect(promoted.body.role).toBe('admin')

    const transfer = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/members/${m.userId}`, { role: 'owner' })
    expect(transfer.status).toBe(200)
    expect(transfer.body.role).toBe('owner')
    expect((await memberRow(ws.id, ws.ownerId))?.role).toBe('admin')
    const owners = await h.db.select().from(members).where(and(eq(members.workspaceId, ws.id), eq(members.role, 'owner')))
    expect(owners).toHaveLength(1)

    const removed = await m.client.delete(`/api/v1/workspaces/${ws.slug}/members/${ws.ownerId}`)
    expect(removed.status).toBe(204)
    expect(await memberRow(ws.id, ws.ownerId)).toBeUndefined()
  })

  test('a member may leave', async () => {
    const ws = await workspaceFixture(h)
    const m = await addMember(h, ws, `leaver-${ws.slug}@example.com`, 'member')
    expect((await m.client.delete(`/api/v1/workspaces/${ws.slug}/members/${m.userId}`)).status).toBe(204)
    expect(await memberRow(ws.id, m.userId)).toBeUndefined()
  })
})

describe('members: errors', () => {
  test('bad invitations: invalid e-mail, owner role, already a member', async () => {
    const ws = await workspaceFixture(h)
    expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: 'nope', role: 'member' })).status).toBe(422)
    expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: 'x@example.com', role: 'owner' })).status).toBe(422)
    expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: 'x@example.com' })).status).toBe(422)
    const me = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: `owner-${ws.slug}@example.com`, role: 'member' })
    expect(me.status).toBe(409)
    expect(me.body.code).toBe('CONFLICT')
    expect((await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/members/${ws.ownerId}`, { role: 'superuser' })).status).toBe(422)
  })

  test('the owner cannot be removed or demoted without a transfer; unknown members are 404', async () => {
    const ws = await workspaceFixture(h)
    const admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
    const remove = await admin.client.delete(`/api/v1/workspaces/${ws.slug}/members/${ws.ownerId}`)
    expect(remove.status).toBe(409)
    const demoteSelf = await ws.owner.patch(`/api/v1/workspaces/${ws.slug}/members/${ws.ownerId}`, { role: 'admin' })
    expect(demoteSelf.status).toBe(409)
    expect((await ws.owner.delete(`/api/v1/workspaces/${ws.slug}/members/usr_nobody`)).status).toBe(404)
    expect((await memberRow(ws.id, ws.ownerId))?.role).toBe('owner')
  })

  test('an expired invitation cannot be accepted', async () => {
    const ws = await workspaceFixture(h)
    await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: 'expired-invite@example.com', role: 'member' })
    const token = tokenFromMail(await lastOutboxMail(h, 'expired-invite@example.com'))
    const { authTokens } = await import('../../server/db/schema/index.ts')
    await h.db.update(authTokens).set({ expiresAt: new Date(Date.now() - 1) }).where(eq(authTokens.email, 'expired-invite@example.com'))
    expect((await h.client().post('/api/v1/auth/accept-invite', { token, name: 'Late' })).status).toBe(401)
    const [user] = await h.db.select().from(users).where(eq(users.email, 'expired-invite@example.com'))
    expect(user?.name).toBeNull()
  })
})

describe('members: security', () => {
  test('members cannot invite or change roles (FORBIDDEN); admins cannot transfer ownership (OWNER_ONLY)', async () => {
    const ws = await workspaceFixture(h)
    const member = await addMember(h, ws, `plain-${ws.slug}@example.com`, 'member')
    const admin = await addMember(h, ws, `adm-${ws.slug}@example.com`, 'admin')
    const invite = await member.client.post(`/api/v1/workspaces/${ws.slug}/members`, { email: 'friend@example.com', role: 'member' })
    expect(invite.status).toBe(403)
    expect(invite.body.code).toBe('FORBIDDEN')
    const promote = await member.client.patch(`/api/v1/workspaces/${ws.slug}/members/${member.userId}`, { role: 'admin' })
    expect(promote.status).toBe(403)
    const steal = await admin.client.patch(`/api/v1/workspaces/${ws.slug}/members/${admin.userId}`, { role: 'owner' })
    expect(steal.status).toBe(403)
    expect(steal.body.code).toBe('OWNER_ONLY')
    const kick = await member.client.delete(`/api/v1/workspaces/${ws.slug}/members/${admin.userId}`)
    expect(kick.status).toBe(403)
    expect((await memberRow(ws.id, admin.userId))?.role).toBe('admin')
  })

  test('API keys cannot reach membership, even with every scope', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key()
    const headers = { authorization: `Bearer ${key}` }
    for (const [method, path] of [['GET', 'members'], ['POST', 'members'], ['DELETE', `members/${ws.ownerId}`]] as const) {
      const res = await h.client().call(method, `/api/v1/workspaces/${ws.slug}/${path}`, { headers, body: method === 'POST' ? { email: 'k@example.com', role: 'member' } : undefined })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('DASHBOARD_ONLY')
    }
  })
})
