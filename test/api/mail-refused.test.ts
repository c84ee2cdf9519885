// A mail server that refuses a request's e-mail for good (a real `smtp-server`): an address it refuses at RCPT TO
// (550, no such mailbox) is the caller's 422 on the field that named it; a message it refuses after reading it
// (554, a spam filter) is 502 UPSTREAM_ERROR. Either way nothing is left behind for a message nobody received:
// no live sign-in or invitation link, no pending invitation. (A server that does not answer is 503: mail-timeout.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { authTokens, endUsers, members, users, visitorConfirmations } from '../../server/db/schema/index.ts'
import { workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { signIn } from '../helpers/session.ts'
import { startSmtp, tokenFromMail } from '../helpers/smtp.ts'

let smtp: Awaited<ReturnType<typeof startSmtp>>
let h: Harness
let ws: WorkspaceFixture

beforeAll(async () => {
  smtp = await startSmtp({ reject: (address) => address.startsWith('nobody') })
  h = await startHarness({ SMTP_URL: smtp.url })
  ws = await workspaceFixture(h, undefined, smtp)
}, 60_000)
afterAll(async () => {
  await h?.close()
  await smtp?.close()
})

const tokensFor = (email: string, purpose: 'magic_link' | 'invitation' | 'verify_email') =>
  h.db.select().from(authTokens).where(and(eq(authTokens.email, email), eq(authTokens.purpose, purpose)))
const accountOf = async (email: string) => (await h.db.select().from(users).where(eq(users.email, email)))[0]
const memberRow = async (email: string) => {
  const [row] = await h.db.select({ status: members.status, role: members.role, invitedAt: members.invitedAt }).from(members)
    .innerJoin(users, eq(users.id, members.userId)).where(and(eq(members.workspaceId, ws.id), eq(users.email, email)))
  return row
}

describe('happy', () => {
  test('an address the server takes gets its link, as before', async () => {
    const email = `taken-${ws.slug}@example.com`
    expect((await h.client().post('/api/v1/auth/magic-link', { email })).status).toBe(200)
    expect((await smtp.waitFor(email)).decoded).toContain('auth/magic-link?token=')
    expect(await tokensFor(email, 'magic_link')).toHaveLength(1)
  })
})

describe('errors', () => {
  test('a sign-in link to an address the server refuses is 422 on body.email, and leaves no live token and no account', async () => {
    const email = `nobody-${ws.slug}@example.com`
    const refused = await h.client().post('/api/v1/auth/magic-link', { email })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('550') })
    expect(refused.body.detail).toEqual([{ loc: ['body', 'email'], msg: expect.stringContaining('refused'), type: 'value_error.email_refused' }])
    expect(await tokensFor(email, 'magic_link')).toEqual([])
    // The account the request made for the address goes with it.
    expect(await accountOf(email)).toBeUndefined()
  })

  test('a message the server refuses after reading it (554) is 502 UPSTREAM_ERROR, and leaves no live token', async () => {
    const email = `filtered-${ws.slug}@example.com`
    smtp.refused.add(email)
    const refused = await h.client().post('/api/v1/auth/magic-link', { email })
    expect(refused.status).toBe(502)
    expect(refused.body).toMatchObject({ code: 'UPSTREAM_ERROR', message: 'The e-mail could not be sent: the mail server refused it', detail: 'smtp 554' })
    expect(refused.headers.get('retry-after')).toBeNull()
    expect(await tokensFor(email, 'magic_link')).toEqual([])
    expect(await accountOf(email)).toBeUndefined()
    // Once the server takes it, the same request works, and makes the account.
    smtp.refused.delete(email)
    expect((await h.client().post('/api/v1/auth/magic-link', { email })).status).toBe(200)
    await smtp.waitFor(email)
    const account = await accountOf(email)
    expect(account).toMatchObject({ email, emailVerified: false })
    // A later refusal keeps the account this earlier request made (and the link it sent).
    smtp.refused.add(email)
    expect((await h.client().post('/api/v1/auth/magic-link', { email })).status).toBe(502)
    expect(await accountOf(email)).toEqual(account!)
    expect(await tokensFor(email, 'magic_link')).toHaveLength(1)
    smtp.refused.delete(email)
  })

  test('an invitation to a refused address is 422, and the members list shows no pending invitation', async () => {
    const email = `nobody-invited-${ws.slug}@example.com`
    const refused = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email, role: 'member' })
    expect(refused.status).toBe(422)
    expect(refused.body.detail[0]).toMatchObject({ loc: ['body', 'email'], type: 'value_error.email_refused' })
    expect(await memberRow(email)).toBeUndefined()
    expect(await tokensFor(email, 'invitation')).toEqual([])
    expect(await accountOf(email)).toBeUndefined()
    const list = await ws.owner.get(`/api/v1/workspaces/${ws.slug}/members`)
    expect(list.body.items.map((member: { email: string }) => member.email)).not.toContain(email)
  })

  test('a re-invitation refused (554) gives the earlier invitation back: its role, its date and its working link', async () => {
    const email = `reinvited-${ws.slug}@example.com`
    expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email, role: 'member' })).status).toBe(201)
    const firstLink = tokenFromMail(await smtp.waitFor(email))
    const before = await memberRow(email)
    smtp.refused.add(email)
    const refused = await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email, role: 'admin' })
    expect(refused.status).toBe(502)
    expect(await memberRow(email)).toEqual(before!)
    expect(await tokensFor(email, 'invitation')).toHaveLength(1)
    const accepted = await h.client().post('/api/v1/auth/accept-invite', { token: firstLink, name: 'Reinvited' })
    expect(accepted.status).toBe(200)
    expect(await memberRow(email)).toMatchObject({ status: 'active', role: 'member' })
  })

  test("a widget visitor's claim for a refused address is 422 on body.email, and leaves no live confirmation link", async () => {
    const email = `nobody-visitor-${ws.slug}@example.com`
    const refused = await h.client().post(`/api/v1/public/${ws.slug}/visitors`, { email })
    expect(refused.status).toBe(422)
    expect(refused.body.detail[0]).toMatchObject({ loc: ['body', 'email'], type: 'value_error.email_refused' })
    const confirmations = await h.db.select({ id: visitorConfirmations.id }).from(visitorConfirmations)
      .innerJoin(endUsers, eq(endUsers.id, visitorConfirmations.endUserId)).where(eq(endUsers.email, email))
    expect(confirmations).toEqual([])
    // An address that takes mail gets its claim, as before.
    const taken = await h.client().post(`/api/v1/public/${ws.slug}/visitors`, { email: `visitor-${ws.slug}@example.com` })
    expect(taken.status).toBe(202)
    expect((await smtp.waitFor(`visitor-${ws.slug}@example.com`)).decoded).toContain('confirm')
  })

  test("the verification e-mail to the signed-in user's refused address is 422 on user.email", async () => {
    const email = `verify-later-${ws.slug}@example.com`
    const client = h.client()
    const user = await signIn(h, client, email, smtp)
    await h.db.update(users).set({ emailVerified: false }).where(eq(users.id, user.id))
    // The address starts refusing mail after the account was made (the mailbox was closed).
    await h.db.update(users).set({ email: `nobody-closed-${ws.slug}@example.com` }).where(eq(users.id, user.id))
    const refused = await client.post('/api/v1/auth/resend-verification')
    expect(refused.status).toBe(422)
    expect(refused.body.detail[0]).toMatchObject({ loc: ['user', 'email'], type: 'value_error.email_refused' })
    expect(await tokensFor(`nobody-closed-${ws.slug}@example.com`, 'verify_email')).toEqual([])
  })
})

/** A form post as a browser sends it, with the CSRF token of the page it came from. */
async function submit(client: TestClient, formPage: string, action: string, fields: Record<string, string>) {
  const csrf = /name="csrf" value="([^"]+)"/.exec((await client.get(formPage)).body)?.[1] ?? ''
  return client.call('POST', action, { raw: new URLSearchParams({ csrf, ...fields }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE } })
}

describe('the pages tell it in their forms', () => {
  test('the sign-in page: a refused address (422), a refused message (502), each re-rendering the form', async () => {
    const client = h.client()
    const refusedAddress = await submit(client, '/signin', '/signin', { email: `nobody-page-${ws.slug}@example.com`, return_to: '/dashboard' })
    expect(refusedAddress.status).toBe(422)
    expect(refusedAddress.headers.get('content-type')).toContain('text/html')
    expect(refusedAddress.body).toContain('The mail server for this address refused the e-mail.')
    expect(refusedAddress.body).toContain(`value="nobody-page-${ws.slug}@example.com"`)
    const filtered = `filtered-page-${ws.slug}@example.com`
    smtp.refused.add(filtered)
    const refusedMessage = await submit(client, '/signin', '/signin', { email: filtered, return_to: '/dashboard' })
    expect(refusedMessage.status).toBe(502)
    expect(refusedMessage.body).toContain('The e-mail could not be sent: our mail server refused it.')
    expect(await tokensFor(filtered, 'magic_link')).toEqual([])
  })

  test("the dashboard's invite form: a refused address and a refused message are shown in the form, nothing is left pending", async () => {
    const members = `/dashboard/${ws.slug}/settings/members`
    const refusedAddress = await submit(ws.owner, members, `${members}/invite`, { email: `nobody-form-${ws.slug}@example.com`, role: 'member' })
    expect(refusedAddress.status).toBe(422)
    expect(refusedAddress.body).toContain('The mail server for this address refused it')
    expect(await memberRow(`nobody-form-${ws.slug}@example.com`)).toBeUndefined()
    const filtered = `filtered-form-${ws.slug}@example.com`
    smtp.refused.add(filtered)
    const refusedMessage = await submit(ws.owner, members, `${members}/invite`, { email: filtered, role: 'admin' })
    expect(refusedMessage.status).toBe(502)
    expect(refusedMessage.body).toContain('The e-mail could not be sent: the mail server refused it')
    expect(await memberRow(filtered)).toBeUndefined()
  })
})

describe('security', () => {
  test("a 502 names only the server's reply code, never its text; an invitation still needs an admin", async () => {
    const email = `filtered-again-${ws.slug}@example.com`
    smtp.refused.add(email)
    const refused = await h.client().post('/api/v1/auth/magic-link', { email })
    expect(refused.status).toBe(502)
    expect(JSON.stringify(refused.body)).not.toContain('spam')
    // The refusal path is no way around the role check: a signed-in non-member is 403/404 before any mail is tried.
    const stranger = h.client()
    await signIn(h, stranger, `stranger-${ws.slug}@example.com`, smtp)
    const invite = await stranger.post(`/api/v1/workspaces/${ws.slug}/members`, { email: `nobody-x-${ws.slug}@example.com`, role: 'member' })
    expect([403, 404]).toContain(invite.status)
    expect(await memberRow(`nobody-x-${ws.slug}@example.com`)).toBeUndefined()
  })
})
