// Posts like the idea being typed, each offered for a vote instead of a duplicate post.
import { h } from './dom.ts'
import type { Words } from './i18n.ts'
import { postSummary } from './panel-posts.ts'
import type { Page, Post } from './public-api.ts'

export interface SimilarContext {
  get<T>(path: string): Promise<T>
  /** The server's similarity engine for a draft (POST /similar): the same ranking as the team's duplicate suggestions. */
  similar(title: string): Promise<Post[]>
  t(key: keyof Words, arg?: string): string
  /** The board the form posts to: searched when the server offers no workspace-wide search. */
  board(): { slug: string } | undefined
  openPost(id: string): void
  /** Votes for `post` instead of posting; true when the visitor now votes for it. */
  voteInstead(post: Post): Promise<boolean>
}

/** The suggestions under the idea form's `title` field: `element` to place, `soon()` on every keystroke. */
export function similarPosts(context: SimilarContext, title: HTMLInputElement) {
  const { t } = context
  const list = h('ul', { 'aria-labelledby': 'cw-similar' })
  const element = h('div', { class: 'similar', hidden: true }, h('p', { class: 'muted', id: 'cw-similar' }, t('similar')), list)
  let timer: ReturnType<typeof setTimeout> | undefined
  let asked = 0

  async function suggest() {
    const q = title.value.trim()
    const mine = ++asked
    if (q.length < 3) {
      element.hidden = true
      return
    }
    // Whole words only: the word still being typed would match nothing yet.
    const words = q.split(/\s+/)
    const whole = /\s$/.test(title.value) || words.length < 2 ? q : words.slice(0, -1).join(' ')
    const query = `q=${encodeURIComponent(whole)}&per_page=5`
    const board = context.board()
    // The similarity engine; on a server without it, the workspace-wide search, else the board's.
    const found = await context.similar(whole).then((items) => ({ items }))
      .catch(() => context.get<Page<Post>>(`/posts?${query}`))
      .catch(() => board ? context.get<Page<Post>>(`/boards/${encodeURIComponent(board.slug)}/posts?${query}`) : { items: [] as Post[] })
      .catch(() => ({ items: [] as Post[] }))
    if (mine !== asked) return
    list.replaceChildren(...found.items.map((post) => h('li', {},
      postSummary(context.openPost, t, post),
      h('button', { type: 'button', class: 'sec', 'aria-label': `${t('voteInstead')}: ${post.title}`, onclick: () => void voteInstead(post) }, t('voteInstead')))))
    element.hidden = found.items.length === 0
  }

  async function voteInstead(post: Post) {
    if (!post.voted && (await context.voteInstead(post))) element.hidden = true
  }

  return {
    element,
    /** Looks again 300 ms after the last keystroke. */
    soon() {
      clearTimeout(timer)
      timer = setTimeout(() => void suggest(), 300)
    },
    hide() {
      element.hidden = true
    },
  }
}
