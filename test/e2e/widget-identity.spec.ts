import { expect, test, type Page } from '@playwright/test'
import { E2E_APP_ORIGIN } from './ports.ts'
import { customerToken, dialog, lastMail, seed, stored, visit } from './widget-helpers.ts'

// Who the visitor is: their own votes after a reload, unconfirmed anonymous e-mail identities, the
// confirmation link from a real SMTP server, and claiming an address confirmed elsewhere.

const linkIn = (text: string) => /https?:\/\/\S*[?&]token=[A-Za-z0-9_-]+/.exec(text)![0]

async function publicPost(slug: string, id: string) {
  return (await fetch(`${E2E_APP_ORIGIN}/api/v1/public/${slug}/posts/${id}`)).json() as Promise<{ verified: boolean; votes: number }>
}

const open = async (page: Page, slug: string) => {
  await (await visit(page, slug)).click()
  return dialog(page)
}

test('an anonymous visitor\'s own votes are shown after a reload, and a second click removes the vote', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode', votes: 2 }, { title: 'CSV export' }] })
  let panel = await open(page, ws.slug)
  await panel.getByLabel('Email').fill('returning@example.com')
  await panel.getByRole('button', { name: 'Vote for Dark mode' }).click()
  await expect(panel.getByRole('button', { name: 'Vote for Dark mode' })).toHaveAttribute('aria-pressed', 'true')

  await page.reload()
  panel = await open(page, ws.slug)
  const vote = panel.getByRole('button', { name: 'Vote for Dark mode' })
  await expect(vote).toHaveAttribute('aria-pressed', 'true')
  await expect(vote).toContainText('3')
  await expect(panel.getByRole('button', { name: 'Vote for CSV export' })).toHaveAttribute('aria-pressed', 'false')
  // The remembered session acts: no e-mail needed, and the click takes the vote back.
  await expect(panel.getByLabel('Email')).toBeHidden()
  await expect(panel.getByText('Posting as returning@example.com')).toBeVisible()
  await vote.click()
  await expect(vote).toHaveAttribute('aria-pressed', 'false')
  await expect(vote).toContainText('2')
  expect((await stored(ws.slug, 'Dark mode')).post.voteCount).toBe(2)

  // "Not you?" forgets the session on this page.
  await panel.getByRole('button', { name: 'Not you?' }).click()
  await expect(panel.getByLabel('Email')).toBeVisible()
  await page.reload()
  panel = await open(page, ws.slug)
  await expect(panel.getByLabel('Email')).toBeVisible()
})

test('an identified user\'s own votes are shown after a reload', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'SAML SSO', votes: 1 }, { title: 'Audit log' }], allowAnonymous: false })
  const token = await customerToken(ws.secret, { sub: 'acme-user-9', email: 'grace@acme.example', name: 'Grace Hopper' })
  await visit(page, ws.slug)
  await page.evaluate((value) => (window as any).Chorus.identify(value), token)
  await page.evaluate(() => (window as any).Chorus.open())
  await dialog(page).getByRole('button', { name: 'Vote for SAML SSO' }).click()
  await expect(dialog(page).getByRole('button', { name: 'Vote for SAML SSO' })).toHaveAttribute('aria-pressed', 'true')

  await page.reload()
  await expect(page.getByRole('button', { name: 'Feedback' })).toBeVisible()
  // The customer's page identifies on every load, and may open the panel first.
  await page.evaluate(() => (window as any).Chorus.open())
  await page.evaluate((value) => (window as any).Chorus.identify(value), token)
  const vote = dialog(page).getByRole('button', { name: 'Vote for SAML SSO' })
  await expect(vote).toHaveAttribute('aria-pressed', 'true')
  await expect(vote).toContainText('2')
  await expect(dialog(page).getByRole('button', { name: 'Vote for Audit log' })).toHaveAttribute('aria-pressed', 'false')
})

test('an anonymous e-mail identity starts unconfirmed, keeps acting, and is confirmed by the link in a real e-mail', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode' }] })
  const email = `new-${Date.now()}@example.com`
  const panel = await open(page, ws.slug)
  await panel.getByLabel('Title').fill('Webhooks for invoices')
  await panel.getByLabel('Email').fill(email)
  await panel.getByRole('button', { name: 'Submit' }).click()
  await expect(panel.getByRole('status').filter({ hasText: 'Thanks! Your idea was posted.' })).toBeVisible()
  await expect(panel.getByRole('status').filter({ hasText: `Check your e-mail (${email}) to confirm your address.` })).toBeVisible()
  await expect(panel.getByText(`Posting as ${email} (unconfirmed)`)).toBeVisible()

  // Still acting, without typing the address again.
  await expect(panel.getByLabel('Email')).toBeHidden()
  await panel.getByRole('button', { name: 'Vote for Dark mode' }).click()
  await expect(panel.getByRole('button', { name: 'Vote for Dark mode' })).toHaveAttribute('aria-pressed', 'true')
  const row = await stored(ws.slug, 'Webhooks for invoices')
  expect(row.author.email).toBe(email)
  expect((await publicPost(ws.slug, row.post.id)).verified).toBe(false)

  // The confirmation e-mail came through SMTP; its link confirms the address.
  const confirm = await page.context().newPage()
  await confirm.goto(linkIn(await lastMail(email)))
  await expect(confirm.locator('body')).toContainText(/confirmed/i)
  await expect.poll(async () => (await publicPost(ws.slug, row.post.id)).verified).toBe(true)
})

test('an address confirmed elsewhere: another browser writes as an unverified stand-in, and the link from the e-mail signs that browser in', async ({ browser, page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode' }] })
  const email = `claim-${Date.now()}@example.com`
  // First visit: post, then confirm the address from the e-mail.
  let panel = await open(page, ws.slug)
  await panel.getByLabel('Title').fill('First idea')
  await panel.getByLabel('Email').fill(email)
  await panel.getByRole('button', { name: 'Submit' }).click()
  await expect(panel.getByRole('status').filter({ hasText: 'Thanks! Your idea was posted.' })).toBeVisible()
  const first = await lastMail(email)
  await page.goto(linkIn(first))

  // Another browser knows nothing of that session: naming the confirmed address is answered like any
  // anonymous write (no oracle), written as an address-less unverified identity, never as the customer.
  const other = await browser.newContext()
  const second = await other.newPage()
  panel = await open(second, ws.slug)
  await panel.getByLabel('Title').fill('Second idea')
  await panel.getByLabel('Email').fill(email)
  await panel.getByRole('button', { name: 'Submit' }).click()
  await expect(panel.getByRole('status').filter({ hasText: 'Thanks! Your idea was posted.' })).toBeVisible()
  await expect(panel.getByText(`Posting as ${email} (unconfirmed)`)).toBeVisible()
  const standIn = await stored(ws.slug, 'Second idea')
  expect(standIn.author.email).toBeNull()
  expect((await publicPost(ws.slug, standIn.post.id)).verified).toBe(false)

  // The write started a claim: the owner's link signs this browser in as them.
  const link = linkIn(await lastMail(email, first))
  const inbox = await other.newPage()
  await inbox.goto(link)
  await expect(panel.getByRole('status').filter({ hasText: 'Address confirmed. Welcome back!' })).toBeVisible({ timeout: 10_000 })
  await expect(panel.getByText(`Posting as ${email}`, { exact: true })).toBeVisible()
  await panel.getByLabel('Title').fill('Third idea')
  await panel.getByRole('button', { name: 'Submit' }).click()
  await expect(panel.getByRole('status').filter({ hasText: 'Thanks! Your idea was posted.' })).toBeVisible()
  const row = await stored(ws.slug, 'Third idea')
  expect(row.author.email).toBe(email)
  expect((await publicPost(ws.slug, row.post.id)).verified).toBe(true)
  await other.close()
})
