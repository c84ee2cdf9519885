import AxeBuilder from '@axe-core/playwright'
import { expect, test, type BrowserContext, type Page } from '@playwright/test'
import { E2E_APP_ORIGIN, E2E_HOST_ORIGIN } from './ports.ts'

// The settings pages of issue 35 (boards, integrations, branding, workspace data, account) in Chromium:
// chat connected through the test provider's authorize page, a board and a label made through the
// pages, the brand colour reaching the portal, and axe on every page in light and dark, desktop and phone.

const SECTIONS = ['boards', 'integrations', 'branding', 'data', 'account'] as const

/** A fresh workspace whose owner is signed in in this browser context. */
async function signedInOwner(context: BrowserContext) {
  const setup = await (await fetch(`${E2E_HOST_ORIGIN}/__e2e/oauth`, { method: 'POST' })).json() as { accessToken: string; slug: string }
  await context.addCookies([{ name: 'access_token', value: setup.accessToken, url: E2E_APP_ORIGIN, httpOnly: true, sameSite: 'Lax' }])
  return setup.slug
}
const settings = (slug: string, section: string) => `${E2E_APP_ORIGIN}/dashboard/${slug}/settings/${section}`

async function expectNoSeriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).analyze()
  const serious = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
  expect(serious.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`)).toEqual([])
}

test('an admin connects chat through the provider and maps a channel', async ({ page, context }) => {
  const slug = await signedInOwner(context)
  await page.goto(settings(slug, 'integrations'))
  await expect(page.getByRole('heading', { level: 1, name: 'Integrations' })).toBeVisible()
  await expect(page.locator('#chat-status')).toHaveText('Not connected')
  await page.getByRole('button', { name: 'Connect chat' }).click()
  // The provider's authorize page sends the browser straight back with a code and the state.
  await expect(page).toHaveURL(new RegExp(`/dashboard/${slug}/settings/integrations\\?done=`))
  await expect(page.getByRole('status')).toHaveText('Chat connected')
  await expect(page.locator('#chat-status')).toHaveText('Connected to Acme & Co')
  await page.getByLabel('Channel', { exact: true }).selectOption({ label: '#feedback' })
  await page.getByRole('group', { name: 'Events to post' }).getByLabel('post.created').check()
  await page.getByRole('button', { name: 'Add mapping' }).click()
  await expect(page.getByRole('status')).toHaveText('Mapping added')
  await expect(page.getByRole('button', { name: 'Remove mapping to #feedback' })).toBeVisible()
})

test('a board is created and a label added through the pages', async ({ page, context }) => {
  const slug = await signedInOwner(context)
  await page.goto(settings(slug, 'boards'))
  await page.getByLabel('Board name').fill('Roadmap ideas')
  await page.getByLabel('Board address (slug)').fill('roadmap-ideas')
  await page.getByRole('button', { name: 'Create board' }).click()
  await expect(page.getByRole('status')).toHaveText('Board “Roadmap ideas” created')
  await expect(page.getByRole('heading', { level: 3, name: 'Roadmap ideas' })).toBeVisible()
  await page.getByLabel('Label name').fill('Design')
  await page.getByRole('button', { name: 'Add label' }).click()
  await expect(page.getByRole('status')).toHaveText('Label “Design” added')
  await expect(page.getByRole('heading', { level: 3, name: 'Design' })).toBeVisible()
  // The board is on the portal.
  await page.goto(`${E2E_APP_ORIGIN}/portal/${slug}`)
  await expect(page.getByText('Roadmap ideas').first()).toBeVisible()
})

test('the brand colour set on Branding is the portal\'s accent', async ({ page, context }) => {
  const slug = await signedInOwner(context)
  await page.goto(settings(slug, 'branding'))
  await expect(page.getByRole('heading', { level: 1, name: 'Branding' })).toBeVisible()
  await page.locator('input#brand-color').fill('#0f766e')
  await page.getByRole('button', { name: 'Save colour' }).click()
  await expect(page.getByRole('status')).toHaveText('Brand colour set to #0f766e')
  await expect(page.locator('#contrast')).toContainText('White text on the colour (buttons): 5.5:1, passes AA')
  await page.goto(`${E2E_APP_ORIGIN}/portal/${slug}`)
  const accent = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim())
  expect(accent).toBe('#0f766e')
})

for (const colorScheme of ['light', 'dark'] as const) {
  for (const width of [1280, 390]) {
    test(`axe: every settings page, ${colorScheme}, ${width} px`, async ({ page, context }) => {
      test.setTimeout(180_000)
      const slug = await signedInOwner(context)
      await page.setViewportSize({ width, height: 900 })
      await page.emulateMedia({ colorScheme })
      for (const section of SECTIONS) {
        await page.goto(settings(slug, section))
        await expect(page.locator('h1')).toBeVisible()
        await expectNoSeriousViolations(page)
      }
      // The inbox with its onboarding checklist.
      await page.goto(`${E2E_APP_ORIGIN}/dashboard/${slug}`)
      await expect(page.getByRole('heading', { name: 'Get started' })).toBeVisible()
      await expectNoSeriousViolations(page)
    })
  }
}
