// How a post shows in the panel's lists: its title as a button that opens it, and its votes in words.
import { h } from './dom.ts'
import type { Words } from './i18n.ts'

type Translate = (key: keyof Words, arg?: string) => string

export const votesWord = (t: Translate, votes: number) => (votes === 1 ? t('vote1') : t('votes'))

export const openButton = (openPost: (id: string) => void, post: { id: string; title: string }) =>
  h('button', { type: 'button', class: 't', onclick: () => void openPost(post.id) }, post.title)

/** The title that opens the post, over its vote count. */
export const postSummary = (openPost: (id: string) => void, t: Translate, post: { id: string; title: string; votes: number }) =>
  h('div', {}, openButton(openPost, post), h('p', { class: 'muted' }, `${post.votes} ${votesWord(t, post.votes)}`))
