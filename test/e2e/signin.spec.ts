import AxeBuilder from '@axe-core/playwright'
import { expect, test } from '@playwright/test'
import { E2E_APP_ORIGIN, E2E_HOST_ORIGIN } from './ports.ts'

// The built-in sign-in page in Chromium: usable with JavaScript off, and free of axe violations.

async function lastMail(to: string): Promise<string> {
  for (let i = 0; i < 20; i++) {
    const { text } = await (await fetch(`${E2E_HOST_ORIGIN}/__e2e/mail?to=${encodeURIComponent(to)}`)).json() as { text: string | null }
    if (text) return text
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no e-mail to ${to}`)
}

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false })

  test('signs in with an e-mail link and returns to return_to', async ({ page, context }) => {
    const email = `nojs-${Date.now()}@example.com`
    await page.goto(`${E2E_APP_ORIGIN}/signin?return_to=${encodeURIComponent('/dashboard/ideas')}`)
    await expect(page).toHaveTitle('Sign in · Chorus')
    await page.getByLabel('E-mail address').fill(email)
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
    await expect(page.getByRole('status')).toContainText('Check your inbox')

    const link = /https?:\/\/\S+/.exec(await lastMail(email))![0]
    await page.goto(link)
    await page.getByRole('button', { name: 'Continue' }).click()
    await expect(page).toHaveURL(`${E2E_APP_ORIGIN}/dashboard/ideas`)
    const cookies = await context.cookies(E2E_APP_ORIGIN)
    expect(cookies.find((cookie) => cookie.name === 'access_token')?.httpOnly).toBe(true)

    // The link worked once.
    await page.goto(link)
    await page.getByRole('button', { name: 'Continue' }).click()
    await expect(page.getByRole('alert')).toContainText('invalid, expired or already used')
  })

  test('an address the mail server refuses is reported next to the form, which keeps it for correcting', async ({ page }) => {
    const email = `refused-${Date.now()}@example.com`
    await page.goto(`${E2E_APP_ORIGIN}/signin`)
    await page.getByLabel('E-mail address').fill(email)
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
    await expect(page.getByRole('alert')).toContainText('The mail server for this address refused the e-mail')
    await expect(page.getByLabel('E-mail address')).toHaveValue(email)
  })

  test('an invalid address is reported next to the form', async ({ page }) => {
    await page.goto(`${E2E_APP_ORIGIN}/signin`)
    await page.getByLabel('E-mail address').fill('nobody@nowhere')
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
    await expect(page.getByRole('alert')).toContainText('Enter a valid e-mail address')
  })
})

test('the sign-in page has no axe violations', async ({ page }) => {
  await page.goto(`${E2E_APP_ORIGIN}/signin?error=access_denied`)
  const results = await new AxeBuilder({ page }).analyze()
  expect(results.violations.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([])
})

test('the form answering a refused address has no axe violations', async ({ page }) => {
  await page.goto(`${E2E_APP_ORIGIN}/signin`)
  await page.getByLabel('E-mail address').fill(`refused-axe-${Date.now()}@example.com`)
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
  await expect(page.getByRole('alert')).toContainText('The mail server for this address refused the e-mail')
  const results = await new AxeBuilder({ page }).analyze()
  expect(results.violations.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([])
})
