import { expect, test } from '@playwright/test'
import { E2E_APP_ORIGIN } from './ports.ts'

// The API reference at /docs with the network cut off: every request that does not go to this
// machine is aborted, as on an air-gapped install, and the reference must still render.

test('renders its operations with every non-local request blocked', async ({ page }) => {
  // Laying out the whole document (about 90 operations) takes a while on a busy CI machine.
  test.setTimeout(150_000)
  const blocked: string[] = []
  const local: string[] = []
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (url.hostname === '127.0.0.1') {
      local.push(url.pathname)
      return route.continue()
    }
    blocked.push(url.href)
    return route.abort('internetdisconnected')
  })
  const violations: string[] = []
  page.on('console', (message) => { if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text()) })

  const response = await page.goto(`${E2E_APP_ORIGIN}/docs`)
  expect(response?.status()).toBe(200)
  await expect(page.getByRole('heading', { name: 'Chorus API' }).first()).toBeVisible({ timeout: 120_000 })
  // Operations by their summaries, from the document this server generated: the first group is open,
  // the others open on a click, the webhook events included.
  await expect(page.getByText('Register an OAuth client (RFC 7591)').first()).toBeVisible({ timeout: 30_000 })
  await page.getByText('Open Group - Posts').first().click()
  await expect(page.getByText('Create a post', { exact: true }).first()).toBeVisible({ timeout: 30_000 })
  await page.getByText('Open Group - Webhook events').first().click()
  await expect(page.getByRole('link', { name: /post\.created delivery/ }).first()).toBeVisible({ timeout: 30_000 })

  expect(blocked).toEqual([])
  expect(violations).toEqual([])
  expect(local).toContain('/api/v1/openapi.json')
  expect(local.some((path) => /^\/docs\/assets\/scalar-[\d.]+\.js$/.test(path))).toBe(true)
})

test('the reference bundle is served from this server with long caching', async ({ request }) => {
  const html = await (await request.get(`${E2E_APP_ORIGIN}/docs`)).text()
  const src = /<script src="([^"]+)"/.exec(html)![1]!
  expect(src).toMatch(/^\/docs\/assets\//)
  expect(html).not.toMatch(/https?:\/\//)
  const bundle = await request.get(`${E2E_APP_ORIGIN}${src}`)
  expect(bundle.status()).toBe(200)
  expect(bundle.headers()['content-type']).toContain('javascript')
  expect(bundle.headers()['cache-control']).toBe('public, max-age=31536000, immutable')
})
