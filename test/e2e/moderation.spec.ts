import AxeBuilder from '@axe-core/playwright'
import { expect, test, type Page } from '@playwright/test'
import { E2E_APP_ORIGIN as APP } from './ports.ts'
import { lastMail, stored } from './widget-helpers.ts'

// The held queue in the dashboard (docs/moderation.md), whose buttons are plain forms (no script needed):
// a held widget post is listed with its reasons, Approve publishes it (post.created only then) and Reject
// deletes the other. axe (WCAG 2.1 A/AA) on the page.

test.describe.configure({ timeout: 180_000 })

async function signIn(page: Page, email: string) {
  await page.goto(`${APP}/signin?return_to=${encodeURIComponent('/dashboard')}`)
  await page.getByLabel('E-mail address').fill(email)
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
  await page.goto(/https?:\/\/\S+/.exec(await lastMail(email))![0])
  await page.getByRole('button', { name: 'Continue' }).click()
  await expect(page.getByRole('heading', { name: 'Your workspaces' })).toBeVisible()
}

async function widgetPost(slug: string, title: string, email: string) {
  const res = await fetch(`${APP}/api/v1/public/${slug}/boards/ideas/posts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title, email }) })
  expect(res.status).toBe(201)
  return (await res.json()) as { id: string; moderation: string | null }
}

test('held posts are approved or rejected from the Moderation page with plain forms', async ({ page }) => {
  const stamp = Date.now().toString(36)
  const slug = `mod-${stamp}`
  await signIn(page, `mod-${stamp}@example.com`)
  const headers = { origin: APP }
  expect((await page.request.post(`${APP}/api/v1/workspaces`, { headers, data: { name: 'Moderated', slug } })).status()).toBe(201)
  expect((await page.request.post(`${APP}/api/v1/workspaces/${slug}/boards`, { headers, data: { name: 'Feature ideas', slug: 'ideas' } })).status()).toBe(201)
  expect((await page.request.patch(`${APP}/api/v1/workspaces/${slug}`, { headers, data: { settings: { moderation: 'anonymous' } } })).status()).toBe(200)
  const keep = await widgetPost(slug, 'Offline mode please', `keep-${stamp}@customer.example`)
  const drop = await widgetPost(slug, 'Cheap pills here', `drop-${stamp}@customer.example`)
  expect([keep.moderation, drop.moderation]).toEqual(['held', 'held'])

  await page.goto(`${APP}/dashboard/${slug}/moderation`)
  await expect(page.getByRole('heading', { level: 1, name: 'Moderation' })).toBeVisible()
  await expect(page.getByText('2 held, newest first.')).toBeVisible()
  await expect(page.getByText('settings.moderation: anonymous').first()).toBeVisible()
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze()
  expect(results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => violation.id)).toEqual([])

  await page.getByRole('button', { name: 'Approve Offline mode please' }).click()
  await expect(page.getByRole('status')).toContainText('Approved: Offline mode please')
  await page.getByRole('button', { name: 'Reject Cheap pills here' }).click()
  await expect(page.getByRole('status')).toContainText('Rejected')
  await expect(page.getByText('Nothing is waiting for review.')).toBeVisible()

  const approved = await stored(slug, 'Offline mode please')
  expect(approved.post.moderation).toBeNull()
  // The post's own events (the helper lists those carrying the post): announced once, at approval.
  expect(approved.events.map((event) => event.type)).toEqual(['post.created'])
  expect((await fetch(`${APP}/api/v1/public/${slug}/posts/${keep.id}`)).status).toBe(200)
  expect((await fetch(`${APP}/api/v1/public/${slug}/posts/${drop.id}`)).status).toBe(404)
})
