import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { sessions, workspaces } from '../../server/db/schema/index.ts'
import { workspaceFixture } from '../helpers/fixtures.ts'
import { startHarness, type Harness } from '../helpers/harness.ts'
import { signIn } from '../helpers/session.ts'

let h: Harness
beforeAll(async () => (h = await startHarness({ SUPERADMIN_EMAILS: 'root@example.com' })), 60_000)
afterAll(() => h.close())

describe('superadmin: happy paths', () => {
  test('sets a workspace subscription', async () => {
    const ws = await workspaceFixture(h)
    const root = h.client()
    await signIn(h, root, 'root@example.com')
    const res = await root.patch(`/api/v1/superadmin/workspaces/${ws.slug}/subscription`, { plan: 'business', subscription_status: 'past_due', past_due_since: '2026-11-20T00:00:00.000Z', comped: true })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ plan: 'business', subscription_status: 'past_due', past_due_since: '2026-11-20T00:00:00.000Z', comped: true })
    const [row] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(row).toMatchObject({ plan: 'business', comped: true })
  })

  test('impersonation: a single-use token becomes a 1-hour session as the target that records the actor and cannot refresh', async () => {
    const target = h.client()
    const targetUser = await signIn(h, target, 'customer@example.com')
    const root = h.client()
    const rootUser = await signIn(h, root, 'root@example.com')
    const minted = await root.post(`/api/v1/superadmin/users/${targetUser.id}/impersonate`)
    expect(minted.status).toBe(200)
    const [, payload] = minted.body.token.split('.')
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')))
    expect(claims).toMatchObject({ act_as: targetUser.id, actor: rootUser.id })

    const support = h.client()
    const applied = await support.post('/api/v1/auth/impersonate/apply', { token: minted.body.token })
    expect(applied.status).toBe(200)
    expect(applied.body.email).toBe('customer@example.com')
    expect(support.jar.has('refresh_token')).toBe(false)
    expect((await support.get('/api/v1/auth/me')).body.id).toBe(targetUser.id)

    const [session] = await h.db.select().from(sessions).where(eq(sessions.impersonatorId, rootUser.id))
    expect(session?.userId).toBe(targetUser.id)
    expect(session!.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(3600_000)
    expect((await support.post('/api/v1/auth/refresh')).status).toBe(401)
    expect((await h.client().post('/api/v1/auth/impersonate/apply', { token: minted.body.token })).status).toBe(401)
  })

})

describe('superadmin: errors', () => {
  test('bad subscription changes are 422 and change nothing; an unknown workspace is 404', async () => {
    const ws = await workspaceFixture(h)
    const root = h.client()
    await signIn(h, root, 'root@example.com')
    const bodies = [{ plan: 'platinum' }, {}, { comped: 'yes' }, { past_due_since: 'yesterday' }, { subscription_status: 'active', extra: 1 }]
    for (const body of bodies) {
      const res = await root.patch(`/api/v1/superadmin/workspaces/${ws.slug}/subscription`, body)
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 422, code: 'VALIDATION_ERROR' })
    }
    const [row] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(row).toMatchObject({ plan: 'startup', subscriptionStatus: 'trialing', comped: false })
    const missing = await root.patch('/api/v1/superadmin/workspaces/nope-nope/subscription', { comped: false })
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe('NOT_FOUND')
  })

  test('impersonating an unknown user is 404', async () => {
    const root = h.client()
    await signIn(h, root, 'root@example.com')
    const res = await root.post('/api/v1/superadmin/users/usr_0000000000000000000000000/impersonate')
    expect(res.status).toBe(404)
    expect(res.body.code).toBe('NOT_FOUND')
  })

  test('an impersonation token that is missing or not a string is 422', async () => {
    for (const body of [{}, { token: 42 }, { token: '' }]) {
      const res = await h.client().post('/api/v1/auth/impersonate/apply', body)
      expect(res.status).toBe(422)
    }
  })
})

describe('superadmin: security', () => {
  test('an API key, even with every scope, cannot reach the superadmin routes', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key()
    const res = await h.client({ authorization: `Bearer ${key}` }).patch(`/api/v1/superadmin/workspaces/${ws.slug}/subscription`, { comped: true })
    expect(res.status).toBe(403)
    expect(res.body.code).toBe('DASHBOARD_ONLY')
    const [row] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(row?.comped).toBe(false)
  })

  test('non-superadmins are refused; forged impersonation tokens are refused', async () => {
    const user = h.client()
    const me = await signIn(h, user, 'plain@example.com')
    const ws = await workspaceFixture(h)
    expect((await user.patch(`/api/v1/superadmin/workspaces/${ws.slug}/subscription`, { comped: true })).status).toBe(403)
    expect((await user.post(`/api/v1/superadmin/users/${me.id}/impersonate`)).status).toBe(403)
    expect((await h.client().post(`/api/v1/superadmin/users/${me.id}/impersonate`)).status).toBe(401)
    const forged = ['eyJhbGciOiJub25lIn0', btoa(JSON.stringify({ act_as: me.id, actor: me.id, jti: 'x' })), ''].join('.')
    expect((await h.client().post('/api/v1/auth/impersonate/apply', { token: forged })).status).toBe(401)
  })
})
