// The panel's tabs: the tab strip, and the roadmap and what's-new tabs (read-only lists, each of whose
// posts opens in the ideas tab).
import { h } from './dom.ts'
import type { Words } from './i18n.ts'
import { openButton, postSummary } from './panel-posts.ts'
import type { Entry, HttpError, Page, Post } from './public-api.ts'

export interface TabContext {
  get<T>(path: string): Promise<T>
  t(key: keyof Words, arg?: string): string
  date(iso: string): string
  openPost(id: string): void
}

const TAB_NAMES = ['ideas', 'roadmap', 'news'] as const
export type TabName = typeof TAB_NAMES[number]

/**
 * The tab strip over one panel per tab (the arrow keys move along it, mirrored right to left). `select`
 * shows a tab's panel; `onSelect` hears every choice.
 */
export function tabStrip(t: TabContext['t'], dir: string, panels: Record<TabName, HTMLElement>, onSelect: (name: TabName) => void) {
  const tabs = TAB_NAMES.map((name) => h('button', {
    type: 'button', role: 'tab', id: `cw-tab-${name}`, 'aria-controls': `cw-${name}`, 'aria-selected': String(name === 'ideas'), tabindex: name === 'ideas' ? 0 : -1,
    onclick: () => select(name),
  }, t(name)))
  const element = h('div', { role: 'tablist', 'aria-labelledby': 'cw-title' }, ...tabs)
  element.onkeydown = (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key]
    if (!step) return
    const at = tabs.findIndex((tab) => tab.getAttribute('aria-selected') === 'true')
    const next = tabs[(at + (dir === 'rtl' ? -step : step) + tabs.length) % tabs.length]!
    next.click()
    next.focus()
  }
  function select(name: TabName) {
    TAB_NAMES.forEach((each, at) => {
      const on = each === name
      tabs[at]!.setAttribute('aria-selected', String(on))
      tabs[at]!.tabIndex = on ? 0 : -1
      panels[each].hidden = !on
    })
    onSelect(name)
  }
  return { element, select }
}

/** Fills `into` with the roadmap's columns; false when it could not be read (the tab tries again next time). */
export async function renderRoadmap(tab: TabContext, into: HTMLElement): Promise<boolean> {
  const { t } = tab
  try {
    const { groups } = await tab.get<{ groups: { status_kind: 'planned' | 'in_progress' | 'complete'; total: number; items: Post[] }[] }>('/roadmap')
    into.replaceChildren(...groups.map((group) => h('section', { 'aria-labelledby': `cw-rm-${group.status_kind}` },
      h('h3', { id: `cw-rm-${group.status_kind}` }, `${t(group.status_kind)} (${group.total})`),
      group.items.length
        ? h('ul', {}, ...group.items.map((post) => h('li', {}, postSummary(tab.openPost, t, post))))
        : h('p', { class: 'muted' }, t('nothing')))))
    return true
  } catch (failure) {
    into.replaceChildren(h('p', { class: 'error' }, t('failed', (failure as Error).message)))
    return false
  }
}

/** Fills `into` with the latest changelog entries; false when they could not be read. */
export async function renderNews(tab: TabContext, into: HTMLElement): Promise<boolean> {
  const { t } = tab
  try {
    const { items } = await tab.get<Page<Entry>>('/changelog?per_page=20')
    into.replaceChildren(...(items.length ? items.map((entry) => {
      // Rendered from Markdown and sanitised by the server.
      const html = h('div', { class: 'html' })
      html.innerHTML = entry.body_html
      return h('article', { 'aria-labelledby': `cw-e-${entry.id}` }, h('h4', { id: `cw-e-${entry.id}` }, entry.title), h('p', { class: 'muted' }, tab.date(entry.published_at)), html,
        entry.posts?.length ? h('ul', {}, ...entry.posts.map((post) => h('li', {}, openButton(tab.openPost, post)))) : '')
    }) : [h('p', { class: 'muted' }, t('noNews'))]))
    return true
  } catch (failure) {
    // A server without a changelog answers 404: nothing to show, not an error.
    if ((failure as HttpError).status === 404) {
      into.replaceChildren(h('p', { class: 'muted' }, t('noNews')))
      return true
    }
    into.replaceChildren(h('p', { class: 'error' }, t('failed', (failure as Error).message)))
    return false
  }
}
