import { createHash, randomBytes } from 'node:crypto'
import { expect, test } from '@playwright/test'
import { E2E_APP_ORIGIN, E2E_HOST_ORIGIN } from './ports.ts'

// The built-in consent page is plain HTML: these tests drive it in Chromium with JavaScript off.
test.use({ javaScriptEnabled: false })

interface Setup { accessToken: string; clientId: string; workspaceId: string; slug: string }

const base64url = (bytes: Buffer) => bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')

async function start(page: import('@playwright/test').Page, scope: string) {
  const setup = await (await fetch(`${E2E_HOST_ORIGIN}/__e2e/oauth`, { method: 'POST' })).json() as Setup
  await page.context().addCookies([{ name: 'access_token', value: setup.accessToken, url: E2E_APP_ORIGIN }])
  const verifier = base64url(randomBytes(32))
  const state = base64url(randomBytes(16))
  const authorize = new URL(`${E2E_APP_ORIGIN}/oauth/authorize`)
  for (const [name, value] of Object.entries({
    response_type: 'code', client_id: setup.clientId, redirect_uri: `${E2E_HOST_ORIGIN}/callback`, scope, state,
    code_challenge: base64url(createHash('sha256').update(verifier).digest()), code_challenge_method: 'S256',
  })) authorize.searchParams.set(name, value)
  await page.goto(authorize.toString())
  return { setup, verifier, state }
}

test('consent without JavaScript: the page names the app as unverified, a scope is unticked, Allow returns a code', async ({ page }) => {
  const { setup, verifier, state } = await start(page, 'posts:read posts:write')
  await expect(page.getByRole('heading', { name: /Connect Pocket Assistant to Chorus/ })).toBeVisible()
  await expect(page.getByText('Unverified app')).toBeVisible()
  await expect(page.getByText(/you will be sent to 127\.0\.0\.1/)).toBeVisible()
  await expect(page.getByRole('radio', { name: /Acme OAuth/ })).toBeChecked()
  await page.getByRole('checkbox', { name: /Create, change, merge and delete posts/ }).uncheck()
  await page.getByRole('button', { name: 'Allow' }).click()
  await expect(page.getByText('Back in the app')).toBeVisible()

  const callback = new URL(page.url())
  expect(callback.origin + callback.pathname).toBe(`${E2E_HOST_ORIGIN}/callback`)
  expect(callback.searchParams.get('state')).toBe(state)
  expect(callback.searchParams.get('iss')).toBe(E2E_APP_ORIGIN)
  const token = await fetch(`${E2E_APP_ORIGIN}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: setup.clientId, code: callback.searchParams.get('code')!, redirect_uri: `${E2E_HOST_ORIGIN}/callback`, code_verifier: verifier }),
  })
  expect(token.status).toBe(200)
  expect((await token.json()).scope).toBe('posts:read')
})

test('Deny sends the user back with access_denied', async ({ page }) => {
  const { state } = await start(page, 'posts:read')
  await page.getByRole('button', { name: 'Deny' }).click()
  await expect(page.getByText('Back in the app')).toBeVisible()
  const callback = new URL(page.url())
  expect(callback.searchParams.get('error')).toBe('access_denied')
  expect(callback.searchParams.get('state')).toBe(state)
})
