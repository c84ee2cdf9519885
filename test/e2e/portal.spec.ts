import AxeBuilder from '@axe-core/playwright'
import { expect, test, type Browser, type BrowserContext, type Page } from '@playwright/test'
import { SignJWT } from 'jose'
import { E2E_APP_ORIGIN, E2E_HOST_ORIGIN } from './ports.ts'

// The public portal in Chromium, with JavaScript off and on: every page, its forms, an identified
// visitor, a phone-width layout, and axe-core (WCAG 2 A/AA) on each page.

interface Seeded { slug: string; workspaceId: string; secret: string; postId: string }

async function seed(): Promise<Seeded> {
  const response = await fetch(`${E2E_HOST_ORIGIN}/__e2e/portal`, { method: 'POST' })
  return response.json() as Promise<Seeded>
}

const customerToken = (secret: string, claims: Record<string, unknown>) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(secret))

const pagesOf = (ws: Seeded) => ({
  home: `${E2E_APP_ORIGIN}/portal/${ws.slug}`,
  board: `${E2E_APP_ORIGIN}/portal/${ws.slug}/boards/ideas`,
  post: `${E2E_APP_ORIGIN}/portal/${ws.slug}/posts/${ws.postId}`,
  roadmap: `${E2E_APP_ORIGIN}/portal/${ws.slug}/roadmap`,
  changelog: `${E2E_APP_ORIGIN}/portal/${ws.slug}/changelog`,
})

const HEADINGS: Record<string, string> = { home: 'Acme feedback', board: 'Feature ideas', post: 'Slack alerts', roadmap: 'Roadmap', changelog: 'Changelog' }

/** What no portal page may show: the private board, its post, the internal note, any e-mail address. */
async function expectNothingPrivate(page: Page) {
  const text = await page.locator('body').innerText()
  const markup = await page.content()
  expect(text).not.toContain('Secret acquisition')
  expect(text).not.toContain('INTERNAL')
  expect(text).not.toContain('secret launch')
  expect(markup).not.toContain('roadmap-internal')
  expect(markup).not.toMatch(/[\w.+-]+@[\w-]+\.(example|com)/)
}

async function scan(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze()
  const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
  expect(serious.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual([])
}

const copies = new WeakMap<Page, Promise<Page>>()
const opened: BrowserContext[] = []
test.afterEach(async () => {
  for (const context of opened.splice(0)) await context.close()
})

/**
 * axe runs as script in the page, which a JavaScript-off page cannot: there, the same address is opened in a
 * script-enabled copy with the visitor's cookies (the markup is the same: the script only enhances). One copy
 * per test page, reused. New contexts inherit the test's options, so script is switched on explicitly.
 */
async function expectAccessible(page: Page, browser: Browser, javaScriptEnabled: boolean, colorScheme: 'light' | 'dark' = 'light') {
  if (javaScriptEnabled) return scan(page)
  let pending = copies.get(page)
  if (!pending) {
    pending = (async () => {
      const context = await browser.newContext({ javaScriptEnabled: true, storageState: await page.context().storageState() })
      opened.push(context)
      return context.newPage()
    })()
    copies.set(page, pending)
  }
  const copy = await pending
  await copy.emulateMedia({ colorScheme })
  if (copy.url() !== page.url()) await copy.goto(page.url())
  await scan(copy)
}

for (const javaScriptEnabled of [false, true]) {
  test.describe(`JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, () => {
    test.use({ javaScriptEnabled })
    // axe scans every page in two colour schemes: minutes, not the default 20 s, on a busy two-core machine.
    test.setTimeout(360_000)

    test('every page shows its content, nothing private, and has no serious axe violation (light and dark)', async ({ page, browser }) => {
      const ws = await seed()
      for (const [name, url] of Object.entries(pagesOf(ws))) {
        await page.goto(url)
        await expect(page.getByRole('heading', { level: 1, name: HEADINGS[name] })).toBeVisible()
        await expect(page.getByRole('navigation', { name: 'Portal' })).toBeVisible()
        await expect(page.getByRole('main')).toBeVisible()
        await expectNothingPrivate(page)
        for (const colorScheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme })
          await expectAccessible(page, browser, javaScriptEnabled, colorScheme)
        }
        await page.emulateMedia({ colorScheme: 'light' })
      }
      await page.goto(pagesOf(ws).board)
      await expect(page.getByRole('heading', { level: 3 }).getByRole('link', { name: 'Dark mode' })).toBeVisible()
      await expect(page.getByRole('link', { name: '3 votes. Vote for Dark mode' })).toBeVisible()
      await page.goto(pagesOf(ws).post)
      await expect(page.getByText('We need this for on-call.')).toBeVisible()
      await expect(page.getByRole('heading', { name: 'Status history' })).toBeVisible()
      await page.goto(pagesOf(ws).roadmap)
      await expect(page.getByRole('region', { name: /In progress/ }).getByRole('link', { name: 'Bulk edit' })).toBeVisible()
      await expect(page.getByRole('region', { name: /Complete/ }).getByRole('link', { name: 'Faster search' })).toBeVisible()
      await page.goto(pagesOf(ws).changelog)
      await expect(page.getByRole('heading', { level: 2, name: 'Faster search is here' })).toBeVisible()
      await expect(page.getByRole('article').getByRole('link', { name: 'Faster search' })).toBeVisible()
      await expect(page.locator('link[rel=alternate][type="application/atom+xml"]')).toHaveAttribute('href', `${E2E_APP_ORIGIN}/api/v1/public/${ws.slug}/changelog/feed.atom`)
      await page.goto(`${E2E_APP_ORIGIN}/portal/${ws.slug}/boards/roadmap-internal`)
      await expect(page.getByRole('heading', { level: 1, name: 'Page not found' })).toBeVisible()
      await expectAccessible(page, browser, javaScriptEnabled)
    })

    test('an anonymous visitor posts an idea, votes and comments through the forms', async ({ page }) => {
      const ws = await seed()
      await page.goto(pagesOf(ws).board)
      // A refused form says why, in the page, and keeps what was typed.
      await page.getByLabel('Title').fill('Offline mode')
      await page.getByLabel('Details (optional)').fill('For trains and planes')
      await page.getByLabel('Your e-mail address').fill('not-an-address')
      await page.getByLabel('Your e-mail address').evaluate((input: HTMLInputElement) => input.setAttribute('type', 'text'))
      await page.getByRole('button', { name: 'Post idea' }).click()
      await expect(page.getByRole('alert')).toHaveText('Enter a valid e-mail address, like name@example.com.')
      await expect(page.getByLabel('Title')).toHaveValue('Offline mode')
      await expect(page.getByLabel('Your e-mail address')).toHaveAttribute('aria-invalid', 'true')
      // The answer to a POST cannot be fetched again; with script on, the same page is scanned in place.
      if (javaScriptEnabled) await scan(page)

      await page.getByLabel('Your e-mail address').fill('pat@customer.example')
      await page.getByRole('button', { name: 'Post idea' }).click()
      // The address is not confirmed yet: the page says so, and the browser now holds that visitor's session.
      await expect(page).toHaveURL(/\/posts\/post_[0-9a-z]+\?done=posted&confirm=email$/)
      await expect(page.getByRole('status')).toHaveText('Thank you! Your idea is posted. We sent you an e-mail: click its link to confirm your address, so your feedback counts as yours.')
      await expect(page.getByRole('heading', { level: 1, name: 'Offline mode' })).toBeVisible()
      // No part of the address is shown in public (docs/security.md#end-user-identity).
      await expect(page.getByRole('article').getByText(/· Anonymous ·/)).toBeVisible()
      await expect(page.getByRole('article').getByText(/pat/)).toHaveCount(0)

      // Signed in as that visitor, the forms no longer ask for the address.
      await expect(page.getByLabel('Your e-mail address')).toHaveCount(0)
      const vote = page.getByRole('button', { name: /Vote for Offline mode$/ })
      await vote.click()
      await expect(vote).toHaveAttribute('aria-pressed', 'true')
      if (javaScriptEnabled) await expect(page.locator('#live')).toHaveText('Vote added')
      else await expect(page.getByRole('status')).toHaveText('Your vote is counted.')
      await page.reload()
      await expect(page.getByText('1 person voted for this.')).toBeVisible()

      await page.getByLabel('Add a comment').fill('Also on ferries')
      await page.getByRole('button', { name: 'Comment' }).click()
      await expect(page.getByRole('status')).toHaveText('Your comment is posted.')
      await expect(page.getByText('Also on ferries')).toBeVisible()
      await expectNothingPrivate(page)
    })

    test('an identified visitor arrives with ?sso_token=, votes from the list and posts as themselves', async ({ page, context, browser }) => {
      const ws = await seed()
      const token = await customerToken(ws.secret, { sub: `cust-${javaScriptEnabled}`, name: 'Grace Hopper', email: 'grace@customer.example' })
      await page.goto(`${pagesOf(ws).board}?sso_token=${token}`)
      // The token left the address bar; the session lives in an HttpOnly cookie of this portal.
      await expect(page).toHaveURL(pagesOf(ws).board)
      const [cookie] = (await context.cookies()).filter((entry) => entry.name === 'chorus_portal')
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: `/portal/${ws.slug}` })
      await expect(page.getByText('Signed in as Grace Hopper.')).toBeVisible()

      const vote = page.getByRole('button', { name: /Vote for Dark mode$/ })
      await expect(vote).toHaveAttribute('aria-pressed', 'false')
      await vote.click()
      await expect(vote).toHaveAttribute('aria-pressed', 'true')
      await expect(vote).toHaveAccessibleName('4 votes. Vote for Dark mode')
      if (javaScriptEnabled) await expect(page.locator('#live')).toHaveText('Vote added')
      else await expect(page.getByRole('status')).toHaveText('Your vote is counted.')

      await page.getByLabel('Title').fill('SAML login')
      await expect(page.getByLabel('Your e-mail address')).toHaveCount(0)
      await page.getByRole('button', { name: 'Post idea' }).click()
      await expect(page.getByRole('heading', { level: 1, name: 'SAML login' })).toBeVisible()
      await expect(page.getByText('Grace Hopper ·')).toBeVisible()
      await expectNothingPrivate(page)
      await expectAccessible(page, browser, javaScriptEnabled)
    })

    test('phone width (390 px): no page scrolls sideways', async ({ page }) => {
      const ws = await seed()
      await page.setViewportSize({ width: 390, height: 844 })
      for (const url of Object.values(pagesOf(ws))) {
        await page.goto(url)
        const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
        expect(widths.scroll).toBeLessThanOrEqual(widths.client)
        expect(widths.client).toBe(390)
      }
    })
  })
}

// Always rendered and checked; written over docs/portal-*.png only with CHORUS_SCREENSHOT=1.
test('screenshots of each portal page for the README', async ({ page }) => {
  test.setTimeout(120_000)
  const ws = await seed()
  await page.setViewportSize({ width: 1100, height: 760 })
  for (const [name, url] of Object.entries(pagesOf(ws))) {
    await page.goto(url)
    await expect(page.getByRole('heading', { level: 1, name: HEADINGS[name] })).toBeVisible()
    const image = await page.screenshot({ path: process.env.CHORUS_SCREENSHOT ? `docs/portal-${name}.png` : `test-results/portal-${name}.png` })
    expect(image.byteLength).toBeGreaterThan(10_000)
  }
})
