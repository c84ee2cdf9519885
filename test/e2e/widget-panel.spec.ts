import AxeBuilder from '@axe-core/playwright'
import { expect, test, type Page } from '@playwright/test'
import { E2E_APP_ORIGIN } from './ports.ts'
import { dialog, seed, stored, visit } from './widget-helpers.ts'

// What the panel offers beyond posting and voting: suggestions, detail, boards, paging, tabs,
// branding, languages, the phone sheet and accessibility.

const serious = async (page: Page) => {
  const results = await new AxeBuilder({ page }).include('[data-chorus]').analyze()
  return results.violations.filter((violation) => ['serious', 'critical'].includes(violation.impact ?? '')).map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`)
}

test('duplicate suggestions while typing a title; "vote instead" votes and clears the form', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode for the dashboard', votes: 4 }, { title: 'CSV export' }] })
  await (await visit(page, ws.slug)).click()
  const panel = dialog(page)
  await panel.getByLabel('Email').fill('dup@example.com')
  await panel.getByLabel('Title').pressSequentially('dark mo')
  const suggestions = panel.getByRole('list', { name: /Similar ideas/ })
  await expect(suggestions.getByRole('listitem')).toHaveCount(1)
  await expect(suggestions).toContainText('Dark mode for the dashboard')
  await expect(suggestions).toContainText('4 votes')
  await suggestions.getByRole('button', { name: 'Vote instead: Dark mode for the dashboard' }).click()
  await expect(panel.getByRole('status').filter({ hasText: 'Voted for Dark mode for the dashboard.' })).toBeVisible()
  await expect(panel.getByLabel('Title')).toHaveValue('')
  await expect(suggestions).toBeHidden()
  // The list's own button for that post shows the vote too.
  await expect(panel.getByRole('list', { name: 'Feature ideas' }).getByRole('button', { name: 'Vote for Dark mode for the dashboard' })).toHaveAttribute('aria-pressed', 'true')
  expect((await stored(ws.slug, 'Dark mode for the dashboard')).post.voteCount).toBe(5)
  // Nothing was posted, and a title with no match shows no suggestions.
  await panel.getByLabel('Title').pressSequentially('zzqx nothing like it')
  await page.waitForTimeout(700)
  await expect(suggestions).toBeHidden()
})

test('post detail: body, public comments only, commenting, and back to the list', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'Audit log', body: 'Who changed what, and when.', votes: 2, comments: ['We need this for SOC 2.'], internalComments: ['Internal: big deal for Initech'] }] })
  await (await visit(page, ws.slug)).click()
  const panel = dialog(page)
  await panel.getByRole('button', { name: 'Audit log', exact: true }).click()
  await expect(panel.getByRole('heading', { name: 'Audit log' })).toBeVisible()
  await expect(panel.getByRole('button', { name: 'Back' })).toBeFocused()
  await expect(panel.getByText('Who changed what, and when.')).toBeVisible()
  const comments = panel.getByRole('list', { name: 'Comments' })
  await expect(comments.getByRole('listitem')).toHaveCount(1)
  await expect(comments).toContainText('We need this for SOC 2.')
  await expect(panel).not.toContainText('Initech')

  await panel.getByLabel('Comment', { exact: true }).fill('Also for ISO 27001, please.')
  await panel.getByRole('button', { name: 'Send comment' }).click()
  await expect(panel.getByRole('alert')).toHaveText('Enter your email address first.')
  await expect(panel.getByLabel('Email')).toBeFocused()
  await panel.getByLabel('Email').fill('auditor@example.com')
  await panel.getByRole('button', { name: 'Send comment' }).click()
  await expect(comments.getByRole('listitem')).toHaveCount(2)
  await expect(comments.getByRole('listitem').last()).toContainText('Also for ISO 27001, please.')
  await expect(panel.getByLabel('Comment', { exact: true })).toHaveValue('')
  const id = (await stored(ws.slug, 'Audit log')).post.id
  const post = await (await fetch(`${E2E_APP_ORIGIN}/api/v1/public/${ws.slug}/posts/${id}`)).json() as { comments: { body: string; author: { name: string } }[] }
  expect(post.comments.map((comment) => comment.body)).toEqual(['We need this for SOC 2.', 'Also for ISO 27001, please.'])

  await panel.getByRole('button', { name: 'Back' }).click()
  await expect(panel.getByRole('button', { name: 'Vote for Audit log' })).toBeFocused()
  await expect(panel.getByLabel('Title')).toBeVisible()
})

test('the workspace\'s default board, its heading, and a board switcher', async ({ page }) => {
  const ws = await seed({ defaultBoard: 'ideas', posts: [{ title: 'Dark mode' }], bugs: [{ title: 'Export times out' }] })
  await (await visit(page, ws.slug, { board: '' })).click()
  const panel = dialog(page)
  await expect(panel.getByRole('heading', { name: 'Feature ideas', exact: true })).toBeVisible()
  await expect(panel.getByRole('heading', { name: 'New post in Feature ideas' })).toBeVisible()
  await expect(panel.locator('li .t')).toHaveText(['Dark mode'])
  await expect(panel.getByLabel('Board')).toHaveValue('ideas')

  await panel.getByLabel('Board').selectOption({ label: 'Bugs' })
  await expect(panel.getByRole('heading', { name: 'New post in Bugs' })).toBeVisible()
  await expect(panel.locator('li .t')).toHaveText(['Export times out'])
  await panel.getByLabel('Title').fill('Login loops on Safari')
  await panel.getByLabel('Email').fill('qa@example.com')
  await panel.getByRole('button', { name: 'Submit' }).click()
  await expect(panel.locator('li .t').first()).toHaveText('Login loops on Safari')
  const row = await stored(ws.slug, 'Login loops on Safari')
  expect(row.events[0]!.data.post.board).toBe('bugs')
})

test('without a default board the oldest public board is used (not the first by name), headed by its own name', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode' }], bugs: [{ title: 'Export times out' }] })
  await (await visit(page, ws.slug, { board: '' })).click()
  const panel = dialog(page)
  await expect(panel.getByLabel('Board').locator('option')).toHaveText(['Bugs', 'Feature ideas'])
  await expect(panel.getByRole('heading', { name: 'New post in Feature ideas' })).toBeVisible()
  await expect(panel.locator('li .t')).toHaveText(['Dark mode'])
  await expect(panel).not.toContainText('Suggest an idea')
})

test('more than 50 posts: the first 50, then "Show more" for the rest', async ({ page }) => {
  test.setTimeout(60_000)
  const ws = await seed({ many: 55 })
  await (await visit(page, ws.slug)).click()
  const panel = dialog(page)
  const items = panel.getByRole('list', { name: 'Feature ideas' }).getByRole('listitem')
  await expect(items).toHaveCount(50)
  await panel.getByRole('button', { name: 'Show more' }).click()
  await expect(items).toHaveCount(55)
  await expect(panel.getByRole('button', { name: 'Show more' })).toBeHidden()
  const titles = await items.locator('.t').allTextContents()
  expect(new Set(titles).size).toBe(55)
})

test('Roadmap and What\'s new tabs', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode', status: 'Planned', votes: 3 }, { title: 'CSV export', status: 'In progress' }, { title: 'Open idea' }], news: 'Two things:\n\n- Faster search\n- Keyboard shortcuts' })
  await (await visit(page, ws.slug)).click()
  const panel = dialog(page)
  await expect(panel.getByRole('tab', { name: 'Ideas' })).toHaveAttribute('aria-selected', 'true')
  // A vote button reads naturally: what it does, then the count it shows.
  await expect(panel.getByRole('button', { name: 'Vote for Dark mode, 3 votes' })).toBeVisible()
  await panel.getByRole('tab', { name: 'Roadmap' }).click()
  const roadmap = panel.getByRole('tabpanel', { name: 'Roadmap' })
  await expect(roadmap.getByRole('heading', { name: 'Planned (1)' })).toBeVisible()
  await expect(roadmap.getByRole('region', { name: 'Planned (1)' })).toContainText('Dark mode')
  await expect(roadmap.getByRole('region', { name: 'In progress (1)' })).toContainText('CSV export')
  await expect(roadmap).not.toContainText('Open idea')
  // Arrow keys move between tabs.
  await panel.getByRole('tab', { name: 'Roadmap' }).press('ArrowRight')
  await expect(panel.getByRole('tab', { name: 'What\'s new' })).toBeFocused()
  const news = panel.getByRole('tabpanel', { name: 'What\'s new' })
  await expect(news).toBeVisible()
  await expect(news.getByRole('heading', { name: 'Shipped this week' })).toBeVisible()
  await expect(news).not.toContainText('Loading')
  // The entry's Markdown list keeps its bullets.
  const bullet = news.getByRole('listitem').filter({ hasText: 'Faster search' })
  await expect(bullet).toBeVisible()
  expect(await bullet.evaluate((item) => [getComputedStyle(item).display, getComputedStyle(item).listStyleType])).toEqual(['list-item', 'disc'])
  // A roadmap post opens its detail in the Ideas tab.
  await panel.getByRole('tab', { name: 'Roadmap' }).click()
  await roadmap.getByRole('button', { name: 'Dark mode' }).click()
  await expect(panel.getByRole('tab', { name: 'Ideas' })).toHaveAttribute('aria-selected', 'true')
  await expect(panel.getByRole('heading', { name: 'Dark mode' })).toBeVisible()
})

test('the workspace\'s accent colour on the panel and the launcher, with readable text', async ({ page }) => {
  const ws = await seed({ brandColor: '#facc15', posts: [{ title: 'Dark mode' }] })
  const launcher = await visit(page, ws.slug, { clean: '1' })
  await launcher.click()
  const submit = dialog(page).getByRole('button', { name: 'Submit' })
  await expect(submit).toHaveCSS('background-color', 'rgb(250, 204, 21)')
  // A light accent gets dark text.
  await expect(submit).toHaveCSS('color', 'rgb(0, 0, 0)')
  await expect(launcher).toHaveCSS('background-color', 'rgb(250, 204, 21)')
})

test('languages: data-locale, the browser\'s language, and right-to-left', async ({ browser }) => {
  test.setTimeout(90_000)
  const ws = await seed({ posts: [{ title: 'Dark mode', votes: 1 }] })
  const cases = [
    { locale: 'de', browser: 'en-US', launcher: 'Feedback', title: 'Titel', tab: 'Ideen', dir: 'ltr' },
    { locale: 'ja', browser: 'en-US', launcher: 'フィードバック', title: 'タイトル', tab: 'アイデア', dir: 'ltr' },
    { locale: 'ar', browser: 'en-US', launcher: 'ملاحظات', title: 'العنوان', tab: 'الأفكار', dir: 'rtl' },
    { locale: 'he', browser: 'en-US', launcher: 'משוב', title: 'כותרת', tab: 'רעיונות', dir: 'rtl' },
    { locale: '', browser: 'fr-FR', launcher: 'Avis', title: 'Titre', tab: 'Idées', dir: 'ltr' },
    { locale: '', browser: 'es-MX', launcher: 'Comentarios', title: 'Título', tab: 'Ideas', dir: 'ltr' },
    // A language the widget does not have: English.
    { locale: 'xx', browser: 'pt-BR', launcher: 'Feedback', title: 'Title', tab: 'Ideas', dir: 'ltr' },
  ]
  for (const expected of cases) {
    const context = await browser.newContext({ locale: expected.browser })
    const page = await context.newPage()
    await (await visit(page, ws.slug, expected.locale ? { locale: expected.locale } : {}, expected.launcher)).click()
    const panel = dialog(page)
    await expect(panel.getByLabel(expected.title, { exact: true })).toBeVisible()
    await expect(panel.getByRole('tab', { name: expected.tab })).toBeVisible()
    await expect(panel).toHaveAttribute('dir', expected.dir)
    if (expected.dir === 'rtl') {
      // Right-to-left layout: the vote button sits at the right edge of its row.
      const row = (await panel.getByRole('listitem').first().boundingBox())!
      const vote = (await panel.getByRole('listitem').first().locator('.vote').boundingBox())!
      expect(vote.x + vote.width).toBeGreaterThan(row.x + row.width - 20)
    }
    await context.close()
  }
})

test('on a phone the panel is a full-screen sheet with the form in view at once', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 })
  const ws = await seed({ posts: Array.from({ length: 12 }, (_, i) => ({ title: `Idea number ${i + 1}` })) })
  await (await visit(page, ws.slug)).click()
  const panel = dialog(page)
  await expect(panel.getByRole('listitem')).toHaveCount(12)
  expect(await panel.boundingBox()).toEqual({ x: 0, y: 0, width: 390, height: 844 })
  await expect(panel.getByLabel('Title')).toBeInViewport()
  const title = (await panel.getByLabel('Title').boundingBox())!
  expect(title.y + title.height).toBeLessThan(844 / 2)
  await expect(panel.getByRole('button', { name: 'Close' })).toBeInViewport()
  // Loading the posts did not move what was already on screen.
  expect(await page.evaluate(() => (window as any).__layoutShift)).toBeLessThan(0.01)
})

test('opening the panel and loading its posts causes no layout shift', async ({ page }) => {
  const ws = await seed({ posts: [{ title: 'Dark mode', votes: 3 }, { title: 'CSV export' }] })
  await (await visit(page, ws.slug)).click()
  await expect(dialog(page).getByRole('listitem')).toHaveCount(2)
  await page.waitForTimeout(600)
  // Zero unless the first posts took longer than the panel waits for them (a busy test machine).
  expect(await page.evaluate(() => (window as any).__layoutShift)).toBeLessThan(0.01)
})

test('axe: no serious or critical violation in any tab or view of the open panel', async ({ page }) => {
  test.setTimeout(120_000)
  const ws = await seed({ logo: true, brandColor: '#0f766e', posts: [{ title: 'Dark mode', status: 'Planned', votes: 2, body: 'Please.', comments: ['Yes!'] }, { title: 'Dark theme for mobile' }], bugs: [{ title: 'Crash' }] })
  for (const theme of ['light', 'dark']) {
    await (await visit(page, ws.slug, { theme })).click()
    const panel = dialog(page)
    await expect(panel.getByRole('listitem')).toHaveCount(2)
    await panel.getByLabel('Title').pressSequentially('dark')
    await expect(panel.getByRole('list', { name: /Similar ideas/ })).toBeVisible()
    expect(await serious(page), `${theme}: ideas`).toEqual([])
    await panel.getByRole('list', { name: 'Feature ideas' }).getByRole('button', { name: 'Dark mode', exact: true }).click()
    await expect(panel.getByRole('list', { name: 'Comments' })).toBeVisible()
    expect(await serious(page), `${theme}: detail`).toEqual([])
    await panel.getByRole('tab', { name: 'Roadmap' }).click()
    await expect(panel.getByRole('tabpanel', { name: 'Roadmap' }).getByRole('heading').first()).toBeVisible()
    expect(await serious(page), `${theme}: roadmap`).toEqual([])
    await panel.getByRole('tab', { name: 'What\'s new' }).click()
    await expect(panel.getByRole('tabpanel', { name: 'What\'s new' })).not.toContainText('Loading')
    expect(await serious(page), `${theme}: what's new`).toEqual([])
  }
})
