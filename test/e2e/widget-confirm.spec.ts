import { expect, test, type Page } from '@playwright/test'
import { E2E_APP_ORIGIN } from './ports.ts'
import { dialog, lastMail, seed, stored, visit } from './widget-helpers.ts'

// The legitimate path of an anonymous visitor, made seamless (issue 41): the panel that wrote follows
// the claim its first write started, so opening the link from the e-mail (in another tab or on another
// device) hands this panel a confirmed session. The unconfirmed session itself never becomes confirmed.

// Each test waits for e-mail and for the panel's claim polls (every 1.5 s): more than the default 20 s on a busy machine.
test.describe.configure({ timeout: 60_000 })

const linkIn = (text: string) => /https?:\/\/\S*[?&]token=[A-Za-z0-9_-]+/.exec(text)![0]

const open = async (page: Page, slug: string) => {
  await (await visit(page, slug)).click()
  return dialog(page)
}

/** The remembered visitor of the panel on `page` (localStorage of the customer's page). */
const rememberedVisitor = (page: Page, slug: string) =>
  page.evaluate((key) => JSON.parse(localStorage.getItem(key) ?? 'null'), `chorus.visitor.${slug}`) as Promise<{ token: string; email: string; verified?: boolean } | null>

async function votedWith(slug: string, postId: string, token: string) {
  const response = await fetch(`${E2E_APP_ORIGIN}/api/v1/public/${slug}/posts/${postId}`, { headers: { authorization: `Bearer ${token}` } })
  return ((await response.json()) as { voted?: boolean }).voted
}

test('vote anonymously, open the link from the e-mail in another tab, come back: the vote is still cast and a new vote needs no address', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode', votes: 2 }, { title: 'CSV export' }] })
  const email = `seamless-${Date.now()}@example.com`
  const panel = await open(page, ws.slug)
  await panel.getByLabel('Email').fill(email)
  const darkMode = panel.getByRole('button', { name: 'Vote for Dark mode' })
  await darkMode.click()
  await expect(darkMode).toHaveAttribute('aria-pressed', 'true')
  await expect(darkMode).toContainText('3')
  await expect(panel.getByText(`Posting as ${email} (unconfirmed)`)).toBeVisible()
  expect((await rememberedVisitor(page, ws.slug))?.verified).toBe(false)

  // Another tab opens the link from the real e-mail.
  const inbox = await page.context().newPage()
  await inbox.goto(linkIn(await lastMail(email)))
  await expect(inbox.locator('body')).toContainText(/confirmed/i)
  await inbox.close()

  // Back in the customer's page: the panel learnt it, holds a confirmed session, and still shows the vote.
  await expect(panel.getByRole('status').filter({ hasText: 'Address confirmed. Welcome back!' })).toBeVisible({ timeout: 10_000 })
  await expect(panel.getByText(`Posting as ${email}`, { exact: true })).toBeVisible()
  await expect(darkMode).toHaveAttribute('aria-pressed', 'true')
  await expect(darkMode).toContainText('3')
  const visitor = (await rememberedVisitor(page, ws.slug))!
  expect(visitor).toMatchObject({ email, verified: true })
  const darkModeRow = await stored(ws.slug, 'Dark mode')
  expect(await votedWith(ws.slug, darkModeRow.post.id, visitor.token)).toBe(true)

  // A new vote needs no address and counts as the confirmed visitor's.
  await expect(panel.getByLabel('Email')).toBeHidden()
  const csv = panel.getByRole('button', { name: 'Vote for CSV export' })
  await csv.click()
  await expect(csv).toHaveAttribute('aria-pressed', 'true')
  const csvRow = await stored(ws.slug, 'CSV export')
  expect(csvRow.post.voteCount).toBe(1)
  expect(await votedWith(ws.slug, csvRow.post.id, visitor.token)).toBe(true)

  // And after a reload both votes are still shown as cast.
  await page.reload()
  const again = await open(page, ws.slug)
  await expect(again.getByRole('button', { name: 'Vote for Dark mode' })).toHaveAttribute('aria-pressed', 'true')
  await expect(again.getByRole('button', { name: 'Vote for CSV export' })).toHaveAttribute('aria-pressed', 'true')
  await expect(again.getByText(`Posting as ${email}`, { exact: true })).toBeVisible()
})

test('on another device, a session that ended because the address was confirmed becomes a clear "confirm here" step, never a silent reset', async ({ browser, page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode' }, { title: 'CSV export' }, { title: 'Audit log' }] })
  const email = `two-devices-${Date.now()}@example.com`
  // Device A writes first: its e-mail carries the link.
  const panel = await open(page, ws.slug)
  await panel.getByLabel('Email').fill(email)
  await panel.getByRole('button', { name: 'Vote for Dark mode' }).click()
  await expect(panel.getByRole('button', { name: 'Vote for Dark mode' })).toHaveAttribute('aria-pressed', 'true')
  const first = await lastMail(email)

  // Device B writes the same day with the same address: an unconfirmed session of its own, no second e-mail.
  const deviceB = await browser.newContext()
  const other = await deviceB.newPage()
  const panelB = await open(other, ws.slug)
  await panelB.getByLabel('Email').fill(email)
  await panelB.getByRole('button', { name: 'Vote for CSV export' }).click()
  await expect(panelB.getByRole('button', { name: 'Vote for CSV export' })).toHaveAttribute('aria-pressed', 'true')

  // The link is opened on device A: A carries on confirmed.
  await page.goto(linkIn(first))
  await expect(page.locator('body')).toContainText(/confirmed/i)

  // Device B's next write meets its ended session: it asks to confirm on this device instead of forgetting the visitor.
  const auditLog = panelB.getByRole('button', { name: 'Vote for Audit log' })
  await auditLog.click()
  await expect(panelB.getByRole('status').filter({ hasText: `${email} is already confirmed. We sent a link there` })).toBeVisible()
  await expect(panelB.getByLabel('Email')).toBeHidden()
  const inboxB = await deviceB.newPage()
  await inboxB.goto(linkIn(await lastMail(email, first)))
  await expect(panelB.getByRole('status').filter({ hasText: 'Address confirmed. Welcome back!' })).toBeVisible({ timeout: 10_000 })
  // The vote asked for goes through once confirmed; the earlier votes of this address show as cast too.
  await expect(auditLog).toHaveAttribute('aria-pressed', 'true')
  await expect(panelB.getByRole('button', { name: 'Vote for CSV export' })).toHaveAttribute('aria-pressed', 'true')
  await expect(panelB.getByRole('button', { name: 'Vote for Dark mode' })).toHaveAttribute('aria-pressed', 'true')
  expect((await stored(ws.slug, 'Audit log')).post.voteCount).toBe(1)
  expect((await rememberedVisitor(other, ws.slug))).toMatchObject({ email, verified: true })
  await deviceB.close()
})
