import AxeBuilder from '@axe-core/playwright'
import { expect, test, type Page } from '@playwright/test'
import { E2E_APP_ORIGIN as APP } from './ports.ts'
import { lastMail, stored } from './widget-helpers.ts'

// A new team's first day in the dashboard (issue 33), in Chromium: the e-mailed sign-in link from the real
// SMTP catcher, a new workspace, the widget's first post in the inbox, a status change with a message to
// voters, a merged duplicate, three posts labelled at once, and a changelog entry linked to the post and
// published. Once with JavaScript on, driven by the keyboard (in-place updates), and the core path once
// with it off. axe (WCAG 2.1 A/AA) on every page the walk reaches: light and dark, 1280 and 390 px.

test.describe.configure({ timeout: 240_000 })

async function scan(page: Page) {
  const viewport = page.viewportSize()!
  for (const colorScheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      await page.emulateMedia({ colorScheme })
      await page.setViewportSize({ width, height: 800 })
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze()
      const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      expect(serious.map((violation) => `${colorScheme} ${width}px ${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual([])
    }
  }
  await page.emulateMedia({ colorScheme: 'light' })
  await page.setViewportSize(viewport)
}

/** The e-mailed link, opened and confirmed: the browser is signed in and back at /dashboard. */
async function signIn(page: Page, email: string) {
  await page.goto(`${APP}/signin?return_to=${encodeURIComponent('/dashboard')}`)
  await page.getByLabel('E-mail address').fill(email)
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
  await expect(page.getByRole('status')).toContainText('Check your inbox')
  await page.goto(/https?:\/\/\S+/.exec(await lastMail(email))![0])
  await page.getByRole('button', { name: 'Continue' }).click()
  await expect(page).toHaveURL(`${APP}/dashboard`)
  await expect(page.getByRole('heading', { name: 'Your workspaces' })).toBeVisible()
}

/** What the settings pages (issue 35) will do: a board and a label, through the API with the session cookie. */
async function setUp(page: Page, slug: string) {
  const headers = { origin: APP, 'x-workspace': slug }
  expect((await page.request.post(`${APP}/api/v1/workspaces/${slug}/boards`, { headers, data: { name: 'Feature ideas', slug: 'ideas' } })).status()).toBe(201)
  expect((await page.request.post(`${APP}/api/v1/labels`, { headers, data: { name: 'Mobile', slug: 'mobile' } })).status()).toBe(201)
}

/** A post as the widget sends it (the public API the widget calls), from a customer's address. */
async function widgetPost(slug: string, title: string, email: string) {
  const res = await fetch(`${APP}/api/v1/public/${slug}/boards/ideas/posts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title, email }) })
  expect(res.status).toBe(201)
  return ((await res.json()) as { id: string }).id
}

test('a new team\'s first day with the keyboard (JavaScript on, in-place updates); axe on every page', async ({ page }) => {
  const stamp = Date.now().toString(36)
  const slug = `team-${stamp}`
  await signIn(page, `lead-${stamp}@example.com`)
  await scan(page)

  // Create the workspace: typed and submitted from the keyboard.
  await page.getByLabel('Name').focus()
  await page.keyboard.type('Team Rocket')
  await page.getByLabel('Address (slug)').focus()
  await page.keyboard.type(slug)
  await page.keyboard.press('Enter')
  await expect(page.getByRole('heading', { level: 1, name: 'Inbox' })).toBeVisible()
  await expect(page).toHaveURL(new RegExp(`/dashboard/${slug}`))
  await setUp(page, slug)

  for (const title of ['CSV export', 'SSO login', 'Dark theme please']) await widgetPost(slug, title, `fan-${title.length}@customer.example`)
  const voter = `voter-${stamp}@customer.example`
  const first = await widgetPost(slug, 'Dark mode', voter)
  // The customer confirms the address from the e-mail the widget's post sent: a confirmed voter hears back.
  const confirmation = await lastMail(voter)
  const mailbox = await page.context().newPage()
  await mailbox.goto(/https?:\/\/\S*[?&]token=[A-Za-z0-9_-]+/.exec(confirmation)![0])
  await expect(mailbox.locator('body')).toContainText(/confirmed/i)
  await mailbox.close()
  await page.reload()
  const rows = page.locator('table.inbox tbody tr')
  await expect(rows).toHaveCount(4)
  await expect(page.getByRole('link', { name: 'Dark mode', exact: true })).toBeVisible()
  await scan(page)

  // `/` searches, `?` lists the keys, `j` + Enter opens the newest post: the widget's.
  await page.keyboard.press('/')
  await expect(page.getByRole('searchbox', { name: 'Search' })).toBeFocused()
  await page.keyboard.press('Escape')
  await page.keyboard.press('?')
  await expect(page.getByRole('note')).toContainText('j/k move')
  await page.keyboard.press('j')
  await expect(rows.first()).toHaveClass(/current/)
  await page.keyboard.press('Enter')
  await expect(page.getByRole('heading', { level: 1, name: 'Dark mode' })).toBeVisible()
  await scan(page)

  // `s`: the status, with a message to voters; the answer replaces the page in place (no reload).
  await page.evaluate(() => { (window as unknown as { marker: number }).marker = 1 })
  await page.keyboard.press('s')
  await expect(page.getByRole('combobox', { name: 'Status', exact: true })).toBeFocused()
  await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('Planned')
  await page.getByLabel('Message to voters (optional)').focus()
  await page.keyboard.type('On the roadmap for next month')
  await page.getByRole('button', { name: 'Change status' }).focus()
  await page.keyboard.press('Enter')
  await expect(page.getByRole('status')).toContainText('voters will hear about it')
  expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1)
  const changed = (await stored(slug, 'Dark mode')).events.filter((event: { type: string }) => event.type === 'status.changed')
  expect(changed.map((event: { data: { message: string } }) => event.data.message)).toEqual(['On the roadmap for next month'])
  // The voter's e-mail, through the real SMTP server: the new status and the team's message.
  const statusMail = await lastMail(voter, confirmation, 30_000)
  expect(statusMail).toContain('Planned')
  expect(statusMail).toContain('On the roadmap for next month')

  // Merge the duplicate into it: open it from the inbox, `m`, search by title.
  await page.goto(`${APP}/dashboard/${slug}`)
  await page.getByRole('link', { name: 'Dark theme please' }).focus()
  await page.keyboard.press('Enter')
  await expect(page.getByRole('heading', { level: 1, name: 'Dark theme please' })).toBeVisible()
  await page.keyboard.press('m')
  await page.keyboard.type('Dark mode')
  await page.keyboard.press('Enter')
  await expect(page.getByRole('status')).toContainText('Merged')
  expect((await stored(slug, 'Dark theme please')).post.mergedIntoId).toBe(first)

  // Bulk: select three posts with j/x, `l` for the label, apply.
  await page.goto(`${APP}/dashboard/${slug}`)
  await expect(rows).toHaveCount(3)
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press('j')
    await page.keyboard.press('x')
  }
  await expect(page.locator('table.inbox input[type=checkbox]:checked')).toHaveCount(3)
  await page.keyboard.press('l')
  await page.getByLabel('Add label').selectOption('mobile')
  await page.getByRole('button', { name: 'Apply to selected' }).focus()
  await page.keyboard.press('Enter')
  await expect(page.getByRole('status')).toContainText('3 posts changed')
  await expect(page.locator('table.inbox tbody tr', { hasText: 'mobile' })).toHaveCount(3)

  // A saved view, then the changelog: draft with a preview, linked to the post, published.
  await page.getByLabel('Label').first().selectOption('mobile')
  await page.getByRole('button', { name: 'Filter' }).focus()
  await page.keyboard.press('Enter')
  await expect(page).toHaveURL(/label=mobile/)
  await page.locator('summary', { hasText: 'Save these filters as a view' }).click()
  await expect(page.getByLabel('View name')).toBeVisible()
  await page.getByLabel('View name').fill('Mobile')
  await page.getByLabel('View name').press('Enter')
  await expect(page.getByRole('status')).toContainText('View "Mobile" saved')
  await expect(page.getByRole('region', { name: 'Saved views' }).getByRole('link', { name: 'Mobile' })).toBeVisible()

  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Changelog' }).focus()
  await page.keyboard.press('Enter')
  await expect(page.getByRole('heading', { level: 1, name: 'Changelog' })).toBeVisible()
  await scan(page)
  await page.getByLabel('Title').fill('Dark mode is here')
  await page.getByLabel('Text (Markdown)').fill('Switch it on under **Settings**.')
  await page.getByLabel('Linked post ids (space-separated)').fill(first)
  await page.getByRole('button', { name: 'Preview' }).focus()
  await page.keyboard.press('Enter')
  await expect(page.getByRole('region', { name: 'Preview' }).locator('strong')).toHaveText('Settings')
  await expect(page.getByLabel('Title')).toHaveValue('Dark mode is here')
  await page.getByRole('button', { name: 'Save draft' }).focus()
  await page.keyboard.press('Enter')
  await expect(page.getByRole('status')).toContainText('Draft saved')
  await expect(page.getByRole('link', { name: 'Dark mode' })).toBeVisible()
  await scan(page)
  await page.getByRole('button', { name: 'Publish', exact: true }).focus()
  await page.keyboard.press('Enter')
  await expect(page.getByRole('status')).toContainText('Published')
  await expect(page.getByRole('button', { name: 'Unpublish' })).toBeVisible()
  // The voter of the linked post hears that it shipped.
  expect(await lastMail(voter, statusMail, 30_000)).toContain('Dark mode is here')
  expect((await stored(slug, 'Dark mode')).post.statusId).not.toBe((await stored(slug, 'SSO login')).post.statusId)

  if (process.env.CHORUS_SCREENSHOT) {
    await page.setViewportSize({ width: 1100, height: 900 })
    await page.goto(`${APP}/dashboard/${slug}`)
    await page.screenshot({ path: 'docs/dashboard-inbox.png' })
    await page.goto(`${APP}/dashboard/${slug}/posts/${first}`)
    await page.screenshot({ path: 'docs/dashboard-post.png' })
  }
})

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false })

  test('the core path: sign in, workspace, status with a message, merge, bulk label, publish', async ({ page }) => {
    const stamp = `n${Date.now().toString(36)}`
    const slug = `team-${stamp}`
    await signIn(page, `lead-${stamp}@example.com`)
    await page.getByLabel('Name').fill('No Script Co')
    await page.getByLabel('Address (slug)').fill(slug)
    await page.getByRole('button', { name: 'Create workspace' }).click()
    await expect(page.getByRole('heading', { level: 1, name: 'Inbox' })).toBeVisible()
    await setUp(page, slug)
    const dupe = await widgetPost(slug, 'Export as CSV', `a-${stamp}@customer.example`)
    await widgetPost(slug, 'Audit log', `b-${stamp}@customer.example`)
    const first = await widgetPost(slug, 'CSV export', `c-${stamp}@customer.example`)

    await page.reload()
    await page.getByRole('link', { name: 'CSV export' }).click()
    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('Planned')
    await page.getByLabel('Message to voters (optional)').fill('Planned for May')
    await page.getByRole('button', { name: 'Change status' }).click()
    await expect(page.getByRole('status')).toContainText('voters will hear about it')

    await page.goto(`${APP}/dashboard/${slug}/posts/${dupe}`)
    await page.getByLabel('Merge into (post id or search)').fill(first)
    await page.getByRole('button', { name: 'Merge' }).click()
    await expect(page.getByRole('status')).toContainText('Merged')
    expect((await stored(slug, 'Export as CSV')).post.mergedIntoId).toBe(first)

    await page.goto(`${APP}/dashboard/${slug}`)
    for (const box of await page.locator('table.inbox input[type=checkbox]').all()) await box.check()
    await page.getByLabel('Add label').selectOption('mobile')
    await page.getByRole('button', { name: 'Apply to selected' }).click()
    await expect(page.getByRole('status')).toContainText('2 posts changed')

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Changelog' }).click()
    await page.getByLabel('Title').fill('CSV export shipped')
    await page.getByLabel('Text (Markdown)').fill('Find it under *Export*.')
    await page.getByLabel('Linked post ids (space-separated)').fill(first)
    await page.getByRole('button', { name: 'Preview' }).click()
    await expect(page.getByRole('region', { name: 'Preview' }).locator('em')).toHaveText('Export')
    await page.getByRole('button', { name: 'Save draft' }).click()
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await expect(page.getByRole('status')).toContainText('Published')
    await page.getByRole('button', { name: 'Unpublish' }).click()
    await expect(page.getByRole('status')).toContainText('a draft again')
  })
})
