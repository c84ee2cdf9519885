// The roadmap and what's-new tabs: read-only lists, each of whose posts opens in the ideas tab.
import { h } from './dom.ts'
import type { Words } from './i18n.ts'
import type { Entry, HttpError, Page, Post } from './public-api.ts'

export interface TabContext {
  get<T>(path: string): Promise<T>
  t(key: keyof Words, arg?: string): string
  date(iso: string): string
  openPost(id: string): void
}

const postButton = (tab: TabContext, post: { id: string; title: string }) =>
  h('button', { type: 'button', class: 't', onclick: () => void tab.openPost(post.id) }, post.title)

/** Fills `into` with the roadmap's columns; false when it could not be read (the tab tries again next time). */
export async function renderRoadmap(tab: TabContext, into: HTMLElement): Promise<boolean> {
  const { t } = tab
  try {
    const { groups } = await tab.get<{ groups: { status_kind: 'planned' | 'in_progress' | 'complete'; total: number; items: Post[] }[] }>('/roadmap')
    into.replaceChildren(...groups.map((group) => h('section', { 'aria-labelledby': `cw-rm-${group.status_kind}` },
      h('h3', { id: `cw-rm-${group.status_kind}` }, `${t(group.status_kind)} (${group.total})`),
      group.items.length
        ? h('ul', {}, ...group.items.map((post) => h('li', {}, h('div', {}, postButton(tab, post), h('p', { class: 'muted' }, `${post.votes} ${post.votes === 1 ? t('vote1') : t('votes')}`)))))
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
        entry.posts?.length ? h('ul', {}, ...entry.posts.map((post) => h('li', {}, postButton(tab, post)))) : '')
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
