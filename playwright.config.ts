import { defineConfig } from '@playwright/test'
import { E2E_HOST_ORIGIN } from './test/e2e/ports.ts'

// Browser tests of the embeddable widget (`npm run test:e2e`). Chromium is Debian's (/usr/bin/chromium,
// installed by .ci/setup-browser); Playwright never downloads a browser of its own here.
export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '**/*.spec.ts',
  fullyParallel: true,
  workers: 2,
  timeout: 20_000,
  expect: { timeout: 5_000 },
  retries: 0,
  forbidOnly: Boolean(process.env.CI),
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    baseURL: E2E_HOST_ORIGIN,
    headless: true,
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
    viewport: { width: 1280, height: 800 },
    trace: 'retain-on-failure',
  },
  webServer: {
    command: 'bun test/e2e/server.ts',
    url: `${E2E_HOST_ORIGIN}/__e2e/ready`,
    timeout: 60_000,
    reuseExistingServer: false,
    stdout: 'pipe',
  },
})
