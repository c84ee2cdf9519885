import AxeBuilder from '@axe-core/playwright'
import { expect, test, type Browser, type Page } from '@playwright/test'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { E2E_APP_ORIGIN, E2E_HOST_ORIGIN } from './ports.ts'
import { lastMail } from './widget-helpers.ts'

// Issue 35's settings pages in a browser: an owner invites a colleague who accepts from the e-mail,
// makes a key and uses it, wires a webhook to a local receiver (test event, failure, retry), installs the
// widget from the snippet with a token signed by the page's own Node.js code, and axe on every page.

test.setTimeout(180_000)

interface Team { slug: string; email: string; accessToken: string }
const team = async (): Promise<Team> => (await fetch(`${E2E_HOST_ORIGIN}/__e2e/team`, { method: 'POST' })).json() as Promise<Team>
const settings = (t: Team, section: string) => `${E2E_APP_ORIGIN}/dashboard/${t.slug}/settings/${section}`

async function signedIn(browser: Browser, t: Team) {
  const context = await browser.newContext()
  await context.addCookies([{ name: 'access_token', value: t.accessToken, url: E2E_APP_ORIGIN }])
  return context.newPage()
}

/** Reloads until the text shows: deliveries are sent by the background loop, a moment after the click. */
async function reloadUntil(page: Page, check: () => Promise<boolean>) {
  for (let i = 0; i < 40; i++) {
    if (await check()) return
    await page.waitForTimeout(250)
    await page.reload()
  }
  throw new Error('never showed up')
}

test('an invitation to an address the mail server refuses is reported in the form and leaves no pending invitation', async ({ browser }) => {
  const t = await team()
  const owner = await signedIn(browser, t)
  await owner.goto(settings(t, 'members'))
  const refused = `refused-${t.slug}@example.com`
  await owner.getByLabel('E-mail address').fill(refused)
  await owner.getByRole('button', { name: 'Invite' }).click()
  await expect(owner.getByRole('alert')).toContainText('The mail server for this address refused it')
  await expect(owner.getByRole('cell', { name: refused })).toHaveCount(0)
  const results = await new AxeBuilder({ page: owner }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze()
  expect(results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([])
  // Reloaded, the list still has no invitation for it.
  await owner.goto(settings(t, 'members'))
  await expect(owner.getByRole('cell', { name: refused })).toHaveCount(0)
})

test('an owner invites a colleague who accepts from the e-mail, creates a key and uses it, and runs a webhook through failure and retry', async ({ browser }) => {
  const t = await team()
  const owner = await signedIn(browser, t)
  await owner.goto(settings(t, 'members'))
  await expect(owner.getByRole('heading', { level: 1, name: 'Members' })).toBeVisible()
  const invitee = `linus-${t.slug}@example.com`
  await owner.getByLabel('E-mail address').fill(invitee)
  await owner.getByLabel('Role').selectOption('member')
  await owner.getByRole('button', { name: 'Invite' }).click()
  await expect(owner.getByRole('status')).toContainText(`Invitation sent to ${invitee}`)
  await expect(owner.getByRole('cell', { name: invitee })).toBeVisible()

  const link = /https?:\/\/\S*accept-invite\S*/.exec(await lastMail(invitee))![0]
  const colleague = await (await browser.newContext()).newPage()
  await colleague.goto(link)
  await colleague.getByLabel('Your name').fill('Linus')
  await colleague.getByRole('button', { name: 'Accept' }).click()
  await expect(colleague.getByRole('heading', { level: 1, name: 'Inbox' })).toBeVisible()
  await owner.reload()
  await expect(owner.getByRole('rowheader', { name: 'Linus' })).toBeVisible()
  await expect(owner.getByText('No pending invitations.')).toBeVisible()

  await owner.goto(settings(t, 'api-keys'))
  await owner.getByLabel('Name (what uses it, e.g. "CRM sync")').fill('Script')
  await owner.getByRole('checkbox', { name: /boards:read/ }).check()
  await owner.getByRole('button', { name: 'Create key' }).click()
  await expect(owner.getByRole('button', { name: 'Copy' })).toBeVisible()
  const key = await owner.locator('#new-key').inputValue()
  expect(key).toMatch(/^chorus_sk_/)
  const boards = await fetch(`${E2E_APP_ORIGIN}/api/v1/boards`, { headers: { authorization: `Bearer ${key}` } })
  expect(boards.status).toBe(200)
  expect(await boards.json()).toMatchObject([{ slug: 'ideas' }])
  await owner.goto(settings(t, 'api-keys'))
  await expect(owner.locator('#new-key')).toHaveCount(0)
  expect(await owner.content()).not.toContain(key)

  const hook = `/__e2e/hook/${t.slug}`
  await owner.goto(settings(t, 'webhooks'))
  await owner.getByLabel(/^URL/).fill(`${E2E_HOST_ORIGIN}${hook}`)
  await owner.getByRole('checkbox', { name: 'post.created' }).check()
  await owner.getByRole('button', { name: 'Add endpoint' }).click()
  await expect(owner.locator('#new-secret')).toHaveValue(/^whsec_/)
  await owner.getByRole('button', { name: 'Send test event' }).click()
  await expect(owner.getByRole('heading', { level: 1, name: 'Delivery log' })).toBeVisible()
  await reloadUntil(owner, async () => (await owner.getByRole('cell', { name: 'Delivered', exact: true }).count()) === 1)
  await expect(owner.getByRole('cell', { name: 'webhook.test', exact: true })).toBeVisible()

  await fetch(`${E2E_HOST_ORIGIN}${hook}?fail=1`)
  await owner.getByRole('button', { name: 'Send test event' }).click()
  await reloadUntil(owner, async () => (await owner.getByRole('cell', { name: 'Failed', exact: true }).count()) === 1)
  await owner.getByRole('link', { name: 'Failed', exact: true }).click()
  const failed = owner.getByRole('row').filter({ hasText: 'Failed' })
  await expect(failed).toContainText('503')
  await expect(failed).toContainText('receiver is down')
  await fetch(`${E2E_HOST_ORIGIN}${hook}?fail=0`)
  await failed.getByRole('button', { name: /^Retry/ }).click()
  await expect(owner.getByRole('status')).toContainText('Retry queued')
  await reloadUntil(owner, async () => (await owner.getByRole('cell', { name: 'Delivered', exact: true }).count()) === 2)
  const hits = await (await fetch(`${E2E_HOST_ORIGIN}${hook}`)).json() as unknown[]
  expect(hits).toHaveLength(3)
})

test('the widget installed from the snippet identifies a user with a token signed by the page\'s Node.js code; their post reaches the inbox', async ({ browser }) => {
  const t = await team()
  const owner = await signedIn(browser, t)
  await owner.goto(`${settings(t, 'widget')}?board=ideas&theme=light`)
  await expect(owner.getByRole('heading', { level: 1, name: 'Widget' })).toBeVisible()
  await owner.getByLabel('Algorithm').selectOption('HS256')
  await owner.getByRole('button', { name: 'Set up identify' }).click()
  const secret = await owner.locator('#jwt-secret').inputValue()
  const snippet = await owner.locator('code#snippet').textContent()
  expect(snippet).toContain(`data-workspace="${t.slug}"`)
  const file = join(await mkdtemp(join(tmpdir(), 'chorus-node-sample-')), 'sign.mjs')
  await writeFile(file, (await owner.locator('code#sample-node').textContent())!)
  const { chorusToken } = await import(file) as { chorusToken: (user: object, key: string) => string }
  const token = chorusToken({ id: 'cust-7', email: 'grace@customer.example', name: 'Grace Hopper' }, secret)

  await owner.getByLabel('Token (as your server signed it)').fill(token)
  await owner.getByRole('button', { name: 'Check token' }).click()
  await expect(owner.getByRole('status').filter({ hasText: 'Accepted.' })).toBeVisible()
  await owner.getByLabel('Token (as your server signed it)').fill(chorusToken({ id: 'cust-7' }, 'wrong'))
  await owner.getByRole('button', { name: 'Check token' }).click()
  await expect(owner.getByRole('alert').filter({ hasText: 'Refused:' })).toContainText("the signature does not match this workspace's key")

  // The customer's page: the identify snippet with the token from their server, then the one line.
  const identify = (await owner.locator('code#identify-snippet').textContent())!.replace('TOKEN_YOUR_SERVER_SIGNED', token)
  const hostPage = `<!doctype html><html lang="en"><head><title>Customer app</title></head><body><main><h1>Customer app</h1></main>${identify}${snippet}</body></html>`
  const { path } = await (await fetch(`${E2E_HOST_ORIGIN}/__e2e/host`, { method: 'POST', body: hostPage })).json() as { path: string }
  const customer = await (await browser.newContext()).newPage()
  await customer.goto(`${E2E_HOST_ORIGIN}${path}`)
  await customer.getByRole('button', { name: 'Feedback' }).click()
  const panel = customer.getByRole('dialog')
  await expect(panel.getByText(/Grace Hopper/)).toBeVisible()
  await panel.getByLabel('Title').fill('Invoices in PDF')
  await panel.getByRole('button', { name: 'Submit' }).click()
  await expect(panel.getByRole('status').filter({ hasText: 'Thanks! Your idea was posted.' })).toBeVisible()

  await owner.goto(`${E2E_APP_ORIGIN}/dashboard/${t.slug}`)
  await expect(owner.getByRole('link', { name: 'Invoices in PDF' })).toBeVisible()
  await owner.getByRole('link', { name: 'Invoices in PDF' }).click()
  await expect(owner.getByText('By Grace Hopper')).toBeVisible()
})

test('every settings page has no serious or critical axe violation, light and dark, desktop and phone width', async ({ browser }) => {
  const t = await team()
  const owner = await signedIn(browser, t)
  // Something in each list: an endpoint (and its log), a key, an invitation, identify set up.
  await owner.goto(settings(t, 'webhooks'))
  await owner.getByLabel(/^URL/).fill(`${E2E_HOST_ORIGIN}/__e2e/hook/axe-${t.slug}`)
  await owner.getByRole('button', { name: 'Add endpoint' }).click()
  await owner.goto(settings(t, 'api-keys'))
  await owner.getByLabel('Name (what uses it, e.g. "CRM sync")').fill('Axe')
  await owner.getByRole('button', { name: 'Create key' }).click()
  await owner.goto(settings(t, 'members'))
  await owner.getByLabel('E-mail address').fill(`axe-${t.slug}@example.com`)
  await owner.getByRole('button', { name: 'Invite' }).click()
  await owner.goto(settings(t, 'widget'))
  await owner.getByRole('button', { name: 'Set up identify' }).click()
  await owner.goto(settings(t, 'webhooks'))
  const log = await owner.getByRole('link', { name: /^Delivery log of/ }).getAttribute('href')
  const pages: [string, string][] = [['Members', settings(t, 'members')], ['API keys', settings(t, 'api-keys')], ['Webhooks', settings(t, 'webhooks')], ['Delivery log', `${E2E_APP_ORIGIN}${log}`], ['Widget', settings(t, 'widget')]]
  for (const width of [1280, 390]) {
    await owner.setViewportSize({ width, height: 800 })
    for (const [heading, url] of pages) {
      await owner.goto(url)
      await expect(owner.getByRole('heading', { level: 1, name: heading })).toBeVisible()
      for (const colorScheme of ['light', 'dark'] as const) {
        await owner.emulateMedia({ colorScheme })
        const results = await new AxeBuilder({ page: owner }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze()
        const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        expect(serious.map((v) => `${heading} ${width}px ${colorScheme}: ${v.id} ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([])
      }
    }
  }
})
